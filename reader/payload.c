/* reader/payload.c — reading logical payload bytes, synchronously.
 *
 * The path of tools, tests and ninfer-check --deep, through nf_file_pread
 * (local or remote); the daemon reads the same segments with its engine
 * (io_uring, or the remote one) instead.  Both go
 * through nf_range_map(), so only rangemap.c knows how files join. */
#include <errno.h>

#include "reader/artifact.h"
#include "reader/internal.h"

int nf_payload_read(struct nf_artifact *a, uint64_t off, uint64_t len, void *buf,
		    uint32_t *failed_file)
{
	enum { BATCH = 16 };
	struct nf_segment segs[BATCH];
	char *dst = buf;

	if (nf_range_map(a, off, len, NULL, 0) < 0)
		return -ERANGE;
	while (len > 0) {
		ssize_t n = nf_range_map(a, off, len, segs, BATCH);
		size_t k = (size_t)n < BATCH ? (size_t)n : BATCH;
		uint64_t step = 0;

		for (size_t i = 0; i < k; i++) {
			int rc = nf_file_pread(a, segs[i].file, dst + segs[i].dest_offset,
					       segs[i].length, segs[i].file_offset);
			if (rc < 0) {
				if (failed_file)
					*failed_file = segs[i].file;
				return rc;
			}
			step = segs[i].dest_offset + segs[i].length;
		}
		off += step;
		len -= step;
		dst += step;
	}
	return 0;
}
