/* reader/rangemap.c — logical payload -> file segments (seed §2.2, §11.2).
 *
 * File i holds the logical bytes [P_i, P_i + B_i) at file offsets starting
 * at data_offset (entry_payload_start for the entry, 4096 for parts).  A
 * logical range [offset, offset+length) is cut at every file boundary it
 * crosses; each piece [x, y) becomes (file i, data_offset + (x - P_i),
 * y - x, x - offset).  This is the only code that knows how files join. */
#include <errno.h>

#include "reader/internal.h"

/* The file holding logical byte x (x < payload_bytes): the last i with
 * P_i <= x.  Every B_i > 0, so the P_i strictly increase. */
static uint32_t file_of(const struct nf_artifact *a, uint64_t x)
{
	uint32_t lo = 0, hi = a->nfiles; /* invariant: P_lo <= x < P_hi */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (a->files[mid].logical_start <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

ssize_t nf_range_map(const struct nf_artifact *a, uint64_t offset, uint64_t length,
		     struct nf_segment *segs, size_t max)
{
	/* seed §11.2: the range lies in [0, payload_bytes]; written without
	 * offset + length so that huge values cannot wrap. */
	if (!a || offset > a->payload_bytes || length > a->payload_bytes - offset)
		return -ERANGE;
	if (length == 0)
		return 0;
	uint64_t x = offset, end = offset + length; /* end <= payload_bytes */
	size_t n = 0;
	for (uint32_t i = file_of(a, x); x < end; i++) {
		const struct nf_file *f = &a->files[i];
		uint64_t file_end = f->logical_start + f->payload_bytes;
		uint64_t y = end < file_end ? end : file_end;
		if (n < max)
			segs[n] = (struct nf_segment){
				.file = i,
				.file_offset = f->data_offset + (x - f->logical_start),
				.length = y - x,
				.dest_offset = x - offset,
			};
		n++;
		x = y;
	}
	return (ssize_t)n;
}
