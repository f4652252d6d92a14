/* tests/mount/test_names.c — the file-name escaping rule (man ninferfs.5). */
#include <check.h>
#include <string.h>

#include "fs/names.h"

static const char *esc(const char *in, char out[NF_NAME_MAX + 1])
{
	nf_escape_component(in, strlen(in), out);
	return out;
}

START_TEST(rule)
{
	char b[NF_NAME_MAX + 1];

	ck_assert_str_eq(esc("w.attn.qk", b), "w.attn.qk");
	ck_assert_str_eq(esc("a/b", b), "a%2Fb");
	ck_assert_str_eq(esc("100%", b), "100%25");
	ck_assert_str_eq(esc("%leading", b), "%25leading");
	ck_assert_str_eq(esc(".", b), "%2E");
	ck_assert_str_eq(esc("..", b), "%2E%2E");
	ck_assert_str_eq(esc("...", b), "...");
	ck_assert_str_eq(esc(".hidden", b), ".hidden");
	ck_assert_str_eq(esc("", b), "%");
	ck_assert_str_eq(esc(" ", b), " ");
	ck_assert_str_eq(esc("héllo wörld", b), "héllo wörld");
	ck_assert_str_eq(esc("%self", b), "%25self");
}
END_TEST

START_TEST(long_names)
{
	char in[600], b[NF_NAME_MAX + 1], c[NF_NAME_MAX + 1];

	memset(in, 'x', sizeof in - 1);
	in[sizeof in - 1] = '\0';
	size_t n = nf_escape_component(in, strlen(in), b);
	ck_assert_uint_le(n, NF_NAME_MAX);
	ck_assert_uint_eq(strlen(b), n);
	ck_assert_ptr_nonnull(strstr(b, "%~"));
	in[599 - 1] = 'y'; /* differs only at the end: the hash tells them apart */
	nf_escape_component(in, strlen(in), c);
	ck_assert_str_ne(b, c);
	/* '%' near the cut is never split */
	memset(in, '%', 200);
	in[200] = '\0';
	n = nf_escape_component(in, strlen(in), b);
	ck_assert_uint_le(n, NF_NAME_MAX);
	const char *tail = strstr(b, "%~");
	ck_assert_ptr_nonnull(tail);
	ck_assert_uint_eq((size_t)(tail - b) % 3, 0);
	/* a 255-byte result is kept whole */
	memset(in, 'z', 255);
	in[255] = '\0';
	ck_assert_uint_eq(nf_escape_component(in, 255, b), 255);
	ck_assert_ptr_null(strstr(b, "%~"));
	/* UTF-8 sequences are not split: 2-byte 'é' repeated */
	for (int i = 0; i < 150; i++)
		memcpy(in + 2 * i, "\xc3\xa9", 2);
	in[300] = '\0';
	n = nf_escape_component(in, 300, b);
	tail = strstr(b, "%~");
	ck_assert_uint_eq((size_t)(tail - b) % 2, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("names");
	TCase *tc = tcase_create("names");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, rule);
	tcase_add_test(tc, long_names);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
