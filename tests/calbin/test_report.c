/* tests/calbin/test_report.c — the shared finding machinery (report/):
 * site findings (where composed from file, line, key; gate and class
 * kept), append, the per-gate and per-class counts, and nf_json_text on
 * hand-computed UTF-8 vectors (RFC 3629 §4). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

START_TEST(test_site_where)
{
	struct nf_report r;
	nf_report_init(&r);
	struct nf_site s1 = {.file = "a/m.txt", .line = 12, .key = "ibuf"};
	struct nf_site s2 = {.file = "m.yaml", .key = "one_model_cfg.prefill"};
	struct nf_site s3 = {0};
	nf_report_add_site(&r, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, 'C', NF_CLASS_ERROR, "IO_SIZE",
			   &s1, "size %d", 7);
	nf_report_add_site(&r, NF_SEV_WARNING, NF_SCOPE_FILE, 'E',
			   NF_CLASS_BLOCKED_REPRODUCIBILITY, "X_Y", &s2, "e");
	nf_report_add_site(&r, NF_SEV_INFO, NF_SCOPE_FILE, 'F', NF_CLASS_NONE, "Z_Z", &s3, "e");
	nf_report_add_site(&r, NF_SEV_INFO, NF_SCOPE_FILE, 'A', NF_CLASS_NONE, "Z_Z", NULL, "e");
	ck_assert_uint_eq(r.count, 4);
	ck_assert_str_eq(r.items[0].where, "a/m.txt:12 ibuf");
	ck_assert_str_eq(r.items[0].file, "a/m.txt");
	ck_assert_str_eq(r.items[0].key, "ibuf");
	ck_assert_uint_eq(r.items[0].line, 12);
	ck_assert_int_eq(r.items[0].gate, 'C');
	ck_assert_str_eq(r.items[0].evidence, "size 7");
	ck_assert_str_eq(r.items[1].where, "m.yaml one_model_cfg.prefill");
	ck_assert_uint_eq(r.items[1].line, 0);
	ck_assert_str_eq(r.items[2].where, "package");
	ck_assert_ptr_null(r.items[2].file);
	ck_assert_ptr_null(r.items[2].key);
	ck_assert_str_eq(r.items[3].where, "package");
	ck_assert_uint_eq(nf_report_count_gate(&r, 'C', NF_SEV_ERROR), 1);
	ck_assert_uint_eq(nf_report_count_gate(&r, 'C', NF_SEV_WARNING), 0);
	ck_assert_uint_eq(nf_report_count_class(&r, NF_CLASS_BLOCKED_REPRODUCIBILITY), 1);
	ck_assert_uint_eq(nf_report_count_class(&r, NF_CLASS_NONE), 2);
	ck_assert_str_eq(nf_class_name(NF_CLASS_WARNING_SERVICE), "WARNING_SERVICE");
	ck_assert_ptr_null(nf_class_name(NF_CLASS_NONE));
	ck_assert_int_eq(nf_report_exit_status(&r), 4);
	ck_assert_str_eq(nf_report_verdict(&r), "fail");

	/* The NInfer form is unchanged: no site, no gate, no class. */
	nf_report_add(&r, NF_SEV_WARNING, NF_SCOPE_OBJECT, "OLD_CODE", "objects[1] w", "x");
	ck_assert_str_eq(r.items[4].where, "objects[1] w");
	ck_assert_int_eq(r.items[4].gate, 0);
	ck_assert_int_eq(r.items[4].klass, NF_CLASS_NONE);
	ck_assert_ptr_null(r.items[4].file);
	nf_report_free(&r);
}
END_TEST

START_TEST(test_append)
{
	struct nf_report a, b;
	nf_report_init(&a);
	nf_report_init(&b);
	nf_report_add(&a, NF_SEV_INFO, NF_SCOPE_FILE, "A_1", "x", "1");
	for (int i = 0; i < 40; i++)
		nf_report_add(&b, NF_SEV_WARNING, NF_SCOPE_FILE, "B_1", "y", "%d", i);
	nf_report_append(&a, &b);
	ck_assert_uint_eq(a.count, 41);
	ck_assert_uint_eq(b.count, 0);
	ck_assert_ptr_null(b.items);
	ck_assert_str_eq(a.items[0].code, "A_1");
	ck_assert_str_eq(a.items[40].evidence, "39");
	nf_report_append(&a, &b); /* empty: nothing changes */
	ck_assert_uint_eq(a.count, 41);
	ck_assert_int_eq(nf_report_exit_status(&a), 1);
	nf_report_free(&a);
	nf_report_free(&b);
}
END_TEST

static void text_is(const char *in, const char *want)
{
	json_t *v = nf_json_text(in);
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(json_string_value(v), want);
	json_decref(v);
}

#define FFFD "\xef\xbf\xbd"

START_TEST(test_json_text)
{
	json_t *n = nf_json_text(NULL);
	ck_assert(json_is_null(n));
	text_is("", "");
	text_is("plain/ascii.txt", "plain/ascii.txt");
	text_is("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	text_is("a\xff" "b", "a" FFFD "b");
	text_is("\xc0\xaf", FFFD FFFD);                  /* overlong '/' */
	text_is("\xe0\x80\xaf", FFFD FFFD FFFD);         /* overlong, 3 bytes */
	text_is("\xed\xa0\x80", FFFD FFFD FFFD);         /* surrogate U+D800 */
	text_is("\xed\x9f\xbf", "\xed\x9f\xbf");         /* U+D7FF is fine */
	text_is("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"); /* U+10FFFF */
	text_is("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD); /* above U+10FFFF */
	text_is("x\xe2\x82", "x" FFFD FFFD);             /* truncated at the end */
	text_is("\xe2\x82x", FFFD FFFD "x");
	text_is("\x80\xbf", FFFD FFFD);                  /* lone continuations */
	text_is("\xf5\x80\x80\x80", FFFD FFFD FFFD FFFD);
}
END_TEST

Suite *report_suite(void);
Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_site_where);
	tcase_add_test(tc, test_append);
	tcase_add_test(tc, test_json_text);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(report_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
