/* tests/reader/test_stream.c — the directory read record by record.
 *
 * The reader splits the root object itself and parses the big tables one
 * record at a time, going back to one jansson parse of the whole text when
 * its scan cannot vouch for the text.  Both ways must give the same model,
 * the same findings and the same uses.json bytes; these tests force each
 * way on the same directories and compare. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "craft.h"

#define OBJ "{\"id\":\"w.a\",\"kind\":\"tensor\",\"shape\":[4,8],\"format\":\"bf16\"," \
	    "\"layout\":\"contiguous_le_v1\",\"offset\":0,\"bytes\":64}"
#define FILES "\"files\":[{\"path\":null,\"payload_bytes\":64}]"
#define COMPS "\"components\":{\"text\":{\"config\":{}}}"

struct opened {
	char *dir, *path;
	struct nf_report r;
	struct nf_artifact *a;
	int rc;
};

static void open_text(struct opened *o, const char *json)
{
	o->dir = craft_dir("stream");
	ck_assert_ptr_nonnull(o->dir);
	o->path = craft_path(o->dir, "s.ninfer");
	struct craft_entry e = {.json = json, .payload_len = 64, .truncate_to = -1};
	ck_assert_int_eq(craft_write_entry(o->path, &e), 0);
	o->rc = craft_open(o->path, &o->r, &o->a);
}

static void close_opened(struct opened *o)
{
	nf_artifact_close(o->a);
	nf_report_free(&o->r);
	unlink(o->path);
	rmdir(o->dir);
	free(o->path);
	free(o->dir);
}

/* The directory with the given bindings and uses members; `extra` is
 * added to the root (e.g. a metadata member with a big integer, which
 * makes the reader parse the whole text). */
static char *dir_text(const char *bindings, const char *uses, const char *extra)
{
	char *s = NULL;
	ck_assert_int_ge(asprintf(&s, "{" COMPS ",\"objects\":[" OBJ "],\"bindings\":%s,\"uses\":%s,"
				  FILES "%s}", bindings, uses, extra), 0);
	return s;
}

#define BIGINT ",\"metadata\":{\"n\":123456789012345678901234567890}"

static void expect_uses_json(const struct opened *o)
{
	json_error_t e;
	json_t *root = json_loadb(o->a->json_text, o->a->json_bytes, 0, &e);
	json_t *uses = json_object_get(root, "uses");
	char *want = NULL;
	if (!root) {
		/* big integers: jansson cannot parse the text alone */
		want = strdup(o->a->uses_json);
	} else if (json_is_array(uses)) {
		char *s = json_dumps(uses, JSON_INDENT(2) | JSON_ENCODE_ANY);
		ck_assert_int_ge(asprintf(&want, "%s\n", s), 0);
		free(s);
	} else {
		want = strdup("[]\n");
	}
	ck_assert_str_eq(o->a->uses_json, want);
	char *again = nf_uses_json(o->a);
	ck_assert_str_eq(again, want);
	free(again);
	free(want);
	json_decref(root);
}

/* Same findings (JSON_INT_INEXACT of the forced whole parse aside). */
static void expect_same(const struct opened *x, const struct opened *y)
{
	size_t j = 0;
	for (size_t i = 0; i < y->r.count; i++) {
		const struct nf_finding *f = &y->r.items[i];
		if (strcmp(f->code, "JSON_INT_INEXACT") == 0)
			continue;
		ck_assert_msg(j < x->r.count, "extra finding %s %s", f->code, f->where);
		const struct nf_finding *g = &x->r.items[j++];
		ck_assert_str_eq(g->code, f->code);
		ck_assert_str_eq(g->where, f->where);
		ck_assert_str_eq(g->evidence, f->evidence);
		ck_assert_int_eq(g->severity, f->severity);
		ck_assert_int_eq(g->scope, f->scope);
	}
	ck_assert_int_eq(j, x->r.count);
	ck_assert_int_eq(x->rc, y->rc);
	if (x->a && y->a) {
		ck_assert_int_eq(x->a->nobjects, y->a->nobjects);
		ck_assert_int_eq(x->a->nbindings, y->a->nbindings);
		ck_assert_int_eq(x->a->nuses, y->a->nuses);
		ck_assert_int_eq(x->a->directory_ok, y->a->directory_ok);
		ck_assert_str_eq(x->a->uses_json, y->a->uses_json);
		for (uint32_t i = 0; i < x->a->nuses; i++) {
			ck_assert_str_eq(x->a->uses[i].parameter, y->a->uses[i].parameter);
			ck_assert_str_eq(x->a->uses[i].input, y->a->uses[i].input);
			ck_assert_int_eq(x->a->uses[i].naux, y->a->uses[i].naux);
		}
	}
}

