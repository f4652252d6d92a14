/* tests/io/test_extent.c — the extent table and its map (io/extent.h):
 * hand-computed vectors for gaps, zero-length records and a table read in
 * place from a larger record, nf_extents_check's refusals, and random
 * tables against a byte-by-byte model (a linear scan per byte). */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "io/extent.h"

/* files: [0,10) at 100, empty at 10, [10,15) at 0, gap [15,20), [20,30) at 7 */
static const struct nf_extent gappy[] = {
	{0, 10, 100}, {10, 0, 55}, {10, 5, 0}, {20, 10, 7},
};

START_TEST(plain_with_gap_and_empty_record)
{
	struct nf_extents t = NF_EXTENTS_PLAIN(gappy, 4, 30);
	struct nf_segment s[4];

	ck_assert_int_eq(nf_extents_check(&t), 0);
	ck_assert_int_eq(nf_extents_find(&t, 0), 0);
	ck_assert_int_eq(nf_extents_find(&t, 9), 0);
	ck_assert_int_eq(nf_extents_find(&t, 10), 2);   /* not the empty record */
	ck_assert_int_eq(nf_extents_find(&t, 14), 2);
	ck_assert_int_eq(nf_extents_find(&t, 15), -1);  /* the gap */
	ck_assert_int_eq(nf_extents_find(&t, 29), 3);
	ck_assert_int_eq(nf_extents_find(&t, 30), -1);
	/* [8, 14): across the empty record, two segments */
	ck_assert_int_eq(nf_extents_map(&t, 8, 6, s, 4), 2);
	ck_assert_int_eq(s[0].file, 0);
	ck_assert_int_eq(s[0].file_offset, 108);
	ck_assert_int_eq(s[0].length, 2);
	ck_assert_int_eq(s[0].dest_offset, 0);
	ck_assert_int_eq(s[1].file, 2);
	ck_assert_int_eq(s[1].file_offset, 0);
	ck_assert_int_eq(s[1].length, 4);
	ck_assert_int_eq(s[1].dest_offset, 2);
	/* touching the gap, from either side */
	ck_assert_int_eq(nf_extents_map(&t, 14, 2, s, 4), -ERANGE);
	ck_assert_int_eq(nf_extents_map(&t, 16, 6, s, 4), -ERANGE);
	ck_assert_int_eq(nf_extents_map(&t, 0, 30, NULL, 0), -ERANGE);
	/* after it */
	ck_assert_int_eq(nf_extents_map(&t, 20, 10, s, 4), 1);
	ck_assert_int_eq(s[0].file, 3);
	ck_assert_int_eq(s[0].file_offset, 7);
	/* the end, and past it */
	ck_assert_int_eq(nf_extents_map(&t, 30, 0, s, 4), 0);
	ck_assert_int_eq(nf_extents_map(&t, 30, 1, s, 4), -ERANGE);
	ck_assert_int_eq(nf_extents_map(&t, 31, 0, s, 4), -ERANGE);
	ck_assert_int_eq(nf_extents_map(NULL, 0, 0, s, 4), -ERANGE);
	/* counting only: max 0, then fewer than needed */
	ck_assert_int_eq(nf_extents_map(&t, 0, 15, NULL, 0), 2);
	ck_assert_int_eq(nf_extents_map(&t, 0, 15, s, 1), 2);
	ck_assert_int_eq(s[0].length, 10);
}
END_TEST

/* A table read in place from a record with other fields around it. */
struct wide {
	const char *name;
	uint64_t b;
	uint32_t pad;
	uint64_t p, d;
};

START_TEST(strided_records)
{
	static const struct wide w[3] = {
		{"e", 4096, 1, 0, 8192}, {"p1", 4096, 2, 4096, 4096}, {"p2", 10, 3, 8192, 4096},
	};
	struct nf_extents t = NF_EXTENTS_OF(w, 3, struct wide, p, b, d, 8202);
	struct nf_segment s[4];

	ck_assert_int_eq(nf_extents_check(&t), 0);
	ck_assert_int_eq(nf_extents_map(&t, 4000, 4200, s, 4), 3);
	ck_assert_int_eq(s[0].file_offset, 8192 + 4000);
	ck_assert_int_eq(s[0].length, 96);
	ck_assert_int_eq(s[1].file, 1);
	ck_assert_int_eq(s[1].file_offset, 4096);
	ck_assert_int_eq(s[1].length, 4096);
	ck_assert_int_eq(s[1].dest_offset, 96);
	ck_assert_int_eq(s[2].file, 2);
	ck_assert_int_eq(s[2].length, 8);
	ck_assert_int_eq(s[2].dest_offset, 4192);
}
END_TEST

