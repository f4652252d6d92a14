/* tests/reader/test_rangemap.c — nf_range_map (seed §2.2, §11.2) on a
 * hand-made files table: boundaries, three files, the empty read at the
 * end, one byte past it, and offsets near UINT64_MAX. */
#include <check.h>
#include <errno.h>
#include <stdint.h>

#include "craft.h"

/* codecs §7.1 split: files [8192, 8192, 8192, 8192, 1544]. */
static struct nf_file files5[5];
static struct nf_artifact art5;

static void setup5(void)
{
	const uint64_t b[5] = {8192, 8192, 8192, 8192, 1544};
	uint64_t p = 0;
	for (int i = 0; i < 5; i++) {
		files5[i] = (struct nf_file){.payload_bytes = b[i], .logical_start = p,
					     .data_offset = i ? 4096 : 4096 /* entry_payload_start */};
		files5[i].file_bytes = files5[i].data_offset + b[i];
		p += b[i];
	}
	art5 = (struct nf_artifact){.nfiles = 5, .files = files5, .payload_bytes = p};
}

START_TEST(test_q2_in_last_part)
{
	setup5();
	struct nf_segment s[4];
	/* codecs §7.1: native_q2 at 34048 lies in part-0004 at file offset 5376. */
	ck_assert_int_eq(nf_range_map(&art5, 34048, 264, s, 4), 1);
	ck_assert_int_eq(s[0].file, 4);
	ck_assert_int_eq(s[0].file_offset, 5376);
	ck_assert_int_eq(s[0].length, 264);
	ck_assert_int_eq(s[0].dest_offset, 0);
	/* The bf16 matrix [0, 33800) spans all five files. */
	struct nf_segment m[8];
	ck_assert_int_eq(nf_range_map(&art5, 0, 33800, m, 8), 5);
	uint64_t dest = 0;
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(m[i].file, i);
		ck_assert_int_eq(m[i].file_offset, 4096);
		ck_assert_int_eq(m[i].dest_offset, dest);
		dest += m[i].length;
	}
	ck_assert_int_eq(dest, 33800);
	ck_assert_int_eq(m[4].length, 33800 - 4 * 8192);
}
END_TEST

START_TEST(test_boundaries)
{
	setup5();
	struct nf_segment s[4];
	/* Ends exactly on a boundary: one segment. */
	ck_assert_int_eq(nf_range_map(&art5, 0, 8192, s, 4), 1);
	ck_assert_int_eq(s[0].length, 8192);
	/* Starts exactly on a boundary. */
	ck_assert_int_eq(nf_range_map(&art5, 8192, 10, s, 4), 1);
	ck_assert_int_eq(s[0].file, 1);
	ck_assert_int_eq(s[0].file_offset, 4096);
	/* Last byte of a file, first byte of the next. */
	ck_assert_int_eq(nf_range_map(&art5, 8191, 2, s, 4), 2);
	ck_assert_int_eq(s[0].file, 0);
	ck_assert_int_eq(s[0].file_offset, 4096 + 8191);
	ck_assert_int_eq(s[0].length, 1);
	ck_assert_int_eq(s[1].file, 1);
	ck_assert_int_eq(s[1].file_offset, 4096);
	ck_assert_int_eq(s[1].dest_offset, 1);
	/* Spans three files: the middle one whole. */
	ck_assert_int_eq(nf_range_map(&art5, 8000, 8192 + 400, s, 4), 3);
	ck_assert_int_eq(s[0].length, 192);
	ck_assert_int_eq(s[1].length, 8192);
	ck_assert_int_eq(s[2].length, 208);
	ck_assert_int_eq(s[2].file, 2);
	ck_assert_int_eq(s[2].dest_offset, 192 + 8192);
	/* Only `max` are written, the count is still returned. */
	ck_assert_int_eq(nf_range_map(&art5, 0, art5.payload_bytes, s, 2), 5);
	ck_assert_int_eq(nf_range_map(&art5, 0, art5.payload_bytes, NULL, 0), 5);
	/* The whole last file, ending at payload_bytes. */
	ck_assert_int_eq(nf_range_map(&art5, 4 * 8192, 1544, s, 4), 1);
	ck_assert_int_eq(s[0].file_offset + s[0].length, 4096 + 1544);
}
END_TEST

