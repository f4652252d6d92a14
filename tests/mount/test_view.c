/* tests/mount/test_view.c — generic views (fs/view.c): PIECES built piece
 * by piece (joined pieces merge, zero runs merge, a failure drops what the
 * view added) and SEEK_DATA/SEEK_HOLE over them, hand-computed: a leading
 * hole, adjacent data pieces that do not join, a hole between, a trailing
 * hole; the SEEK_HOLE index (nf_pieces_next_zero) by hand and against the
 * walk on random tilings; other kinds are data throughout, STATS and FILES
 * have no bytes. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "fs/view.h"

#define Z NF_PIECE_ZERO

START_TEST(pieces_merge_and_fail)
{
	struct nf_pieces p = {0};
	struct nf_view v;

	nf_pieces_begin(&p, &v);
	ck_assert_int_eq(nf_pieces_add(&p, &v, Z, 10), 0);
	ck_assert_int_eq(nf_pieces_add(&p, &v, Z, 6), 0);      /* merges: one hole [0,16) */
	ck_assert_int_eq(nf_pieces_add(&p, &v, 100, 8), 0);
	ck_assert_int_eq(nf_pieces_add(&p, &v, 108, 8), 0);    /* joins: [100,116) */
	ck_assert_int_eq(nf_pieces_add(&p, &v, 500, 4), 0);    /* adjacent in the file, not joined */
	ck_assert_int_eq(nf_pieces_add(&p, &v, 7, 0), 0);      /* empty: nothing */
	ck_assert_uint_eq(v.count, 3);
	ck_assert_uint_eq(v.size, 36);
	ck_assert_uint_eq(p.v[1].out, 16);
	ck_assert_uint_eq(p.v[1].length, 16);
	ck_assert_uint_eq(p.v[2].out, 32);
	/* a second view that fails gives its pieces back */
	struct nf_view w;
	nf_pieces_begin(&p, &w);
	ck_assert_int_eq(nf_pieces_add(&p, &w, 1, 5), 0);
	ck_assert_int_eq(nf_pieces_add(&p, &w, 9, UINT64_MAX), -EOVERFLOW);
	ck_assert_int_eq(nf_pieces_fail(&p, &w, -EOVERFLOW), -EOVERFLOW);
	ck_assert_uint_eq(p.n, 3);
	ck_assert_uint_eq(w.kind, NF_VIEW_NONE);
	uint64_t off, bytes;
	v.pieces = p.v;
	nf_view_extent(&v, &off, &bytes);
	ck_assert_uint_eq(off, 100);
	ck_assert_uint_eq(bytes, 20);
	nf_pieces_free(&p);
}
END_TEST

START_TEST(seek_over_pieces)
{
	/* hole [0,16), data [16,32) and [32,36) (two pieces), hole [36,40),
	 * data [40,50), hole [50,64) */
	static const struct nf_piece pc[] = {
		{0, Z, 16}, {16, 100, 16}, {32, 500, 4}, {36, Z, 4}, {40, 900, 10}, {50, Z, 14},
	};
	struct nf_view v = {.kind = NF_VIEW_PIECES, .size = 64, .pieces = pc, .first = 0,
			    .count = 6};

	ck_assert_int_eq(nf_view_seek(&v, 0, true), 16);
	ck_assert_int_eq(nf_view_seek(&v, 0, false), 0);
	ck_assert_int_eq(nf_view_seek(&v, 15, true), 16);
	ck_assert_int_eq(nf_view_seek(&v, 16, false), 36);   /* over two data pieces */
	ck_assert_int_eq(nf_view_seek(&v, 33, true), 33);
	ck_assert_int_eq(nf_view_seek(&v, 33, false), 36);
	ck_assert_int_eq(nf_view_seek(&v, 37, true), 40);
	ck_assert_int_eq(nf_view_seek(&v, 37, false), 37);
	ck_assert_int_eq(nf_view_seek(&v, 49, false), 50);
	ck_assert_int_eq(nf_view_seek(&v, 50, true), -ENXIO); /* no data after */
	ck_assert_int_eq(nf_view_seek(&v, 63, false), 63);
	ck_assert_int_eq(nf_view_seek(&v, 64, true), -ENXIO);
	ck_assert_int_eq(nf_view_seek(&v, 64, false), -ENXIO);
	/* the same pieces from an offset in a shared array: first 2, count 3
	 * is data [0,16) [16,20) hole [20,24) (outs are the view's own) */
	static const struct nf_piece shared[] = {
		{0, 1, 1}, {0, 2, 2}, {0, 100, 16}, {16, 500, 4}, {20, Z, 4},
	};
	struct nf_view s = {.kind = NF_VIEW_PIECES, .size = 24, .pieces = shared, .first = 2,
			    .count = 3};
	ck_assert_int_eq(nf_view_seek(&s, 0, false), 20);
	ck_assert_int_eq(nf_view_seek(&s, 21, true), -ENXIO);
	/* a data-only view ends in the hole at its end */
	struct nf_piece one = {0, 7, 9};
	struct nf_view d = {.kind = NF_VIEW_PIECES, .size = 9, .pieces = &one, .count = 1};
	ck_assert_int_eq(nf_view_seek(&d, 3, true), 3);
	ck_assert_int_eq(nf_view_seek(&d, 3, false), 9);
}
END_TEST

