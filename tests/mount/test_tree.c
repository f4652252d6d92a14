/* tests/mount/test_tree.c — the tree build without a mount (fs/tree.c,
 * fs/ninfer/tree.c).
 *
 * The naming rule places every binding where man ninferfs.5 (NAMES) says,
 * and the build proves that no directory holds one name twice: two records
 * whose files get one path make it fail with a message naming both.  The
 * only way the rule itself gives two records one path is the cut of long
 * components (rule 4), so the colliding names here are a real FNV-1a 64
 * collision: 250 'n' followed by "Cr9iWW1cQA!" or by "RqveePu1qD@" hash
 * to 0x7941afe34a95d081 (found with Floyd's cycle search on the top 56 bits
 * and a last byte chosen to cancel the low 8; checked by the Python FNV of
 * tests/pylib/nfnames.py in mount-names-rule's oracle, and here by the
 * build's refusal). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/names.h"
#include "fs/ninfer/tree.h"
#include "fs/tree.h"
#include "reader/artifact.h"
#include "reader/writer.h"
#include "tests/fixtures/fixtures.h"

#define N50 "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
#define STEM250 N50 N50 N50 N50 N50
#define COLLIDE_A STEM250 "Cr9iWW1cQA!"
#define COLLIDE_B STEM250 "RqveePu1qD@"

static char tmpdir[] = "/tmp/nf-tree-XXXXXX";
static bool made;

/* Write `fx` as OUT.ninfer in the temp dir (no expect files: the long ids
 * would not fit a file name) and open it. */
static struct nf_artifact *write_open(struct nf_fx *fx, const char *out)
{
	char path[600];
	struct nf_report r;
	struct nf_artifact *a = NULL;
	size_t n = nf_fx_nobjects(fx);
	struct nf_write_object *wo = calloc(n, sizeof *wo);
	json_t *dir = nf_fx_directory(fx);
	struct nf_write_opts opts = {0};

	if (!made) {
		ck_assert_ptr_nonnull(mkdtemp(tmpdir));
		made = true;
	}
	ck_assert_ptr_nonnull(wo);
	nf_fx_write_objects(fx, wo);
	snprintf(path, sizeof path, "%s/%s.ninfer", tmpdir, out);
	nf_report_init(&r);
	ck_assert_int_eq(nf_write_artifact(path, dir, wo, n, &opts, &r), 0);
	nf_report_free(&r);
	json_decref(dir);
	free(wo);
	nf_report_init(&r);
	ck_assert_int_ge(nf_artifact_open(path, &r, &a), 0);
	ck_assert_ptr_nonnull(a);
	ck_assert(a->directory_ok);
	nf_report_free(&r);
	return a;
}

static int build(const struct nf_artifact *a, struct nf_tree *t, char *err, size_t errlen)
{
	struct nf_ninfer_docs docs = {.validation_json = "{}\n",
				      .dtype = NF_DTYPE_F32, .safetensors = true};
	return nf_ninfer_tree_build(t, a, &docs, err, errlen);
}

/* The node at the escaped path `names` (NULL-terminated) below the root. */
static int64_t walk(const struct nf_tree *t, const char *const *names)
{
	int64_t n = 0;

	for (; *names && n >= 0; names++)
		n = nf_tree_lookup(t, (uint32_t)n, *names, strlen(*names));
	return n;
}

static struct nf_fx *base(void)
{
	struct nf_fx *fx = nf_fx_new();
	uint64_t s4[1] = {4};
	uint16_t w[4] = {0x3f80, 0x4000, 0x4040, 0x4080};

	ck_assert_ptr_nonnull(fx);
	ck_assert_int_eq(nf_fx_bf16_words(fx, "w.a", 1, s4, w), 0);
	ck_assert_int_eq(nf_fx_bf16_words(fx, "w.b", 1, s4, w), 0);
	return fx;
}

static void refused(struct nf_fx *fx, const char *out, const char *want1, const char *want2,
		    const char *want3)
{
	struct nf_artifact *a = write_open(fx, out);
	struct nf_tree t;
	char err[2048] = "";

	ck_assert_int_eq(build(a, &t, err, sizeof err), -EEXIST);
	ck_assert_msg(strstr(err, want1) && strstr(err, want2) && strstr(err, want3),
		      "message: %s", err);
	nf_artifact_close(a);
	nf_fx_free(fx);
}

START_TEST(the_collision_is_real)
{
	char a[NF_NAME_MAX + 1], b[NF_NAME_MAX + 1];

	nf_escape_component(COLLIDE_A, strlen(COLLIDE_A), a);
	nf_escape_component(COLLIDE_B, strlen(COLLIDE_B), b);
	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(strstr(a, "%~7941afe34a95d081"));
}
END_TEST

