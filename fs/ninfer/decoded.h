/* fs/ninfer/decoded.h — decoded views: the logical elements of a list of parts,
 * dequantized on the fly, only for the bytes asked for (contract §2,
 * architecture "transformed spans").
 *
 * FUSE-free: the caller supplies a fetcher that reads object-relative byte
 * spans (the daemon's, fs/ninfer/read.c, queues them on the request: the
 * extent map, then one engine read;
 * tests and tools can use pread), so this code is unit-tested without a
 * mount. */
#ifndef NF_FS_NINFER_DECODED_H
#define NF_FS_NINFER_DECODED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codecs/codec.h"
#include "reader/artifact.h"

/* Reads spans[0..n) of object `object` (offsets relative to the object's
 * start) into bufs[i] (spans[i].length bytes each).  Returns 0 or -errno. */
struct nf_fetcher {
	int (*fetch)(void *arg, uint32_t object, const struct nf_span *spans, unsigned n,
		     uint8_t *const *bufs);
	void *arg;
};

/* The output dtype of a decoded view over `parts` when the user asked for
 * `wanted` (f32/bf16/f16): int32 parents stay int32.  Returns 0 and *out,
 * or -EOPNOTSUPP when a parent's format or layout is unknown, -EIO when a
 * parent cannot be interpreted (wrong encoded size, bad shape, forbidden
 * pair), -EINVAL when int32 and float parents are mixed (no one dtype
 * holds both). */
int nf_decoded_dtype(const struct nf_artifact *a, const struct nf_part *parts, uint32_t nparts,
		     enum nf_dtype wanted, enum nf_dtype *out);

/* Bytes [off, off+len) of the decoded view (the parts' elements in order,
 * little-endian `dtype`, nf_dtype_size each), clipped at the end of the
 * view.  Decodes only the elements that overlap the range and fetches only
 * the source spans those need.  Returns the number of bytes written, or a
 * negative errno from the fetcher or the decoder. */
ssize_t nf_decoded_read(const struct nf_artifact *a, const struct nf_part *parts,
			uint32_t nparts, enum nf_dtype dtype, const struct nf_fetcher *f,
			uint64_t off, size_t len, uint8_t *out);

/* Total elements of the parts (overflow-checked by the reader already). */
uint64_t nf_parts_elements(const struct nf_part *parts, uint32_t nparts);

#endif
