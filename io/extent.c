/* io/extent.c — the extent table and its map (extent.h). */
#include "io/extent.h"

#include <errno.h>

int nf_extents_check(const struct nf_extents *t)
{
	uint64_t prev_end = 0;

	for (uint32_t i = 0; i < t->n; i++) {
		uint64_t p = nf_extent_logical(t, i), b = nf_extent_bytes(t, i), end, last;

		if (p < prev_end || __builtin_add_overflow(p, b, &end) ||
		    __builtin_add_overflow(nf_extent_data(t, i), b, &last) || end > t->total)
			return -EINVAL;
		prev_end = end;
	}
	return 0;
}

/* The last record with P_i <= x, or -1 when there is none. */
static int64_t last_at_or_below(const struct nf_extents *t, uint64_t x)
{
	uint32_t lo = 0, hi = t->n;   /* the answer is in [lo - 1, hi) */

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (nf_extent_logical(t, mid) <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int64_t)lo - 1;
}

int64_t nf_extents_find(const struct nf_extents *t, uint64_t x)
{
	int64_t i = last_at_or_below(t, x);

	/* records are disjoint: one holding x is the last one starting at or
	 * below it (a zero-length one there holds nothing) */
	if (i < 0 || x - nf_extent_logical(t, (uint32_t)i) >= nf_extent_bytes(t, (uint32_t)i))
		return -1;
	return i;
}

ssize_t nf_extents_map(const struct nf_extents *t, uint64_t offset, uint64_t length,
		       struct nf_segment *segs, size_t max)
{
	/* written without offset + length so that huge values cannot wrap */
	if (t == NULL || offset > t->total || length > t->total - offset)
		return -ERANGE;
	if (length == 0)
		return 0;
	int64_t first = nf_extents_find(t, offset);
	if (first < 0)
		return -ERANGE;
	uint64_t x = offset, end = offset + length;   /* end <= total */
	size_t n = 0;
	for (uint32_t i = (uint32_t)first; x < end; i++) {
		uint64_t p, b, file_end, at;

		if (i >= t->n)
			return -ERANGE;
		p = nf_extent_logical(t, i);
		b = nf_extent_bytes(t, i);
		if (b == 0)
			continue;
		if (x < p)
			return -ERANGE;   /* a gap between two files */
		if (__builtin_add_overflow(p, b, &file_end) ||
		    __builtin_add_overflow(nf_extent_data(t, i), x - p, &at))
			return -EOVERFLOW;
		if (x >= file_end)
			return -ERANGE;   /* not sorted: cannot happen after nf_extents_check */
		uint64_t y = end < file_end ? end : file_end;
		if (n < max)
			segs[n] = (struct nf_segment){.file = i, .file_offset = at, .length = y - x,
						      .dest_offset = x - offset};
		n++;
		x = y;
	}
	return (ssize_t)n;
}
