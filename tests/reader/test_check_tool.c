/* tests/reader/test_check_tool.c — ninfer-check as a program: exit
 * statuses 0/1/4/8/16 (contract §1), --help/--version, --json agreeing
 * with the exit status.  argv[1] is the built binary. */
#include <check.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "craft.h"

extern char **environ;
static const char *tool;
static char *dir;

struct usage {
	double seconds;     /* wall clock */
	long maxrss_kb;     /* the child's peak RSS (VmHWM), getrusage */
};

/* Run the tool; returns its exit status, stdout in *out (malloc'd), its
 * wall time and peak RSS in *u (may be NULL). */
static int run_usage(char **out, struct usage *u, const char *a1, const char *a2, const char *a3)
{
	char *outfile = craft_path(dir, "stdout.txt");
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, outfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	char *argv[5] = {(char *)tool, (char *)a1, (char *)a2, (char *)a3, NULL};
	pid_t pid;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(posix_spawn(&pid, tool, &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	int st;
	struct rusage ru;
	ck_assert_int_eq(wait4(pid, &st, 0, &ru), pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert(WIFEXITED(st));
	if (u) {
		u->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		u->maxrss_kb = ru.ru_maxrss;
	}
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

static int run(char **out, const char *a1, const char *a2, const char *a3)
{
	return run_usage(out, NULL, a1, a2, a3);
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

/* Issue 11 item 5: a 16 GiB sparse entry whose header claims 8 GiB of JSON
 * with a syntax error at byte 6 (then zeros).  The JSON is mapped, not read
 * whole: JSON_SYNTAX within seconds at a bounded peak RSS (the old reader
 * malloc'd and read the 8 GiB: 40 s, 8.4 GB).  Above --max-json (default 4
 * GiB, ninfer-check(1)) the claim is refused before anything is mapped. */
static void write_sparse(const char *path, const char *prefix)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	uint8_t h[32] = {0x4e, 0x49, 0x4e, 0x46, 0x45, 0x52, 0x00, 0x03};
	uint64_t claim = 8ull << 30;
	for (int i = 0; i < 8; i++)
		h[8 + i] = (uint8_t)(claim >> (8 * i));
	ck_assert_int_eq(pwrite(fd, h, sizeof h, 0), 32);
	ck_assert_int_eq(pwrite(fd, prefix, strlen(prefix), 32), (ssize_t)strlen(prefix));
	ck_assert_int_eq(ftruncate(fd, (off_t)(16ull << 30)), 0);
	close(fd);
}

START_TEST(test_huge_json_claim)
{
	char *path = craft_path(dir, "sparse.ninfer");
	/* the JSON starts with the prefix, then (sparse) zero bytes: each is
	 * a syntax error within its first 21 bytes, which the scan of the
	 * root and the big-integer pass must see too (they used to skip to the
	 * end of a string or value before anything checked it) */
	static const struct {
		const char *prefix, *at;
	} bad[] = {
		{"{\"ob\":]", "byte 7 of the JSON"},   /* ']' is byte 6 (jansson counts from 1) */
		{"{\"objects\":[{\"id\":\"a", "byte 20 of the JSON"}, /* unterminated string */
		{"{\"a\":\"x\\", "byte 9 of the JSON"},
		{"{\"a\":123", "byte 9 of the JSON"},
		{"{\"a\":[1,2,", "byte 11 of the JSON"},
		{"{\"a\":{\"b\":tru", "byte 13 of the JSON"},
		{"{\"a\":[{\"b\":\"c\"}", "byte 16 of the JSON"},
	};
	char *out = NULL;
	struct usage u;
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		write_sparse(path, bad[k].prefix);
		ck_assert_int_eq(run_usage(&out, &u, "--max-json=16G", path, NULL), 4);
		fprintf(stderr, "8 GiB claim, JSON %s then zeros: %.2f s, peak RSS %ld kB\n",
			bad[k].prefix, u.seconds, u.maxrss_kb);
		ck_assert_msg(strstr(out, "error   JSON_SYNTAX  json: ") != NULL, "%s", out);
		ck_assert_msg(strstr(out, bad[k].at) != NULL, "%s", out);
		ck_assert_msg(u.seconds < 5.0, "%s: %.2f s", bad[k].prefix, u.seconds);
		ck_assert_msg(u.maxrss_kb < 256 * 1024, "%s: peak RSS %ld kB", bad[k].prefix,
			      u.maxrss_kb);
		free(out);
	}

	/* the default ceiling (4 GiB) and a given one: refused, nothing read */
	ck_assert_int_eq(run_usage(&out, &u, path, NULL, NULL), 8);
	ck_assert_msg(strstr(out, "error   JSON_TOO_LARGE  header: ") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "json_bytes 8589934592 is above the ceiling of 4294967296") != NULL,
		      "%s", out);
	ck_assert_msg(u.maxrss_kb < 64 * 1024, "peak RSS %ld kB", u.maxrss_kb);
	free(out);
	ck_assert_int_eq(run(&out, "--max-json=1M", path, NULL), 8);
	ck_assert_msg(strstr(out, "above the ceiling of 1048576") != NULL, "%s", out);
	free(out);
	ck_assert_int_eq(run(&out, "--max-json=1M", "--json", path), 8);
	ck_assert_msg(strstr(out, "\"code\": \"JSON_TOO_LARGE\"") != NULL, "%s", out);
	free(out);
	ck_assert_int_eq(run(NULL, "--max-json=12abc", path, NULL), 16);
	ck_assert_int_eq(run(NULL, "--max-json=0", path, NULL), 16);
	/* a good set within a small ceiling still passes */
	char *good = write_dir("good2.ninfer", NULL, NULL);
	ck_assert_int_eq(run(NULL, "--max-json=64K", good, NULL), 0);
	ck_assert_int_eq(run(NULL, "--max-json=10", good, NULL), 8);
	unlink(path);
	free(path);
	free(good);
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
	tcase_add_test(t, test_huge_json_claim);
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