START_TEST(test_end_and_past)
{
	setup5();
	struct nf_segment s[4];
	uint64_t P = art5.payload_bytes;
	ck_assert_int_eq(nf_range_map(&art5, P, 0, s, 4), 0);
	ck_assert_int_eq(nf_range_map(&art5, 5, 0, s, 4), 0);
	ck_assert_int_eq(nf_range_map(&art5, P, 1, s, 4), -ERANGE);
	ck_assert_int_eq(nf_range_map(&art5, P - 1, 2, s, 4), -ERANGE);
	ck_assert_int_eq(nf_range_map(&art5, P + 1, 0, s, 4), -ERANGE);
	ck_assert_int_eq(nf_range_map(&art5, 0, P + 1, s, 4), -ERANGE);
	ck_assert_int_eq(nf_range_map(&art5, P - 1, 1, s, 4), 1);
	ck_assert_int_eq(s[0].file, 4);
	ck_assert_int_eq(s[0].file_offset, 4096 + 1543);
}
END_TEST

START_TEST(test_huge_offsets)
{
	setup5();
	struct nf_segment s[4];
	ck_assert_int_eq(nf_range_map(&art5, UINT64_MAX, 1, s, 4), -ERANGE);
	ck_assert_int_eq(nf_range_map(&art5, UINT64_MAX, 0, s, 4), -ERANGE);
	ck_assert_int_eq(nf_range_map(&art5, 1, UINT64_MAX, s, 4), -ERANGE);
	ck_assert_int_eq(nf_range_map(&art5, 100, UINT64_MAX - 50, s, 4), -ERANGE);
	ck_assert_int_eq(nf_range_map(&art5, UINT64_MAX - 10, 20, s, 4), -ERANGE);

	/* A table whose payload reaches close to UINT64_MAX (file lengths
	 * still in U64, as the reader guarantees): no wrap. */
	static struct nf_file big[2];
	big[0] = (struct nf_file){.payload_bytes = UINT64_MAX - 10000, .logical_start = 0,
				  .data_offset = 4096};
	big[1] = (struct nf_file){.payload_bytes = 4000, .logical_start = UINT64_MAX - 10000,
				  .data_offset = 4096};
	struct nf_artifact a = {.nfiles = 2, .files = big, .payload_bytes = UINT64_MAX - 6000};
	ck_assert_int_eq(nf_range_map(&a, UINT64_MAX - 10001, 2, s, 4), 2);
	ck_assert(s[0].file_offset == 4096 + (UINT64_MAX - 10001));
	ck_assert_int_eq(s[1].file, 1);
	ck_assert_int_eq(s[1].file_offset, 4096);
	ck_assert_int_eq(s[1].dest_offset, 1);
	ck_assert_int_eq(nf_range_map(&a, UINT64_MAX - 6000, 0, s, 4), 0);
	ck_assert_int_eq(nf_range_map(&a, UINT64_MAX - 6001, 1, s, 4), 1);
	ck_assert_int_eq(s[0].file_offset, 4096 + 3999);
	ck_assert_int_eq(nf_range_map(&a, UINT64_MAX - 6001, 2, s, 4), -ERANGE);
	ck_assert_int_eq(nf_range_map(&a, UINT64_MAX - 6000, UINT64_MAX, s, 4), -ERANGE);
	ck_assert_int_eq(nf_range_map(&a, 0, UINT64_MAX, s, 4), -ERANGE);
}
END_TEST

START_TEST(test_single_file_and_empty)
{
	struct nf_file f = {.payload_bytes = 10, .data_offset = 8192, .file_bytes = 8202};
	struct nf_artifact a = {.nfiles = 1, .files = &f, .payload_bytes = 10};
	struct nf_segment s[2];
	ck_assert_int_eq(nf_range_map(&a, 3, 7, s, 2), 1);
	ck_assert_int_eq(s[0].file_offset, 8195);
	ck_assert_int_eq(s[0].length, 7);
	struct nf_artifact none = {.nfiles = 0, .files = NULL, .payload_bytes = 0};
	ck_assert_int_eq(nf_range_map(&none, 0, 0, s, 2), 0);
	ck_assert_int_eq(nf_range_map(&none, 0, 1, s, 2), -ERANGE);
	ck_assert_int_eq(nf_range_map(NULL, 0, 0, s, 2), -ERANGE);
}
END_TEST

Suite *rangemap_suite(void);
Suite *rangemap_suite(void)
{
	Suite *s = suite_create("rangemap");
	TCase *t = tcase_create("map");
	tcase_add_test(t, test_q2_in_last_part);
	tcase_add_test(t, test_boundaries);
	tcase_add_test(t, test_end_and_past);
	tcase_add_test(t, test_huge_offsets);
	tcase_add_test(t, test_single_file_and_empty);
	suite_add_tcase(s, t);
	return s;
}
