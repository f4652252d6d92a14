/* fs/ninfer/views.h — the NInfer family's views: which logical payload
 * bytes make a binding's raw leaf, and the family view kinds.
 *
 * Family kinds (fs/view.h: the adapter keeps them, never reads them):
 *   DECODED     the elements of a list of parts dequantized to a dtype,
 *               decoded only for the bytes asked (fs/ninfer/decoded.h); the
 *               node's tag holds the dtype and the errno every read gets (0
 *               when decodable), its role and ref say whose parts;
 *   SAFETENSORS decoded/model.safetensors (fs/ninfer/safetensors.h);
 *   NPY         decoded/npy/...: a DECODED view (the same tag, role and ref)
 *               after an NPY preamble (fs/ninfer/npy.h) of `at` bytes;
 *   USES        uses.json when the reader left it to nf_uses_json() (large
 *               sets): made at the first open() into one copy all opens
 *               share (fs/ninfer/uses.c), the same bytes every time, so
 *               st_size (counted once at mount) stays exact. */
#ifndef NF_FS_NINFER_VIEWS_H
#define NF_FS_NINFER_VIEWS_H

#include <stdint.h>

#include "codecs/codec.h"
#include "fs/tree.h"
#include "fs/view.h"
#include "reader/artifact.h"

enum nf_ninfer_kind {
	NF_VIEW_DECODED = NF_VIEW_FAMILY,
	NF_VIEW_SAFETENSORS,
	NF_VIEW_USES,
	NF_VIEW_NPY,
};

/* A decoded view unpacked: its parts, the output dtype, and the error
 * every read gets when the parts cannot be decoded (-EOPNOTSUPP unknown
 * format or layout, -EIO an object error; 0 when decodable).  `parts` may
 * point at `one` (a whole object): do not copy the struct. */
struct nf_dview {
	const struct nf_part *parts;
	uint32_t nparts;
	enum nf_dtype dtype;
	int error;
	struct nf_part one;
};

/* A binding leaf (contract §2): 0 and *v filled; 1 when the binding has no
 * raw leaf (it will only be under decoded/); -errno on failure. */
int nf_view_binding(struct nf_pieces *p, const struct nf_artifact *a, const struct nf_binding *b,
		    struct nf_view *v);

/* A DECODED view of `parts` as `wanted` (int32 parents stay int32).
 * Returns 0 (an undecodable set of parts gives a view whose reads fail
 * with the error kept in its tag), or 1 when the parts mix int32 and float
 * parents (no view). */
int nf_view_decoded(const struct nf_artifact *a, const struct nf_part *parts, uint32_t nparts,
		    enum nf_dtype wanted, struct nf_view *v);

/* An NPY view of `parts` as `wanted` with the array shape[0..rank) (the
 * record's shape): nf_view_decoded's view after the preamble.  0, or 1
 * (no file) as nf_view_decoded, or when the shape's elements are not the
 * parts' elements. */
int nf_view_npy(const struct nf_artifact *a, const struct nf_part *parts, uint32_t nparts,
		enum nf_dtype wanted, uint32_t rank, const uint64_t *shape, struct nf_view *v);

/* The decoded view of node `n` (role DECODED_OBJECT: the whole object;
 * DECODED_BINDING: the binding's parts), from its packed view `v` (DECODED
 * or NPY). */
void nf_dview_of(const struct nf_artifact *a, const struct nf_node *n, const struct nf_view *v,
		 struct nf_dview *dv);

#endif
