/* tests/mount/test_engine.c — unit tests of the io_uring read engine. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iouring/engine.h"

#define FILE_BYTES (3u * 1024 * 1024 + 123)

static int make_file(unsigned seed, size_t bytes, unsigned char **content)
{
	char path[] = "/tmp/nf-engine-XXXXXX";
	int fd = mkstemp(path);
	unsigned char *buf = malloc(bytes);
	unsigned x = seed;

	ck_assert_int_ge(fd, 0);
	ck_assert_ptr_nonnull(buf);
	unlink(path);
	for (size_t i = 0; i < bytes; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (unsigned char)(x >> 16);
	}
	ck_assert_int_eq(pwrite(fd, buf, bytes, 0), (ssize_t)bytes);
	*content = buf;
	return fd;
}

START_TEST(single_segment)
{
	unsigned char *want, *got = malloc(FILE_BYTES);
	int fd = make_file(1, FILE_BYTES, &want);
	struct nf_ring *r;
	struct nf_io io = {.file = 0, .offset = 0, .length = FILE_BYTES, .dst = got};

	ck_assert_int_eq(nf_ring_new(&r, 8, &fd, 1), 0);
	ck_assert_int_eq(nf_ring_read(r, &io, 1), 0);
	ck_assert_int_eq(io.result, 0);
	ck_assert(memcmp(got, want, FILE_BYTES) == 0);
	nf_ring_free(r);
	close(fd);
	free(want);
	free(got);
}
END_TEST

/* More segments than the ring depth, two files, odd sizes and offsets. */
START_TEST(many_segments_chunked)
{
	unsigned char *a, *b, *got = malloc(FILE_BYTES * 2);
	int fds[2] = {make_file(2, FILE_BYTES, &a), make_file(3, FILE_BYTES, &b)};
	struct nf_ring *r;
	struct nf_io ios[100];
	size_t pos = 0;

	ck_assert_int_eq(nf_ring_new(&r, 4, fds, 2), 0);
	for (unsigned i = 0; i < 100; i++) {
		uint64_t len = 1 + (i * 7919u) % 40000u;
		ios[i] = (struct nf_io){.file = i % 2, .offset = (i * 104729u) % (FILE_BYTES - 40000),
					.length = len, .dst = got + pos};
		pos += len;
	}
	ck_assert_int_eq(nf_ring_read(r, ios, 100), 0);
	for (unsigned i = 0; i < 100; i++) {
		const unsigned char *src = (i % 2 ? b : a) + ios[i].offset;

		ck_assert_int_eq(ios[i].result, 0);
		ck_assert(memcmp(ios[i].dst, src, ios[i].length) == 0);
	}
	struct nf_ring_stats st;
	nf_ring_stats(r, &st);
	ck_assert_uint_ge(st.sqes, 100);
	ck_assert_uint_ge(st.submissions, 25);
	nf_ring_free(r);
	close(fds[0]);
	close(fds[1]);
	free(a);
	free(b);
	free(got);
}
END_TEST

/* A file truncated in the middle of a span: the span fails with -EIO, the
 * others succeed. */
START_TEST(eof_inside_span)
{
	unsigned char *want, *got = malloc(FILE_BYTES);
	int fd = make_file(4, FILE_BYTES, &want);
	struct nf_ring *r;
	struct nf_io ios[3] = {
		{.file = 0, .offset = 0, .length = 4096, .dst = got},
		{.file = 0, .offset = 1000000, .length = 100000, .dst = got + 4096},
		{.file = 0, .offset = 8192, .length = 10, .dst = got + 200000},
	};

	ck_assert_int_eq(ftruncate(fd, 1050000), 0);
	ck_assert_int_eq(nf_ring_new(&r, 8, &fd, 1), 0);
	ck_assert_int_eq(nf_ring_read(r, ios, 3), -EIO);
	ck_assert_int_eq(ios[0].result, 0);
	ck_assert_int_eq(ios[1].result, -EIO);
	ck_assert_int_eq(ios[2].result, 0);
	ck_assert(memcmp(got, want, 4096) == 0);
	ck_assert(memcmp(got + 200000, want + 8192, 10) == 0);
	/* Reading entirely past EOF is -EIO as well. */
	struct nf_io past = {.file = 0, .offset = 2000000, .length = 1, .dst = got};
	ck_assert_int_eq(nf_ring_read(r, &past, 1), -EIO);
	nf_ring_free(r);
	close(fd);
	free(want);
	free(got);
}
END_TEST