/* Two binding leaves with one name: refused, both records named. */
START_TEST(binding_leaves_collide)
{
	struct nf_fx *fx = base();

	ck_assert_int_eq(nf_fx_component(fx, "text", NULL, NULL, NULL), 0);
	ck_assert_int_eq(nf_fx_bind(fx, "d/" COLLIDE_A, "w.a"), 0);
	ck_assert_int_eq(nf_fx_bind(fx, "d/" COLLIDE_B, "w.b"), 0);
	refused(fx, "bind", "Cr9iWW1cQA!", "RqveePu1qD@", "bindings/d/");
}
END_TEST

/* Two object ids with one name: objects/, planes/, decoded/objects/. */
START_TEST(object_ids_collide)
{
	struct nf_fx *fx = nf_fx_new();
	uint64_t s4[1] = {4};
	uint16_t w[4] = {1, 2, 3, 4};

	ck_assert_int_eq(nf_fx_bf16_words(fx, COLLIDE_A, 1, s4, w), 0);
	ck_assert_int_eq(nf_fx_bf16_words(fx, COLLIDE_B, 1, s4, w), 0);
	ck_assert_int_eq(nf_fx_component(fx, "text", NULL, NULL, NULL), 0);
	ck_assert_int_eq(nf_fx_bind(fx, "p", COLLIDE_A), 0);
	refused(fx, "objs", "object \"nnn", "Cr9iWW1cQA!", "RqveePu1qD@");
}
END_TEST

/* Two resource roles of one component with one name. */
START_TEST(resource_roles_collide)
{
	struct nf_fx *fx = base();

	ck_assert_int_eq(nf_fx_resource(fx, "r.one", "ab", 2), 0);
	ck_assert_int_eq(nf_fx_component(fx, "text", NULL, NULL,
					 json_pack("{s:s,s:s}", COLLIDE_A, "r.one", COLLIDE_B,
						   "r.one")), 0);
	ck_assert_int_eq(nf_fx_bind(fx, "p", "w.a"), 0);
	refused(fx, "roles", "resource", "Cr9iWW1cQA!", "RqveePu1qD@");
}
END_TEST

/* Two component ids with one directory name: their config.json collide. */
START_TEST(components_collide)
{
	struct nf_fx *fx = base();

	ck_assert_int_eq(nf_fx_component(fx, COLLIDE_A, NULL, NULL, NULL), 0);
	ck_assert_int_eq(nf_fx_component(fx, COLLIDE_B, NULL, NULL, NULL), 0);
	ck_assert_int_eq(nf_fx_bind(fx, "p", "w.a"), 0);
	refused(fx, "comps", "component", "Cr9iWW1cQA!", "RqveePu1qD@");
}
END_TEST

/* Long components that share stem and hash as directories are one
 * directory: the leaves under them stay apart and the build succeeds. */
START_TEST(colliding_directories_merge)
{
	struct nf_fx *fx = base();
	struct nf_artifact *a;
	struct nf_tree t;
	char err[2048] = "", esc[NF_NAME_MAX + 1];

	ck_assert_int_eq(nf_fx_component(fx, "text", NULL, NULL, NULL), 0);
	ck_assert_int_eq(nf_fx_bind(fx, COLLIDE_A "/one", "w.a"), 0);
	ck_assert_int_eq(nf_fx_bind(fx, COLLIDE_B "/two", "w.b"), 0);
	a = write_open(fx, "dirs");
	ck_assert_int_eq(build(a, &t, err, sizeof err), 0);
	nf_escape_component(COLLIDE_A, strlen(COLLIDE_A), esc);
	const char *one[] = {"bindings", esc, "one", NULL}, *two[] = {"bindings", esc, "two", NULL};
	ck_assert_int_ge(walk(&t, one), 0);
	ck_assert_int_ge(walk(&t, two), 0);
	nf_tree_free(&t);
	nf_artifact_close(a);
	nf_fx_free(fx);
}
END_TEST

/* The issue's case at the tree level: "x" and "/x" and "/" each where the
 * rule puts them, each its own node and binding. */
START_TEST(leading_slash)
{
	struct nf_fx *fx = base();
	struct nf_artifact *a;
	struct nf_tree t;
	char err[2048] = "";
	uint64_t s4[1] = {4};
	int32_t v[4] = {1, 2, 3, 4};

	ck_assert_int_eq(nf_fx_int32(fx, "w.i32", 1, s4, v), 0);
	ck_assert_int_eq(nf_fx_component(fx, "text", NULL, NULL, NULL), 0);
	ck_assert_int_eq(nf_fx_bind(fx, "x", "w.a"), 0);
	ck_assert_int_eq(nf_fx_bind(fx, "/x", "w.i32"), 0);
	ck_assert_int_eq(nf_fx_bind(fx, "/", "w.b"), 0);
	ck_assert_int_eq(nf_fx_bind(fx, "a", "w.a"), 0);
	ck_assert_int_eq(nf_fx_bind(fx, "a/", "w.b"), 0);
	ck_assert_int_eq(nf_fx_bind(fx, "a//b", "w.b"), 0);
	a = write_open(fx, "slash");
	ck_assert_int_eq(build(a, &t, err, sizeof err), 0);
	static const struct {
		const char *binding;
		const char *path[6];
	} want[] = {
		{"x", {"bindings", "x", NULL}},
		{"/x", {"bindings", "%", "x", NULL}},
		{"/", {"bindings", "%", "%", NULL}},
		{"a", {"bindings", "a", "%self", NULL}},
		{"a/", {"bindings", "a", "%", "%self", NULL}},
		{"a//b", {"bindings", "a", "%", "b", NULL}},
		{"/x", {"decoded", "bindings", "%", "x", NULL}},
		{"a/", {"decoded", "bindings", "a", "%", "%self", NULL}},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		int64_t n = walk(&t, want[i].path);
		ck_assert_msg(n >= 0, "%s not found", want[i].binding);
		ck_assert(!t.nodes[n].is_dir);
		ck_assert_str_eq(a->bindings[t.nodes[n].ref].name, want[i].binding);
	}
	nf_tree_free(&t);
	nf_artifact_close(a);
	nf_fx_free(fx);
}
END_TEST

