/* io/extent.h — the extent table: how the backing files of a set make one
 * logical byte space, and the map from a logical range to file segments.
 *
 * File i holds the logical bytes [P_i, P_i + B_i) at file offsets starting
 * at data_offset_i (NInfer, seed §2.2: the entry's payload start, 4096 for
 * parts; a calbin package: its files concatenated, data_offset 0).  The
 * records are sorted by P_i and do not overlap (P_i + B_i <= P_{i+1});
 * zero-length records and gaps between records are allowed (a range that
 * touches a gap is refused, as one outside [0, total] is).  A logical range
 * [offset, offset + length) is cut at every file boundary it crosses; each
 * piece [x, y) becomes the segment (file i, data_offset_i + (x - P_i),
 * y - x, x - offset).  Finding the first file is a binary search: O(log n).
 *
 * The table is the caller's own array of records, read in place: `stride`
 * bytes from one record to the next, and the offsets of the three uint64_t
 * fields in a record (NF_EXTENTS_OF), so that the reader maps straight
 * from its files table and a family can use struct nf_extent.  Nothing is
 * copied or allocated; a table is immutable while it is mapped from, and
 * any number of threads may map from it at once.
 *
 * FUSE-free and dependency-free: the reader (nf_range_map), the daemon's
 * read path and the tools share it. */
#ifndef NF_IO_EXTENT_H
#define NF_IO_EXTENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One piece of a mapped range. */
struct nf_segment {
	uint32_t file;
	uint64_t file_offset;   /* absolute offset in the file */
	uint64_t length;
	uint64_t dest_offset;   /* offset from the start of the requested range */
};

/* A record for tables made for the purpose (a family's own files). */
struct nf_extent {
	uint64_t logical;       /* P_i */
	uint64_t bytes;         /* B_i */
	uint64_t data_offset;   /* the file offset of logical byte P_i */
};

struct nf_extents {
	const void *base;       /* record 0 (NULL when n is 0) */
	size_t stride;          /* bytes from record i to record i + 1 */
	size_t at_logical, at_bytes, at_data;  /* offsets of P_i, B_i, data_offset_i */
	uint32_t n;
	uint64_t total;         /* ranges must lie inside [0, total] */
};

/* The table over `n` records of type `type` at `base`, whose fields
 * `logical`, `bytes` and `data` are P_i, B_i and data_offset_i. */
#define NF_EXTENTS_OF(base_, n_, type, logical, bytes, data, total_)                             \
	((struct nf_extents){.base = (base_), .stride = sizeof(type),                             \
			     .at_logical = offsetof(type, logical), .at_bytes = offsetof(type, bytes), \
			     .at_data = offsetof(type, data), .n = (n_), .total = (total_)})
/* ... over an array of struct nf_extent. */
#define NF_EXTENTS_PLAIN(v, n, total) NF_EXTENTS_OF(v, n, struct nf_extent, logical, bytes, \
						     data_offset, total)

static inline uint64_t nf_extent_field(const struct nf_extents *t, uint32_t i, size_t at)
{
	return *(const uint64_t *)((const char *)t->base + (size_t)i * t->stride + at);
}
static inline uint64_t nf_extent_logical(const struct nf_extents *t, uint32_t i)
{
	return nf_extent_field(t, i, t->at_logical);
}
static inline uint64_t nf_extent_bytes(const struct nf_extents *t, uint32_t i)
{
	return nf_extent_field(t, i, t->at_bytes);
}
static inline uint64_t nf_extent_data(const struct nf_extents *t, uint32_t i)
{
	return nf_extent_field(t, i, t->at_data);
}

/* Whether the table keeps the rules above: records sorted and disjoint,
 * every P_i + B_i and data_offset_i + B_i without wrap, and P_i + B_i <=
 * total.  0, or -EINVAL naming nothing (the caller knows its files). */
int nf_extents_check(const struct nf_extents *t);

/* The file holding logical byte x, or -1 (x in a gap or not below the
 * last record's end).  O(log n). */
int64_t nf_extents_find(const struct nf_extents *t, uint64_t x);

/* Map [offset, offset + length) onto file segments, in order.  Returns the
 * number of segments the range needs (only the first `max` are written:
 * call with max 0 to count), or -ERANGE when the range is not inside
 * [0, total] or touches a gap (length 0 at total is allowed and maps to no
 * segment).  The table is trusted to pass nf_extents_check(); a record that
 * would wrap gives -EOVERFLOW rather than a wrong segment. */
ssize_t nf_extents_map(const struct nf_extents *t, uint64_t offset, uint64_t length,
		       struct nf_segment *segs, size_t max);

#endif
