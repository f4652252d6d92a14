/* tests/reader/test_reader.c — the reader's unit tests (check). */
#include <check.h>
#include <stdlib.h>

Suite *directory_suite(void);
Suite *files_suite(void);
Suite *rangemap_suite(void);
Suite *model_suite(void);
Suite *stream_suite(void);

int main(void)
{
	SRunner *sr = srunner_create(directory_suite());
	srunner_add_suite(sr, files_suite());
	srunner_add_suite(sr, rangemap_suite());
	srunner_add_suite(sr, model_suite());
	srunner_add_suite(sr, stream_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
