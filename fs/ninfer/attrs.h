/* fs/ninfer/attrs.h — the user.ninfer.* values that can be long, and where
 * their whole bytes go (man ninferfs.5, EXTENDED ATTRIBUTES; issue 11,
 * item 9).
 *
 * The cut itself is fs/attrs.h's rule; for NInfer:
 *   - user.ninfer.segments longer than NF_XATTR_VALUE_MAX keeps its first
 *     entries, as many as fit together with a last element {"truncated":N}
 *     (N entries left out);
 *   - a string value (name, object, format, layout) longer than
 *     NF_XATTR_STRING_MAX is cut by nf_attr_string.
 * The whole value of every attribute cut so is the file
 * xattrs/<path>/<attribute>, placed by fs/ninfer/tree.c with the
 * predicates below, so the attribute and the file agree by construction.
 * FUSE-free: the tree build and xattr.c share it. */
#ifndef NF_FS_NINFER_ATTRS_H
#define NF_FS_NINFER_ATTRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/attrs.h"
#include "fs/ninfer/views.h"
#include "fs/tree.h"
#include "reader/artifact.h"

enum nf_str_attr { NF_ATTR_NAME, NF_ATTR_OBJECT, NF_ATTR_FORMAT, NF_ATTR_LAYOUT, NF_ATTR_NSTR };
/* "user.ninfer.name", ... */
extern const char *const nf_str_attr_names[NF_ATTR_NSTR];

/* The object whose format/layout/shape describe node `n`, or NULL. */
const struct nf_object *nf_node_object(const struct nf_artifact *a, const struct nf_node *n);
/* The string attribute `which` of node `n`, or NULL when it has none. */
const char *nf_node_string(const struct nf_artifact *a, const struct nf_node *n,
			   enum nf_str_attr which);

/* The range map of the payload of view `v` (spans of PIECES views; the
 * source objects, each once when consecutive parts share it, of DECODED
 * views, whose parts `dv` gives) as a compact JSON list of {file, path,
 * file_offset, length}.
 * max 0: the whole list; otherwise at most `max` bytes, cut with the
 * {"truncated":N} element when the whole does not fit (*cut is set then).
 * Malloc'd and NUL-terminated, or NULL (ENOMEM, a range the map refuses). */
char *nf_segments_json(const struct nf_artifact *a, const struct nf_view *v,
		       const struct nf_dview *dv, size_t max, size_t *len, bool *cut);

/* A bound on the bytes one segment entry of file `f` takes (tree.c: which
 * views need looking at). */
size_t nf_segment_entry_bound(const struct nf_artifact *a, uint32_t f);

#endif