/* nf_build_verbatim (the calbin family's package/): a real directory's
 * entry names are kept as they are, not escaped ("a%b", "%self", a name
 * with a space, a leading dot); what is not one file name is -EINVAL; two
 * siblings of one name fail the build's proof with -EEXIST. */
static int verbatim(struct nf_builder *b, uint32_t parent, const char *name, size_t len)
{
	struct nf_rec r = {.role = 1, .parent = parent};
	struct nf_view v;

	nf_view_memory(&v, "x", 1);
	return (int)nf_build_verbatim(b, &r, name, len, &v);
}

START_TEST(verbatim_names)
{
	static const char *const kept[] = {"a%b", "%self", "two words", ".hidden", "...", "~1"};
	struct nf_builder b = {0};
	struct nf_tree t;
	char err[512] = "";
	char long_name[300];

	ck_assert_int_eq(nf_build_begin(&b, &t, 0, 16, err, sizeof err), 0);
	struct nf_rec dr = {.role = 2, .parent = 0};
	int64_t dir = nf_build_verbatim(&b, &dr, "pkg dir", 7, NULL);
	ck_assert_int_gt(dir, 0);
	for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
		ck_assert_int_gt(verbatim(&b, (uint32_t)dir, kept[i], strlen(kept[i])), 0);
	ck_assert_int_eq(verbatim(&b, (uint32_t)dir, "", 0), -EINVAL);
	ck_assert_int_eq(verbatim(&b, (uint32_t)dir, ".", 1), -EINVAL);
	ck_assert_int_eq(verbatim(&b, (uint32_t)dir, "..", 2), -EINVAL);
	ck_assert_int_eq(verbatim(&b, (uint32_t)dir, "a/b", 3), -EINVAL);
	ck_assert_int_eq(verbatim(&b, (uint32_t)dir, "a\0b", 3), -EINVAL);
	memset(long_name, 'n', sizeof long_name);
	ck_assert_int_eq(verbatim(&b, (uint32_t)dir, long_name, NF_NAME_MAX + 1), -EINVAL);
	ck_assert_int_gt(verbatim(&b, (uint32_t)dir, long_name, NF_NAME_MAX), 0);
	ck_assert_int_eq(nf_build_end(&b), 0);
	int64_t d = nf_tree_lookup(&t, 0, "pkg dir", 7);
	ck_assert_int_eq(d, dir);
	ck_assert(t.nodes[d].is_dir);
	for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) {
		int64_t n = nf_tree_lookup(&t, (uint32_t)d, kept[i], strlen(kept[i]));
		ck_assert_msg(n > 0, "%s not found as it is", kept[i]);
		ck_assert(!t.nodes[n].is_dir);
	}
	ck_assert_int_eq(t.nodes[d].nchildren, sizeof kept / sizeof *kept + 1);
	nf_tree_free(&t);

	/* two entries of one name under one parent: refused at the end */
	ck_assert_int_eq(nf_build_begin(&b, &t, 0, 16, err, sizeof err), 0);
	ck_assert_int_gt(verbatim(&b, 0, "same", 4), 0);
	ck_assert_int_gt(verbatim(&b, 0, "other", 5), 0);
	ck_assert_int_gt(verbatim(&b, 0, "same", 4), 0);
	ck_assert_int_eq(nf_build_end(&b), -EEXIST);
	ck_assert_msg(strstr(err, "same") != NULL, "message: %s", err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tree");
	TCase *tc = tcase_create("tree");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, the_collision_is_real);
	tcase_add_test(tc, binding_leaves_collide);
	tcase_add_test(tc, object_ids_collide);
	tcase_add_test(tc, resource_roles_collide);
	tcase_add_test(tc, components_collide);
	tcase_add_test(tc, colliding_directories_merge);
	tcase_add_test(tc, leading_slash);
	tcase_add_test(tc, verbatim_names);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (made) {
		char cmd[600];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			failed++;
	}
	return failed ? 1 : 0;
}
