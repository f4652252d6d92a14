/* bench/ring_fds.c — registered (fixed) files against plain descriptors in
 * the io_uring engine (issue 11: sets with more parts than the open-file
 * cache holds are read through plain descriptors).
 *
 *   build/bench/ring-fds [FILE_MIB [READS]]     defaults 64 and 200000
 *
 * One thread, one ring of depth 64, a FILE_MIB file in the page cache (a
 * temporary file, read once first).  Each "read" is what the daemon does
 * for one request: one 4 KiB segment at a random page-aligned offset, in
 * three ways, interleaved in rounds so load changes hit all of them:
 *   fixed     the file registered once (IOSQE_FIXED_FILE);
 *   plain     a plain ring, the descriptor set in the slot before the read
 *             and cleared after it (nf_ring_set_fd, no system call);
 *   pread     pread(2), the anchor (no ring at all).
 * It prints ns per read for each and the ratios plain/fixed and
 * fixed/pread.  A benchmark, not a test: nothing fails on slow numbers. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iouring/engine.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	size_t reads = argc > 2 ? strtoul(argv[2], NULL, 10) : 200000;
	size_t bytes = mib << 20, pages = bytes / 4096;
	char path[] = "/tmp/nf-ring-fds-XXXXXX";
	int fd = mkstemp(path);
	char *buf = malloc(1 << 20), *dst = aligned_alloc(4096, 4096);
	struct nf_ring *fixed, *plain;

	if (fd < 0 || !buf || !dst || pages == 0) {
		fprintf(stderr, "ring-fds: setup failed\n");
		return 8;
	}
	unlink(path);
	memset(buf, 0x5a, 1 << 20);
	for (size_t i = 0; i < mib; i++)
		if (pwrite(fd, buf, 1 << 20, (off_t)i << 20) != 1 << 20)
			return 8;
	for (size_t i = 0; i < mib; i++)   /* into the page cache */
		if (pread(fd, buf, 1 << 20, (off_t)i << 20) != 1 << 20)
			return 8;
	if (nf_ring_new(&fixed, 64, &fd, 1) != 0 || nf_ring_new_plain(&plain, 64, 1) != 0) {
		fprintf(stderr, "ring-fds: no io_uring\n");
		return 8;
	}
	double t[3] = {0, 0, 0};
	uint64_t x = 88172645463325252ull;
	const size_t rounds = 10, per = reads / rounds;
	for (size_t r = 0; r < rounds; r++) {
		for (int way = 0; way < 3; way++) {
			double t0 = now();
			for (size_t i = 0; i < per; i++) {
				struct nf_io io = {.file = 0, .offset = (next(&x) % pages) * 4096,
						   .length = 4096, .dst = dst};
				int rc;
				if (way == 0) {
					rc = nf_ring_read(fixed, &io, 1);
				} else if (way == 1) {
					nf_ring_set_fd(plain, 0, fd);
					rc = nf_ring_read(plain, &io, 1);
					nf_ring_set_fd(plain, 0, -1);
				} else {
					rc = pread(fd, dst, 4096, (off_t)io.offset) == 4096 ? 0 : -EIO;
				}
				if (rc != 0) {
					fprintf(stderr, "ring-fds: read failed: %s\n", strerror(-rc));
					return 8;
				}
			}
			t[way] += now() - t0;
		}
	}
	double n = (double)(per * rounds);
	printf("4 KiB reads from a %zu MiB file in the page cache, %zu each, %zu rounds\n", mib,
	       per * rounds, rounds);
	printf("%-8s %10s\n", "way", "ns/read");
	printf("%-8s %10.0f\n%-8s %10.0f\n%-8s %10.0f\n", "fixed", t[0] / n * 1e9, "plain",
	       t[1] / n * 1e9, "pread", t[2] / n * 1e9);
	printf("plain/fixed %.3f   fixed/pread %.3f\n", t[1] / t[0], t[0] / t[2]);
	nf_ring_free(fixed);
	nf_ring_free(plain);
	close(fd);
	free(buf);
	free(dst);
	return 0;
}