START_TEST(check_refuses)
{
	static const struct nf_extent overlap[] = {{0, 10, 0}, {9, 5, 0}};
	static const struct nf_extent unsorted[] = {{10, 5, 0}, {0, 5, 0}};
	static const struct nf_extent wraps[] = {{UINT64_MAX - 3, 8, 0}};
	static const struct nf_extent data_wraps[] = {{0, 8, UINT64_MAX - 3}};
	static const struct nf_extent ok[] = {{0, 5, 0}, {5, 5, 0}};
	struct nf_extents t;
	struct nf_segment s[2];

	t = NF_EXTENTS_PLAIN(overlap, 2, 14);
	ck_assert_int_eq(nf_extents_check(&t), -EINVAL);
	t = NF_EXTENTS_PLAIN(unsorted, 2, 15);
	ck_assert_int_eq(nf_extents_check(&t), -EINVAL);
	t = NF_EXTENTS_PLAIN(wraps, 1, UINT64_MAX);
	ck_assert_int_eq(nf_extents_check(&t), -EINVAL);
	/* not checked: the map says so rather than giving a wrong segment */
	ck_assert_int_eq(nf_extents_map(&t, UINT64_MAX - 2, 1, s, 2), -EOVERFLOW);
	t = NF_EXTENTS_PLAIN(data_wraps, 1, 8);
	ck_assert_int_eq(nf_extents_check(&t), -EINVAL);
	ck_assert_int_eq(nf_extents_map(&t, 5, 1, s, 2), -EOVERFLOW);
	t = NF_EXTENTS_PLAIN(ok, 2, 9);   /* total below the last end */
	ck_assert_int_eq(nf_extents_check(&t), -EINVAL);
	t = NF_EXTENTS_PLAIN(ok, 2, 10);
	ck_assert_int_eq(nf_extents_check(&t), 0);
	t = NF_EXTENTS_PLAIN(NULL, 0, 0);
	ck_assert_int_eq(nf_extents_check(&t), 0);
	ck_assert_int_eq(nf_extents_map(&t, 0, 0, s, 2), 0);
	ck_assert_int_eq(nf_extents_map(&t, 0, 1, s, 2), -ERANGE);
}
END_TEST

/* The model: the file and file offset of logical byte x, by a linear scan,
 * or -1 in a gap. */
static int model_at(const struct nf_extent *v, uint32_t n, uint64_t x, uint64_t *at)
{
	for (uint32_t i = 0; i < n; i++)
		if (x >= v[i].logical && x < v[i].logical + v[i].bytes) {
			*at = v[i].data_offset + (x - v[i].logical);
			return (int)i;
		}
	return -1;
}

START_TEST(random_tables_against_a_byte_model)
{
	enum { N = 12, SPACE = 200 };
	struct nf_extent v[N];
	struct nf_segment s[N + 1];
	unsigned seed = 12345;

	for (int round = 0; round < 300; round++) {
		uint32_t n = 1 + (uint32_t)(rand_r(&seed) % N);
		uint64_t p = 0;
		for (uint32_t i = 0; i < n; i++) {
			p += (uint64_t)(rand_r(&seed) % 3 == 0 ? rand_r(&seed) % 5 : 0);   /* a gap */
			v[i] = (struct nf_extent){p, (uint64_t)(rand_r(&seed) % 4 == 0 ? 0 : 1 + rand_r(&seed) % 20),
						  (uint64_t)(rand_r(&seed) % 1000)};
			p += v[i].bytes;
		}
		struct nf_extents t = NF_EXTENTS_PLAIN(v, n, p);
		ck_assert_int_eq(nf_extents_check(&t), 0);
		for (int q = 0; q < 50; q++) {
			uint64_t off = (uint64_t)rand_r(&seed) % (p + 2), len = (uint64_t)rand_r(&seed) % (p + 2);
			ssize_t k = nf_extents_map(&t, off, len, s, N + 1);
			bool inside = off <= p && len <= p - off, gap = false;
			uint64_t at;
			for (uint64_t x = off; inside && x < off + len; x++)
				gap |= model_at(v, n, x, &at) < 0;
			if (!inside || gap) {
				ck_assert_int_eq(k, -ERANGE);
				continue;
			}
			ck_assert_int_ge(k, 0);
			/* every byte of the range is where the model says, once, in order */
			uint64_t x = off;
			for (ssize_t j = 0; j < k; j++) {
				ck_assert(s[j].length > 0);
				ck_assert_uint_eq(s[j].dest_offset, x - off);
				for (uint64_t b = 0; b < s[j].length; b++, x++) {
					ck_assert_int_eq(model_at(v, n, x, &at), (int)s[j].file);
					ck_assert_uint_eq(at, s[j].file_offset + b);
				}
				if (j > 0)   /* a boundary is a file change */
					ck_assert_uint_ne(s[j].file, s[j - 1].file);
			}
			ck_assert_uint_eq(x, off + len);
			ck_assert_int_eq(nf_extents_find(&t, off), off < p ? model_at(v, n, off, &at) : -1);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("extent");
	TCase *tc = tcase_create("extent");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, plain_with_gap_and_empty_record);
	tcase_add_test(tc, strided_records);
	tcase_add_test(tc, check_refuses);
	tcase_add_test(tc, random_tables_against_a_byte_model);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