static const char *const cases[][2] = {
	/* bindings, uses */
	{"{\"p\":{\"object\":\"w.a\"}}", "[]"},
	{"{\"p\":{\"object\":\"w.a\"}}", "[ ]"},
	{"{}", "[]"},
	{"{\"p\":{\"object\":\"w.a\"}}", "[{\"parameter\":\"p\",\"input\":\"x\"}]"},
	{"{\"p\":{\"object\":\"w.a\"}}",
	 " [ {\"parameter\" : \"p\" ,\n\"input\":\"x\",\t\"activation_policy\":\"AllowA4\"} ,\r\n"
	 "{\"parameter\":\"p\",\"input\":\"y\",\"auxiliaries\":{\"s\":{\"parts\":[{\"object\":\"w.a\","
	 "\"range\":[0,8]}]},\"t\":{\"object\":\"w.a\"},\"u\":{},\"v\":{\"parts\":[]}}} ] "},
	/* escapes, non-ASCII, a slash, reals, -0, scalars: the slow dump path */
	{"{\"p\\u00e9/\\\"q\\\"\":{\"object\":\"w.a\"},\"caf\xc3\xa9\":{\"object\":\"w.a\"}}",
	 "[{\"parameter\":\"p\\u00e9/\\\"q\\\"\",\"input\":\"a\\/b\\n\\u0001\"},"
	 "{\"parameter\":\"caf\xc3\xa9\",\"input\":\"\xe2\x82\xac\"},"
	 "{\"parameter\":\"p\",\"input\":\"x\",\"z\":[1.5,-0,1e3,-7,0,true,false,null,{},[]]},"
	 "5,-0,\"s\",null,[],{},[[],[{}]],2.50]"},
	/* findings of every table in one text */
	{"{\"p\":{\"object\":\"nope\"},\"q\":{\"parts\":[{\"object\":\"w.a\",\"range\":[3,3]}]},"
	 "\"\":{\"object\":\"w.a\"},\"r\":5,\"s\":{\"object\":\"w.a\",\"x\":1}}",
	 "[{\"parameter\":\"p\",\"input\":\"x\"},{\"parameter\":\"zz\",\"input\":\"x\"},"
	 "{\"parameter\":\"s\",\"input\":\"i\",\"activation_policy\":\"Nope\"},"
	 "{\"parameter\":\"s\",\"input\":\"i\"},{\"input\":\"x\"},7]"},
	{"{\"p\":{\"object\":\"w.a\"}}",
	 "[{\"parameter\":\"p\",\"input\":\"x\"},{\"parameter\":\"p\",\"input\":\"x\"}]"},
	{"[]", "{}"},
	{"5", "\"x\""},
	/* the plain Use form read without jansson, and its near misses */
	{"{\"p\":{\"object\":\"w.a\"},\"q\":{\"object\":\"w.a\"}}",
	 "[{\"input\":\"b\",\"activation_policy\":\"AllowA8\",\"parameter\":\"p\"},"
	 "{ \"parameter\" :\"q\" , \"input\": \"a\" },"
	 "{\"parameter\":\"q\",\"input\":\"a\"},"
	 "{\"parameter\":\"nope\",\"input\":\"a\"},"
	 "{\"parameter\":\"p\",\"input\":\"\"},"
	 "{\"parameter\":\"\",\"input\":\"z\"},"
	 "{\"parameter\":\"p\"},"
	 "{\"input\":\"p\"},"
	 "{\"parameter\":\"p\",\"input\":\"c\",\"activation_policy\":\"A4\"},"
	 "{\"parameter\":\"p\",\"input\":\"d\",\"activation_policy\":\"\"},"
	 "{\"parameter\":\"p\",\"input\":\"e\",\"activation_policy\":5},"
	 "{\"parameter\":\"p\",\"input\":\"f\",\"x\":\"y\"},"
	 "{\"parameter\":\"p\",\"input\":\"g\x7f\"},"
	 "{\"parameter\":\"p\",\"input\":\"h\xc3\xa9\"},"
	 "{\"param\\u0065ter\":\"p\",\"input\":\"i\"},"
	 "{\"parameter\":\"p\",\"input\":\"j\",\"auxiliaries\":{\"s\":{\"object\":\"nope\"}}},"
	 "{\"parameter\":\"p\",\"input\":\"k\"},"
	 "{\"parameter\":5,\"input\":\"l\"}]"},
};

