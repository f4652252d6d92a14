/* tests/reader/test_check_tool.c — ninfer-check as a program: exit
 * statuses 0/1/4/8/16 (contract §1), --help/--version, --json agreeing
 * with the exit status.  argv[1] is the built binary. */
#include <check.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "craft.h"

extern char **environ;
static const char *tool;
static char *dir;

/* Run the tool; returns its exit status, stdout in *out (malloc'd). */
static int run(char **out, const char *a1, const char *a2, const char *a3)
{
	char *outfile = craft_path(dir, "stdout.txt");
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, outfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	char *argv[5] = {(char *)tool, (char *)a1, (char *)a2, (char *)a3, NULL};
	pid_t pid;
	ck_assert_int_eq(posix_spawn(&pid, tool, &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	if (out) {
		FILE *f = fopen(outfile, "r");
		ck_assert_ptr_nonnull(f);
		char *buf = NULL;
		size_t cap = 0;
		ssize_t n = getdelim(&buf, &cap, '\0', f);
		fclose(f);
		*out = n >= 0 ? buf : (free(buf), strdup(""));
	}
	free(outfile);
	return WEXITSTATUS(st);
}

static char *write_dir(const char *name, const char *set_path, const char *set_value)
{
	json_t *d = craft_good_dir();
	if (set_path) {
		json_error_t e;
		json_t *obj = json_object_get(json_array_get(json_object_get(d, "objects"), 0), "id");
		(void)obj;
		json_t *o0 = json_array_get(json_object_get(d, "objects"), 0);
		json_object_set_new(o0, set_path, json_loads(set_value, JSON_DECODE_ANY, &e));
	}
	char *p = craft_entry_json(dir, name, d, CRAFT_GOOD_PAYLOAD);
	json_decref(d);
	ck_assert_ptr_nonnull(p);
	return p;
}

START_TEST(test_exit_statuses)
{
	char *good = write_dir("good.ninfer", NULL, NULL);
	char *warn = write_dir("warn.ninfer", "format", "\"q3_weird\"");
	char *err = write_dir("err.ninfer", "offset", "1");
	char *obj_err = write_dir("objerr.ninfer", "bytes", "66");
	char *absent = craft_path(dir, "absent.ninfer");
	char *out = NULL;

	ck_assert_int_eq(run(&out, good, NULL, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "0 errors, 0 warnings: pass"));
	free(out);
	ck_assert_int_eq(run(NULL, good, "--deep", NULL), 0);
	ck_assert_int_eq(run(&out, warn, NULL, NULL), 1);
	ck_assert_ptr_nonnull(strstr(out, "OBJECT_FORMAT_UNKNOWN"));
	free(out);
	ck_assert_int_eq(run(&out, err, NULL, NULL), 4);
	ck_assert_ptr_nonnull(strstr(out, "error   OBJECT_MISALIGNED  objects[0] w.a: "));
	free(out);
	ck_assert_int_eq(run(NULL, obj_err, NULL, NULL), 4);
	ck_assert_int_eq(run(NULL, absent, NULL, NULL), 8);
	ck_assert_int_eq(run(NULL, absent, "--json", NULL), 8);
	ck_assert_int_eq(run(NULL, NULL, NULL, NULL), 16);
	ck_assert_int_eq(run(NULL, "--frobnicate", good, NULL), 16);
	ck_assert_int_eq(run(NULL, good, good, NULL), 16);
	ck_assert_int_eq(run(&out, "--help", NULL, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "Usage: ninfer-check"));
	free(out);
	ck_assert_int_eq(run(&out, "-V", NULL, NULL), 0);
	ck_assert_int_eq(strncmp(out, "ninfer-check ", 13), 0);
	free(out);
	ck_assert_int_eq(run(NULL, "-h", NULL, NULL), 0);
	ck_assert_int_eq(run(NULL, "--version", NULL, NULL), 0);

	/* --json: the document's exit_status and verdict match. */
	const char *files[] = {good, warn, err, absent};
	const int want[] = {0, 1, 4, 8};
	const char *verdict[] = {"pass", "pass_with_warnings", "fail", "fail"};
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(run(&out, "--json", files[i], NULL), want[i]);
		json_error_t e;
		json_t *j = json_loads(out, 0, &e);
		ck_assert_msg(j != NULL, "not JSON: %s", e.text);
		ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "tool"),
								    "exit_status")), want[i]);
		ck_assert_str_eq(json_string_value(json_object_get(j, "verdict")), verdict[i]);
		ck_assert_str_eq(json_string_value(json_object_get(j, "schema")),
				 "ninferfs-validation/v1");
		json_decref(j);
		free(out);
	}
	free(good);
	free(warn);
	free(err);
	free(obj_err);
	free(absent);
}
END_TEST

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_check_tool PATH-TO-ninfer-check\n");
		return 2;
	}
	tool = argv[1];
	dir = craft_dir("tool");
	Suite *s = suite_create("ninfer-check");
	TCase *t = tcase_create("exit");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_exit_statuses);
	suite_add_tcase(s, t);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	char *cmd = NULL;
	if (asprintf(&cmd, "rm -rf '%s'", dir) >= 0 && system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	free(cmd);
	free(dir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
