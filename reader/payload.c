/* reader/payload.c — reading logical payload bytes with plain pread.
 *
 * The synchronous path for tools, tests and ninfer-check --deep; the daemon
 * reads the same segments with the io_uring engine instead.  Both go
 * through nf_range_map(), so only rangemap.c knows how files join. */
#include <errno.h>
#include <unistd.h>

#include "reader/artifact.h"
#include "reader/internal.h"

int nf_pread_full(int fd, void *buf, uint64_t n, uint64_t off)
{
	uint64_t done = 0;

	while (done < n) {
		ssize_t k = pread(fd, (char *)buf + done, (size_t)(n - done), (off_t)(off + done));
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -ENODATA;
		done += (uint64_t)k;
	}
	return 0;
}

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
			int fd = nf_file_acquire(a, segs[i].file);
			int rc = fd < 0 ? fd
				       : nf_pread_full(fd, dst + segs[i].dest_offset, segs[i].length,
						       segs[i].file_offset);
			if (fd >= 0)
				nf_file_release(a, segs[i].file);
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