START_TEST(test_stream_equals_whole)
{
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		char *t1 = dir_text(cases[k][0], cases[k][1], "");
		char *t2 = dir_text(cases[k][0], cases[k][1], BIGINT);
		struct opened x, y;
		open_text(&x, t1);
		open_text(&y, t2);
		ck_assert_msg(craft_find(&y.r, "JSON_INT_INEXACT") != NULL, "case %zu", k);
		expect_same(&x, &y);
		if (x.a) {
			expect_uses_json(&x);
			expect_uses_json(&y);
			/* Lazily: no uses_json after open, the same bytes on demand. */
			struct nf_report r;
			nf_report_init(&r);
			struct nf_artifact *lazy;
			ck_assert_int_eq(nf_artifact_open_flags(x.path, NF_OPEN_LAZY_USES_JSON, &r,
								&lazy), 0);
			ck_assert_int_eq(r.count, x.r.count);
			if (strcmp(cases[k][1], "{}") && strcmp(cases[k][1], "\"x\""))
				ck_assert_ptr_null(lazy->uses_json);
			char *s = nf_uses_json(lazy);
			ck_assert_str_eq(s, x.a->uses_json);
			free(s);
			uint64_t size = 0;
			ck_assert_int_eq(nf_uses_json_size(lazy, &size), 0);
			ck_assert_uint_eq(size, strlen(x.a->uses_json));
			/* without the text: the uses array read from the entry */
			nf_artifact_drop_json_text(lazy);
			ck_assert_ptr_null(lazy->json_text);
			s = nf_uses_json(lazy);
			ck_assert_str_eq(s, x.a->uses_json);
			free(s);
			nf_artifact_close(lazy);
			nf_report_free(&r);
		}
		close_opened(&x);
		close_opened(&y);
		free(t1);
		free(t2);
	}
}
END_TEST

/* Bad JSON anywhere (late in a streamed table, after findings were made
 * for earlier records) gives exactly the one finding of the whole parse. */
static const char *const bad[][3] = {
	/* bindings, uses, code */
	{"{\"p\":{\"object\":\"nope\"}}", "[{\"parameter\":\"p\",\"input\":\"x\"},{\"input\":x}]",
	 "JSON_SYNTAX"},
	{"{\"p\":{\"object\":\"nope\"}}", "[{\"parameter\":\"p\",\"input\":\"x\"},]", "JSON_SYNTAX"},
	{"{\"p\":{\"object\":\"nope\"}}", "[{\"parameter\":\"p\",\"input\":\"x\"} {}]", "JSON_SYNTAX"},
	{"{\"p\":{\"object\":\"nope\"}}", "[{\"parameter\":\"p\",\"input\":\"x\",\"input\":\"y\"}]",
	 "JSON_DUPLICATE_MEMBER"},
	{"{\"p\":{\"object\":\"nope\"},\"p\":{}}", "[]", "JSON_DUPLICATE_MEMBER"},
	{"{\"p\":{\"object\":\"w.a\"},\"q\":1,\"\\u0070\":{}}", "[]", "JSON_DUPLICATE_MEMBER"},
	{"{\"\":1,\"\":2}", "[]", "JSON_DUPLICATE_MEMBER"},
	{"{\"p\\u0000\":{\"object\":\"w.a\"}}", "[]", "JSON_NUL"},
	{"{\"p\":{\"object\":\"w.a\"}}", "[\"a\xff\"]", "JSON_INVALID_UTF8"},
	{"{\"p\":{\"object\":\"w.a\"}}", "[1e999]", "JSON_NUMBER_OVERFLOW"},
	{"{\"p\":{\"object\":\"w.a\"}}", "[\"a\tb\"]", "JSON_SYNTAX"},
	{"{\"p\" {\"object\":\"w.a\"}}", "[]", "JSON_SYNTAX"},
	{"{\"p\":{\"object\":\"w.a\"}}",
	 "[{\"parameter\":\"p\",\"input\":\"x\"},{\"parameter\":\"p\",\"parameter\":\"p\",\"input\":\"y\"}]",
	 "JSON_DUPLICATE_MEMBER"},
	{"{\"p\":{\"object\":\"w.a\"}}",
	 "[{\"parameter\":\"p\",\"input\":\"x\",\"input\":\"y\"}]", "JSON_DUPLICATE_MEMBER"},
	{"{\"p\":{\"object\":\"w.a\"}}", "[{\"parameter\":\"p\",\"input\":\"x\"}{}]",
	 "JSON_SYNTAX"},
	{"{\"p\":{\"object\":\"w.a\"}}", "[{\"parameter\":\"p\",\"input\":\"x\",}]",
	 "JSON_SYNTAX"},
	{"{\"p\":{\"object\":\"w.a\"}}", "[{\"parameter\":\"p\",\"input\":\"x\xff\"}]",
	 "JSON_INVALID_UTF8"},
};

