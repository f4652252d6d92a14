/* fs/ninfer/attrs.h — the user.ninfer.* values that can be long, and their cut
 * (man ninferfs.5, EXTENDED ATTRIBUTES; issue 11, item 9).
 *
 * The kernel hands at most XATTR_SIZE_MAX (65536) bytes to getxattr(2):
 * a longer value is E2BIG and breaks `getfattr -d`.  So:
 *   - user.ninfer.segments longer than NF_XATTR_VALUE_MAX keeps its first
 *     entries, as many as fit together with a last element {"truncated":N}
 *     (N entries left out);
 *   - a string value (name, object, format, layout) longer than
 *     NF_XATTR_STRING_MAX is its first at most NF_XATTR_STRING_KEEP bytes
 *     (whole UTF-8 characters) and "...[cut: N bytes]" (N: its length).
 * The whole value of every attribute cut so is the file
 * xattrs/<path>/<attribute>, placed by fs/tree.c with the predicates
 * below, so the attribute and the file agree by construction.  FUSE-free:
 * the tree build and xattr.c share it. */
#ifndef NF_FS_NINFER_ATTRS_H
#define NF_FS_NINFER_ATTRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/tree.h"

#define NF_XATTR_VALUE_MAX 65536u    /* XATTR_SIZE_MAX of <linux/limits.h> */
#define NF_XATTR_STRING_MAX 4096u
#define NF_XATTR_STRING_KEEP 4000u

enum nf_str_attr { NF_ATTR_NAME, NF_ATTR_OBJECT, NF_ATTR_FORMAT, NF_ATTR_LAYOUT, NF_ATTR_NSTR };
/* "user.ninfer.name", ... */
extern const char *const nf_str_attr_names[NF_ATTR_NSTR];

/* The object whose format/layout/shape describe node `n`, or NULL. */
const struct nf_object *nf_node_object(const struct nf_tree *t, const struct nf_node *n);
/* The string attribute `which` of node `idx`, or NULL when it has none. */
const char *nf_node_string(const struct nf_tree *t, uint32_t idx, enum nf_str_attr which);

/* `s` as the attribute value: a copy, cut when longer than
 * NF_XATTR_STRING_MAX.  NULL on ENOMEM. */
char *nf_attr_string(const char *s, size_t *len);

/* The range map of the payload of view `v` (spans of PIECES views; the
 * source objects, each once when consecutive parts share it, of DECODED
 * views) as a compact JSON list of {file, path, file_offset, length}.
 * max 0: the whole list; otherwise at most `max` bytes, cut with the
 * {"truncated":N} element when the whole does not fit (*cut is set then).
 * Malloc'd and NUL-terminated, or NULL (ENOMEM, a range the map refuses). */
char *nf_segments_json(const struct nf_artifact *a, const struct nf_view *v, size_t max,
		       size_t *len, bool *cut);

/* A bound on the bytes one segment entry of file `f` takes (tree.c: which
 * views need looking at). */
size_t nf_segment_entry_bound(const struct nf_artifact *a, uint32_t f);

#endif