/* A short read (a pipe delivers what it has) is resubmitted for the rest. */
START_TEST(short_reads_resubmitted)
{
	int p[2];
	char got[64];
	struct nf_ring *r;
	struct nf_io io = {.file = 0, .offset = 0, .length = 20, .dst = got};
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		for (int i = 0; i < 4; i++) {
			if (write(p[1], "abcde", 5) != 5)
				_exit(1);
			usleep(20000);
		}
		_exit(0);
	}
	close(p[1]);
	/* offset -1 would be "current position" for pipes; io_uring reads
	 * pipes at the current position whatever the offset, so 0 is fine. */
	io.offset = 0;
	ck_assert_int_eq(nf_ring_new(&r, 4, &p[0], 1), 0);
	ck_assert_int_eq(nf_ring_read(r, &io, 1), 0);
	ck_assert(memcmp(got, "abcdeabcdeabcdeabcde", 20) == 0);
	struct nf_ring_stats st;
	nf_ring_stats(r, &st);
	ck_assert_uint_ge(st.short_reads, 1);
	ck_assert_uint_eq(st.bytes, 20);
	nf_ring_free(r);
	close(p[0]);
}
END_TEST

/* A hole (-1 fd) fails only the segments that need it. */
START_TEST(missing_fd_hole)
{
	unsigned char *want, got[200];
	int fd = make_file(5, FILE_BYTES, &want);
	int fds[3] = {fd, -1, fd};
	struct nf_ring *r;
	struct nf_io ios[3] = {
		{.file = 0, .offset = 5, .length = 50, .dst = got},
		{.file = 1, .offset = 0, .length = 50, .dst = got + 50},
		{.file = 2, .offset = 77, .length = 50, .dst = got + 100},
	};

	ck_assert_int_eq(nf_ring_new(&r, 2, fds, 3), 0);
	ck_assert_int_eq(nf_ring_read(r, ios, 3), -EBADF);
	ck_assert_int_eq(ios[0].result, 0);
	ck_assert_int_eq(ios[1].result, -EBADF);
	ck_assert_int_eq(ios[2].result, 0);
	ck_assert(memcmp(got, want + 5, 50) == 0);
	ck_assert(memcmp(got + 100, want + 77, 50) == 0);
	/* Out-of-range file index and zero-length segments. */
	struct nf_io odd[2] = {{.file = 9, .length = 1, .dst = got},
			       {.file = 0, .offset = 0, .length = 0, .dst = NULL}};
	ck_assert_int_eq(nf_ring_read(r, odd, 2), -EBADF);
	ck_assert_int_eq(odd[1].result, 0);
	ck_assert_int_eq(nf_ring_read(r, NULL, 0), 0);
	nf_ring_free(r);
	close(fd);
	free(want);
}
END_TEST

/* Slots set per read (issue 11: files a bounded cache may close): a plain
 * ring reads holes as -EBADF until a descriptor is set, then the set file;
 * a registered ring's slot is updated in the kernel's table too. */
START_TEST(slots_set_per_read)
{
	unsigned char *a, *b, *got = malloc(4096);
	int fa = make_file(7, 8192, &a), fb = make_file(8, 8192, &b);
	struct nf_io io = {.file = 1, .offset = 100, .length = 4096, .dst = got};

	for (int registered = 0; registered < 2; registered++) {
		struct nf_ring *r;
		int holes[3] = {-1, -1, -1};
		ck_assert_int_eq(registered ? nf_ring_new(&r, 4, holes, 3) : nf_ring_new_plain(&r, 4, 3),
				 0);
		ck_assert_int_eq(nf_ring_read(r, &io, 1), -EBADF);
		ck_assert_int_eq(nf_ring_set_fd(r, 1, fa), 0);
		ck_assert_int_eq(nf_ring_read(r, &io, 1), 0);
		ck_assert(memcmp(got, a + 100, 4096) == 0);
		ck_assert_int_eq(nf_ring_set_fd(r, 1, fb), 0);   /* the same slot, another file */
		ck_assert_int_eq(nf_ring_read(r, &io, 1), 0);
		ck_assert(memcmp(got, b + 100, 4096) == 0);
		ck_assert_int_eq(nf_ring_set_fd(r, 1, -1), 0);
		ck_assert_int_eq(nf_ring_read(r, &io, 1), -EBADF);
		ck_assert_int_eq(nf_ring_set_fd(r, 3, fa), -EINVAL);
		nf_ring_free(r);
	}
	close(fa);
	close(fb);
	free(a);
	free(b);
	free(got);
}
END_TEST

START_TEST(bad_arguments)
{
	struct nf_ring *r = (struct nf_ring *)1;

	ck_assert_int_eq(nf_ring_new(&r, 0, NULL, 0), -EINVAL);
	ck_assert_ptr_null(r);
	ck_assert_int_eq(nf_ring_new(&r, 1, NULL, 0), 0);
	nf_ring_free(r);
	nf_ring_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iouring-engine");
	TCase *tc = tcase_create("engine");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, single_segment);
	tcase_add_test(tc, many_segments_chunked);
	tcase_add_test(tc, eof_inside_span);
	tcase_add_test(tc, short_reads_resubmitted);
	tcase_add_test(tc, missing_fd_hole);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, slots_set_per_read);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