START_TEST(test_stream_bad_json)
{
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		char *t = dir_text(bad[k][0], bad[k][1], "");
		struct opened x;
		open_text(&x, t);
		ck_assert_msg(x.rc < 0, "case %zu", k);
		if (x.r.count != 1)
			craft_dump(&x.r);
		ck_assert_int_eq(x.r.count, 1);
		ck_assert_str_eq(x.r.items[0].code, bad[k][2]);
		close_opened(&x);
		free(t);
	}
}
END_TEST

/* Nesting: deep but legal values are read, too deep ones refused as the
 * whole parse refuses them. */
START_TEST(test_stream_depth)
{
	for (int deep = 0; deep < 2; deep++) {
		int n = deep ? 2100 : 1500;
		char *u = malloc((size_t)n * 2 + 8);
		size_t len = 0;
		u[len++] = '[';
		for (int i = 0; i < n; i++)
			u[len++] = '[';
		for (int i = 0; i < n; i++)
			u[len++] = ']';
		u[len++] = ']';
		u[len] = '\0';
		char *t = dir_text("{}", u, "");
		struct opened x;
		open_text(&x, t);
		if (deep) {
			ck_assert_int_lt(x.rc, 0);
			ck_assert_ptr_nonnull(craft_find(&x.r, "JSON_TOO_DEEP"));
		} else {
			ck_assert_int_eq(x.rc, 0);
			ck_assert_ptr_nonnull(craft_find(&x.r, "FIELD_TYPE"));
			expect_uses_json(&x);
		}
		close_opened(&x);
		free(t);
		free(u);
	}
}
END_TEST

/* A use left out with auxiliaries, then a good one in the same model slot:
 * the good one has no auxiliaries. */
START_TEST(test_stream_use_slot)
{
	char *t = dir_text("{\"p\":{\"object\":\"w.a\"}}",
			   "[{\"parameter\":\"nope\",\"input\":\"a\",\"auxiliaries\":{\"s\":"
			   "{\"object\":\"w.a\"}}},{\"parameter\":\"p\",\"input\":\"b\"},"
			   "{\"parameter\":\"nope\",\"input\":\"c\",\"auxiliaries\":{\"s\":"
			   "{\"object\":\"w.a\"}}},{\"parameter\":\"p\",\"input\":\"d\","
			   "\"activation_policy\":\"AllowA4\"}]", "");
	struct opened x;
	open_text(&x, t);
	ck_assert_int_eq(x.rc, 0);
	ck_assert_int_eq(x.a->nuses, 2);
	ck_assert_str_eq(x.a->uses[0].input, "b");
	ck_assert_int_eq(x.a->uses[0].naux, 0);
	ck_assert_ptr_null(x.a->uses[0].activation_policy);
	ck_assert_str_eq(x.a->uses[1].input, "d");
	ck_assert_int_eq(x.a->uses[1].naux, 0);
	ck_assert_str_eq(x.a->uses[1].activation_policy, "AllowA4");
	close_opened(&x);
	free(t);
}
END_TEST

/* Tables of thousands of records: the producer thread cuts and parses
 * them a batch ahead and waits when the queue is full; findings spread
 * through them, the plain and the jansson Use forms mixed, must come out
 * as from the whole parse, and bad JSON late in a table (many batches
 * after the first) must give the whole parse's one finding. */
