/* reader/rangemap.c — logical payload -> file segments (seed §2.2, §11.2).
 *
 * File i holds the logical bytes [P_i, P_i + B_i) at file offsets starting
 * at data_offset (entry_payload_start for the entry, 4096 for parts): the
 * files table is an extent table (io/extent.h), read in place, and its map
 * is the only code that knows how files join.  The reader checked the
 * table when it read the directory (every B_i > 0, P_{i+1} = P_i + B_i,
 * the sum is payload_bytes); here it is only handed over. */
#include <errno.h>

#include "io/extent.h"
#include "reader/internal.h"

ssize_t nf_range_map(const struct nf_artifact *a, uint64_t offset, uint64_t length,
		     struct nf_segment *segs, size_t max)
{
	if (a == NULL)
		return -ERANGE;
	struct nf_extents t = nf_artifact_extents(a);
	return nf_extents_map(&t, offset, length, segs, max);
}

struct nf_extents nf_artifact_extents(const struct nf_artifact *a)
{
	return NF_EXTENTS_OF(a->files, a->nfiles, struct nf_file, logical_start, payload_bytes,
			     data_offset, a->payload_bytes);
}