START_TEST(seek_hole_index)
{
	/* the pieces of seek_over_pieces: zero pieces at 0, 3 and 5 */
	static const struct nf_piece pc[] = {
		{0, Z, 16}, {16, 100, 16}, {32, 500, 4}, {36, Z, 4}, {40, 900, 10}, {50, Z, 14},
	};
	static const uint32_t want[] = {0, 3, 3, 3, 5, 5};
	uint32_t *nz = nf_pieces_next_zero(pc, 6);

	ck_assert_ptr_nonnull(nz);
	for (int k = 0; k < 6; k++)
		ck_assert_uint_eq(nz[k], want[k]);
	struct nf_view v = {.kind = NF_VIEW_PIECES, .size = 64, .pieces = pc, .first = 0,
			    .count = 6, .next_zero = nz};
	ck_assert_int_eq(nf_view_seek(&v, 16, false), 36);   /* over two data pieces */
	ck_assert_int_eq(nf_view_seek(&v, 33, false), 36);
	ck_assert_int_eq(nf_view_seek(&v, 37, false), 37);
	ck_assert_int_eq(nf_view_seek(&v, 49, false), 50);
	ck_assert_int_eq(nf_view_seek(&v, 0, true), 16);
	free(nz);
	/* a view whose data runs to its end while the next view (same array)
	 * starts with a hole: the hole is not this view's; its end is */
	static const struct nf_piece two[] = {{0, 10, 4}, {4, 90, 4}, {0, Z, 8}, {8, 7, 1}};
	nz = nf_pieces_next_zero(two, 4);
	ck_assert_ptr_nonnull(nz);
	ck_assert_uint_eq(nz[0], 2);
	ck_assert_uint_eq(nz[3], 4);                          /* none after: n */
	struct nf_view a = {.kind = NF_VIEW_PIECES, .size = 8, .pieces = two, .first = 0,
			    .count = 2, .next_zero = nz};
	struct nf_view b = {.kind = NF_VIEW_PIECES, .size = 9, .pieces = two, .first = 2,
			    .count = 2, .next_zero = nz};
	ck_assert_int_eq(nf_view_seek(&a, 1, false), 8);
	ck_assert_int_eq(nf_view_seek(&b, 0, false), 0);
	ck_assert_int_eq(nf_view_seek(&b, 8, false), 9);
	free(nz);
	/* random tilings: with the index, every offset seeks where the walk does */
	uint64_t x = 0x9e3779b97f4a7c15u;
	for (int round = 0; round < 200; round++) {
		struct nf_piece r[40];
		uint32_t n = 0;
		uint64_t out = 0;
		bool zero_last = false;
		for (int k = 0; k < 40; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			bool zero = !zero_last && (x & 3) == 0;
			r[n++] = (struct nf_piece){out, zero ? Z : 1000 + out, 1 + (x >> 8) % 5};
			out += r[n - 1].length;
			zero_last = zero;
		}
		uint32_t *idx = nf_pieces_next_zero(r, n);
		ck_assert_ptr_nonnull(idx);
		struct nf_view w = {.kind = NF_VIEW_PIECES, .size = out, .pieces = r, .count = n};
		struct nf_view i = w;
		i.next_zero = idx;
		for (uint64_t off = 0; off <= out; off++) {
			ck_assert_int_eq(nf_view_seek(&i, off, false), nf_view_seek(&w, off, false));
			ck_assert_int_eq(nf_view_seek(&i, off, true), nf_view_seek(&w, off, true));
		}
		free(idx);
	}
}
END_TEST

START_TEST(seek_other_kinds)
{
	struct nf_view v;

	nf_view_memory(&v, "abcdef", 6);
	ck_assert_int_eq(nf_view_seek(&v, 2, true), 2);
	ck_assert_int_eq(nf_view_seek(&v, 2, false), 6);
	ck_assert_int_eq(nf_view_seek(&v, 6, true), -ENXIO);
	nf_view_file(&v, 3, 4096, 100);
	ck_assert_uint_eq(v.file, 3);
	ck_assert_int_eq(nf_view_seek(&v, 99, false), 100);
	nf_view_family(&v, NF_VIEW_FAMILY + 1, 50);
	ck_assert_int_eq(nf_view_seek(&v, 0, false), 50);
	struct nf_view st = {.kind = NF_VIEW_STATS, .size = 300};
	ck_assert_int_eq(nf_view_seek(&st, 0, true), -ENXIO);   /* st_size 0 */
	ck_assert_uint_eq(nf_view_st_size(NF_VIEW_FILES, 10), 0);
	ck_assert_uint_eq(nf_view_st_size(NF_VIEW_PIECES, 10), 10);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("view");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, pieces_merge_and_fail);
	tcase_add_test(tc, seek_over_pieces);
	tcase_add_test(tc, seek_hole_index);
	tcase_add_test(tc, seek_other_kinds);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