static char *big_tables(int n, int bad_use)
{
	size_t cap = (size_t)n * 160 + 64, len = 0;
	char *b = malloc(cap), *u = malloc(cap * 2);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(u);
	len += (size_t)sprintf(b + len, "{");
	for (int i = 0; i < n; i++)
		len += (size_t)sprintf(b + len, "%s\"p%d\":{\"object\":\"%s\"}", i ? "," : "", i,
				       i % 97 == 13 ? "nope" : "w.a");
	sprintf(b + len, "}");
	len = 0;
	len += (size_t)sprintf(u + len, "[");
	for (int i = 0; i < 2 * n; i++) {
		const char *sep = i ? "," : "";
		if (i == bad_use)
			len += (size_t)sprintf(u + len, "%s{\"input\":x}", sep);
		else if (i % 101 == 7)
			len += (size_t)sprintf(u + len, "%s{\"parameter\":\"zz\",\"input\":\"x%d\"}",
					       sep, i);
		else if (i % 103 == 5)
			len += (size_t)sprintf(u + len, "%s{\"parameter\":\"p%d\",\"input\":\"\\u0041%d\"}",
					       sep, i / 2, i);
		else
			len += (size_t)sprintf(u + len, "%s{\"parameter\":\"p%d\",\"input\":\"x%d\"}",
					       sep, i / 2, i);
	}
	sprintf(u + len, "]");
	char *t1 = dir_text(b, u, "");
	free(b);
	free(u);
	return t1;
}

/* n bindings and 2n uses (see big_tables) streamed equal the whole parse,
 * and a syntax error in use bad_use gives the whole parse's one finding. */
static void check_big_tables(int n, int bad_use)
{
	char *t1 = big_tables(n, -1);
	/* the same tables, parsed whole (a big integer elsewhere forces it) */
	char *t2 = malloc(strlen(t1) + sizeof BIGINT);
	ck_assert_ptr_nonnull(t2);
	strcpy(t2, t1);
	strcpy(t2 + strlen(t2) - 1, BIGINT "}");
	struct opened x, y;
	open_text(&x, t1);
	open_text(&y, t2);
	ck_assert_ptr_nonnull(craft_find(&y.r, "JSON_INT_INEXACT"));
	ck_assert_ptr_nonnull(craft_find(&x.r, "USE_PARAMETER_MISSING"));
	ck_assert_ptr_nonnull(x.a);
	/* the bindings with i % 97 == 13 name a missing object: left out */
	ck_assert_int_eq(x.a->nbindings, n - (n - 13 + 96) / 97);
	expect_same(&x, &y);
	expect_uses_json(&x);
	close_opened(&x);
	close_opened(&y);
	free(t1);
	free(t2);

	t1 = big_tables(n, bad_use);
	open_text(&x, t1);
	ck_assert_int_lt(x.rc, 0);
	if (x.r.count != 1)
		craft_dump(&x.r);
	ck_assert_int_eq(x.r.count, 1);
	ck_assert_str_eq(x.r.items[0].code, "JSON_SYNTAX");
	close_opened(&x);
	free(t1);
}

START_TEST(test_stream_big_tables)
{
	check_big_tables(3000, 5000);
}
END_TEST

/* Without threads (pthread_create fails: here because the default stack
 * asked of every new thread is larger than memory), the caller cuts and
 * parses alone: the same model and findings. */
static void *idle(void *arg)
{
	return arg;
}

static void default_stack(size_t bytes)
{
	pthread_attr_t attr;
	ck_assert_int_eq(pthread_attr_init(&attr), 0);
	ck_assert_int_eq(pthread_attr_setstacksize(&attr, bytes), 0);
	ck_assert_int_eq(pthread_setattr_default_np(&attr), 0);
	pthread_attr_destroy(&attr);
}

START_TEST(test_stream_no_threads)
{
	pthread_t t;
	default_stack((size_t)1 << 46);
	ck_assert_int_ne(pthread_create(&t, NULL, idle, NULL), 0);
	check_big_tables(600, 900);
	/* the default back, should the tests share one process (CK_FORK=no) */
	default_stack((size_t)8 << 20);
}
END_TEST

Suite *stream_suite(void);
Suite *stream_suite(void)
{
	Suite *s = suite_create("stream");
	TCase *t = tcase_create("stream");
	tcase_add_test(t, test_stream_equals_whole);
	tcase_add_test(t, test_stream_bad_json);
	tcase_add_test(t, test_stream_depth);
	tcase_add_test(t, test_stream_use_slot);
	tcase_add_test(t, test_stream_big_tables);
	tcase_add_test(t, test_stream_no_threads);
	suite_add_tcase(s, t);
	return s;
}
