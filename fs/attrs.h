/* fs/attrs.h — the cut rule of long extended attribute values (man
 * ninferfs.5, EXTENDED ATTRIBUTES; issue 11, item 9), shared by families.
 *
 * The kernel hands at most XATTR_SIZE_MAX (65536) bytes to getxattr(2):
 * a longer value is E2BIG and breaks `getfattr -d`.  So a family keeps
 * every value within NF_XATTR_VALUE_MAX (the adapter refuses a longer one
 * with E2BIG), and a string value longer than NF_XATTR_STRING_MAX is its
 * first at most NF_XATTR_STRING_KEEP bytes (whole UTF-8 characters) and
 * "...[cut: N bytes]" (N: its length); the whole value of an attribute cut
 * so is a file of the family's tree (NInfer: xattrs/<path>/<attribute>,
 * fs/ninfer/attrs.h).  FUSE-free. */
#ifndef NF_FS_ATTRS_H
#define NF_FS_ATTRS_H

#include <stddef.h>

#define NF_XATTR_VALUE_MAX 65536u    /* XATTR_SIZE_MAX of <linux/limits.h> */
#define NF_XATTR_STRING_MAX 4096u
#define NF_XATTR_STRING_KEEP 4000u

/* `s` as the attribute value: a copy, cut when longer than
 * NF_XATTR_STRING_MAX.  NULL on ENOMEM. */
char *nf_attr_string(const char *s, size_t *len);

#endif
