/* tests/reader/test_model.c — the model of a good artifact, the report
 * documents, the deep check, and a large directory (linear-ish time). */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "craft.h"

static char *write_good(char **dirp, const void *payload, uint64_t len)
{
	char *dir = craft_dir("model");
	ck_assert_ptr_nonnull(dir);
	*dirp = dir;
	json_t *d = craft_good_dir();
	char *text = json_dumps(d, JSON_COMPACT);
	json_decref(d);
	char *path = craft_path(dir, "m.ninfer");
	struct craft_entry e = {.json = text, .payload = payload, .payload_len = len,
				.truncate_to = -1};
	ck_assert_int_eq(craft_write_entry(path, &e), 0);
	free(text);
	return path;
}

static void rm(char *dir, char *path)
{
	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
}

START_TEST(test_good_model)
{
	char *dir;
	char *path = write_good(&dir, NULL, CRAFT_GOOD_PAYLOAD);
	struct nf_report r;
	struct nf_artifact *a;
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	nf_artifact_check_files(a, &r);
	if (r.count)
		craft_dump(&r);
	ck_assert_int_eq(r.count, 0);
	ck_assert(a->directory_ok);
	ck_assert_int_eq(nf_report_exit_status(&r), 0);
	ck_assert_str_eq(nf_report_verdict(&r), "pass");
	ck_assert_str_eq(a->entry_name, "m.ninfer");
	ck_assert_str_eq(a->artifact_id_hex, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");
	ck_assert_int_eq(a->entry_payload_start, 4096);
	ck_assert_int_eq(a->payload_bytes, CRAFT_GOOD_PAYLOAD);
	ck_assert_int_eq(a->nobjects, 3);
	const struct nf_object *o = &a->objects[0];
	ck_assert_str_eq(o->id, "w.a");
	ck_assert_int_eq(o->kind, NF_OBJ_TENSOR);
	ck_assert_str_eq(o->format, "bf16");
	ck_assert_int_eq(o->rank, 2);
	ck_assert_int_eq(o->shape[0], 4);
	ck_assert_int_eq(o->shape[1], 8);
	ck_assert_int_eq(o->elements, 32);
	ck_assert_int_eq(o->divisors, 1);
	ck_assert(o->size_ok);
	ck_assert_int_eq(o->geom.bytes, 64);
	const struct nf_object *res = &a->objects[2];
	ck_assert_int_eq(res->kind, NF_OBJ_RESOURCE);
	ck_assert_ptr_null(res->format);
	ck_assert_str_eq(res->layout, "raw_bytes_v1");
	ck_assert_int_eq(res->elements, 10);
	ck_assert_int_eq(nf_object_find(a, "r.tok"), 2);
	ck_assert_int_eq(nf_object_find(a, "nope"), -1);

	ck_assert_int_eq(a->nbindings, 2);
	int64_t bi = nf_binding_find(a, "text/a");
	ck_assert_int_ge(bi, 0);
	ck_assert(a->bindings[bi].whole);
	ck_assert_int_eq(a->bindings[bi].rank, 2);
	ck_assert_int_eq(a->bindings[bi].elements, 32);
	int64_t bb = nf_binding_find(a, "text/b");
	const struct nf_binding *b = &a->bindings[bb];
	ck_assert(!b->whole);
	ck_assert_int_eq(b->nparts, 1);
	ck_assert_int_eq(b->parts[0].object, 1);
	ck_assert_int_eq(b->parts[0].end, 8);
	ck_assert(b->whole_rows);
	ck_assert_int_eq(b->rank, 2);
	ck_assert_int_eq(b->shape[0], 2);
	ck_assert_int_eq(b->shape[1], 4);

	ck_assert_int_eq(a->nuses, 1);
	ck_assert_str_eq(a->uses[0].parameter, "text/a");
	ck_assert_int_eq(a->uses[0].binding, bi);
	ck_assert_str_eq(a->uses[0].activation_policy, "AllowA8");
	ck_assert_int_eq(a->ncomponents, 1);
	ck_assert_str_eq(a->components[0].id, "text");
	ck_assert_ptr_null(a->components[0].target);
	ck_assert_ptr_null(a->components[0].proposal_json);
	ck_assert_int_eq(a->components[0].nresources, 1);
	ck_assert_str_eq(a->components[0].resources[0].role, "tokenizer.json");
	ck_assert_int_eq(a->components[0].resources[0].object, 2);
	ck_assert_ptr_nonnull(strstr(a->components[0].config_json, "\"hidden_size\": 8"));
	ck_assert(a->components[0].config_json[strlen(a->components[0].config_json) - 1] == '\n');
	ck_assert_ptr_nonnull(strstr(a->metadata_json, "\"name\": \"good\""));
	ck_assert_str_eq(a->provenance_json, "{}\n");
	ck_assert_ptr_nonnull(strstr(a->uses_json, "\"input\": \"text/in\""));
	ck_assert_int_eq(strlen(a->json_text), a->json_bytes);

	/* The contract §4 document. */
	char *argv[] = {"ninfer-check", "--json", path};
	char *doc = nf_report_to_json(&r, a, path, "ninfer-check", 3, argv);
	json_error_t e;
	json_t *j = json_loads(doc, 0, &e);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "schema")), "ninferfs-validation/v1");
	ck_assert_str_eq(json_string_value(json_object_get(j, "verdict")), "pass");
	json_t *tool = json_object_get(j, "tool");
	ck_assert_str_eq(json_string_value(json_object_get(tool, "name")), "ninfer-check");
	ck_assert_int_eq(json_integer_value(json_object_get(tool, "exit_status")), 0);
	ck_assert_int_eq(json_array_size(json_object_get(tool, "argv")), 3);
	ck_assert(json_is_string(json_object_get(tool, "version")));
	json_t *art = json_object_get(j, "artifact");
	ck_assert_int_eq(json_integer_value(json_object_get(art, "objects")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(art, "bindings")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(art, "uses")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(art, "files")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(art, "payload_bytes")), CRAFT_GOOD_PAYLOAD);
	ck_assert_str_eq(json_string_value(json_object_get(art, "artifact_id")),
			 "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(art, "components"), 0)), "text");
	ck_assert_int_eq(json_array_size(json_object_get(j, "findings")), 0);
	json_decref(j);
	free(doc);
	nf_artifact_close(a);
	nf_report_free(&r);
	rm(dir, path);
}
END_TEST

START_TEST(test_report_status)
{
	struct nf_report r;
	nf_report_init(&r);
	ck_assert_int_eq(nf_report_exit_status(&r), 0);
	nf_report_add(&r, NF_SEV_INFO, NF_SCOPE_OBJECT, "X_INFO", "w", "e");
	ck_assert_int_eq(nf_report_exit_status(&r), 0);
	ck_assert_str_eq(nf_report_verdict(&r), "pass");
	nf_report_add(&r, NF_SEV_WARNING, NF_SCOPE_FILE, "FILE_MISSING", "files[1] p", "gone %d", 1);
	ck_assert_int_eq(nf_report_exit_status(&r), 1);
	ck_assert_str_eq(nf_report_verdict(&r), "pass_with_warnings");
	nf_report_add(&r, NF_SEV_ERROR, NF_SCOPE_OBJECT, "OBJECT_SIZE_MISMATCH", "objects[0] a", "e");
	ck_assert_int_eq(nf_report_exit_status(&r), 4);
	ck_assert_str_eq(nf_report_verdict(&r), "fail");
	ck_assert_int_eq(nf_report_count(&r, NF_SEV_ERROR, -1), 1);
	ck_assert_int_eq(nf_report_count(&r, NF_SEV_WARNING, NF_SCOPE_FILE), 1);
	ck_assert_int_eq(nf_report_count(&r, NF_SEV_WARNING, NF_SCOPE_OBJECT), 0);
	ck_assert(nf_report_has_code(&r, "FILE_MISSING"));
	ck_assert_str_eq(r.items[1].evidence, "gone 1");
	nf_report_add(&r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "ENTRY_UNREADABLE", "header", "e");
	ck_assert_int_eq(nf_report_exit_status(&r), 8);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	nf_report_print_text(f, &r, NULL, "x.ninfer");
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "warning FILE_MISSING  files[1] p: gone 1\n"));
	ck_assert_ptr_nonnull(strstr(buf, "error   OBJECT_SIZE_MISMATCH  objects[0] a: e\n"));
	ck_assert_ptr_nonnull(strstr(buf, "x.ninfer: not readable as an artifact; 2 errors, 1 warning: fail\n"));
	free(buf);
	ck_assert_str_eq(nf_severity_name(NF_SEV_ERROR), "error");
	ck_assert_str_eq(nf_scope_name(NF_SCOPE_OPERATIONAL), "operational");
	nf_report_free(&r);
	ck_assert_int_eq(r.count, 0);
}
END_TEST

static void progress_cb(void *arg, uint64_t done, uint64_t total)
{
	uint64_t *seen = arg;
	seen[0] = done;
	seen[1] = total;
}

/* --deep: gaps, padding and codec invariants. */
START_TEST(test_deep)
{
	uint8_t pl[CRAFT_GOOD_PAYLOAD];
	memset(pl, 0, sizeof pl);
	pl[100] = 0x55; /* in the alignment gap [64, 256) */
	char *dir;
	char *path = write_good(&dir, pl, sizeof pl);
	struct nf_report r;
	struct nf_artifact *a;
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	nf_artifact_check_files(a, &r);
	ck_assert_int_eq(r.count, 0);
	uint64_t seen[2] = {0, 0};
	ck_assert_int_eq(nf_artifact_check_deep(a, &r, progress_cb, seen), 0);
	ck_assert_int_eq(seen[0], CRAFT_GOOD_PAYLOAD);
	ck_assert_int_eq(seen[1], CRAFT_GOOD_PAYLOAD);
	const struct nf_finding *f = craft_find(&r, "PAYLOAD_GAP_NONZERO");
	if (!f)
		craft_dump(&r);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->severity, NF_SEV_WARNING);
	ck_assert_ptr_nonnull(strstr(f->evidence, "logical byte 100"));
	ck_assert_int_eq(r.count, 1);
	nf_artifact_close(a);
	nf_report_free(&r);

	/* Non-zero entry padding after the JSON. */
	int fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "x", 1, 4000), 1);
	close(fd);
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	ck_assert_int_eq(nf_artifact_check_deep(a, &r, NULL, NULL), 0);
	f = craft_find(&r, "ENTRY_PADDING_NONZERO");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->scope, NF_SCOPE_FILE);
	nf_artifact_close(a);
	nf_report_free(&r);
	rm(dir, path);
}
END_TEST

/* A codec invariant violation found by --deep: a q2 object whose padding
 * lanes are not canonical (codecs §2.4). */
START_TEST(test_deep_codec)
{
	char *dir = craft_dir("deepq");
	const char *json =
		"{\"components\":{\"text\":{\"config\":{}}},"
		"\"objects\":[{\"id\":\"q\",\"shape\":[2,65],\"format\":\"q2_g64_fp16\","
		"\"layout\":\"row_split_k128_v1\",\"offset\":0,\"bytes\":264,\"kind\":\"tensor\"}],"
		"\"bindings\":{},\"uses\":[],\"files\":[{\"path\":null,\"payload_bytes\":264}]}";
	uint8_t pl[264];
	memset(pl, 0xff, sizeof pl);
	char *path = craft_path(dir, "q.ninfer");
	struct craft_entry e = {.json = json, .payload = pl, .payload_len = sizeof pl,
				.truncate_to = -1};
	ck_assert_int_eq(craft_write_entry(path, &e), 0);
	struct nf_report r;
	struct nf_artifact *a;
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	if (r.count)
		craft_dump(&r);
	ck_assert_int_eq(r.count, 0);
	ck_assert_int_eq(nf_artifact_check_deep(a, &r, NULL, NULL), 0);
	ck_assert_int_ge(r.count, 1);
	ck_assert_int_eq(r.items[0].severity, NF_SEV_WARNING);
	ck_assert_int_eq(r.items[0].scope, NF_SCOPE_OBJECT);
	ck_assert_str_eq(r.items[0].where, "objects[0] q");
	ck_assert_int_eq(strncmp(r.items[0].code, "CODEC_", 6), 0);
	nf_artifact_close(a);
	nf_report_free(&r);
	rm(dir, path);
}
END_TEST

/* 200k objects, bindings and uses: the checks sort or hash, so this stays
 * fast (quadratic work would take minutes). */
START_TEST(test_many_objects)
{
	const uint32_t n = 200000;
	size_t cap = (size_t)n * 300 + 4096;
	char *j = malloc(cap);
	size_t len = 0;
	len += (size_t)sprintf(j + len, "{\"components\":{\"text\":{\"config\":{}}},\"objects\":[");
	for (uint32_t i = 0; i < n; i++)
		len += (size_t)sprintf(j + len, "%s{\"id\":\"w.%u\",\"shape\":[2],\"format\":\"bf16\","
				       "\"layout\":\"contiguous_le_v1\",\"offset\":%u,\"bytes\":4,"
				       "\"kind\":\"tensor\"}", i ? "," : "", (i * 7919u) % n, i * 256);
	len += (size_t)sprintf(j + len, "],\"bindings\":{");
	for (uint32_t i = 0; i < n; i++)
		len += (size_t)sprintf(j + len, "%s\"b/%u\":{\"object\":\"w.%u\"}", i ? "," : "", i, i);
	len += (size_t)sprintf(j + len, "},\"uses\":[");
	for (uint32_t i = 0; i < n; i++)
		len += (size_t)sprintf(j + len, "%s{\"parameter\":\"b/%u\",\"input\":\"x\"}", i ? "," : "", i);
	uint64_t payload = (uint64_t)(n - 1) * 256 + 4;
	len += (size_t)sprintf(j + len, "],\"files\":[{\"path\":null,\"payload_bytes\":%llu}]}",
			       (unsigned long long)payload);
	ck_assert(len < cap);
	char *dir = craft_dir("many");
	char *path = craft_path(dir, "big.ninfer");
	struct craft_entry e = {.json = j, .json_len = len, .payload_len = payload, .truncate_to = -1};
	ck_assert_int_eq(craft_write_entry(path, &e), 0);
	free(j);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct nf_report r;
	struct nf_artifact *a;
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "open of %u objects/bindings/uses: %.2f s\n", n, s);
	if (r.count)
		craft_dump(&r);
	ck_assert_int_eq(r.count, 0);
	ck_assert_int_eq(a->nobjects, n);
	ck_assert_int_eq(a->nbindings, n);
	ck_assert_int_eq(a->nuses, n);
	ck_assert_int_eq(nf_object_find(a, "w.12345"), 0 + nf_object_find(a, "w.12345"));
	ck_assert_int_ge(nf_object_find(a, "w.12345"), 0);
	ck_assert_int_ge(nf_binding_find(a, "b/199999"), 0);
	nf_artifact_close(a);
	nf_report_free(&r);
	ck_assert(s < 30.0);
	rm(dir, path);
}
END_TEST

/* nf_utf8_repair (ninfer-check(1): U+FFFD for each invalid byte), vectors
 * by hand from RFC 3629 §4: every byte that starts no well-formed sequence
 * is one U+FFFD; valid sequences, 1 to 4 bytes, pass unchanged. */
START_TEST(test_utf8_repair)
{
	static const struct {
		const char *in;
		size_t n;
		const char *want;
	} v[] = {
		{"", 0, ""},
		{"plain/ascii", 11, "plain/ascii"},
		{"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"},
		{"\xff", 1, "\xef\xbf\xbd"},
		{"a\xc3(", 3, "a\xef\xbf\xbd("},                       /* lead without continuation */
		{"\xe2\x82", 2, "\xef\xbf\xbd\xef\xbf\xbd"},            /* cut 3-byte sequence */
		{"\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd"},            /* overlong '/' */
		{"\xe0\x80\xaf", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* overlong, 3 bytes */
		{"\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* U+D800 */
		{"\xf4\x90\x80\x80", 4,
		 "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},        /* U+110000 */
		{"\xf4\x8f\xbf\xbf", 4, "\xf4\x8f\xbf\xbf"},              /* U+10FFFF */
		{"\xed\x9f\xbf", 3, "\xed\x9f\xbf"},                      /* U+D7FF */
		{"\x80z", 2, "\xef\xbf\xbdz"},                              /* lone continuation */
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		size_t len = 99;
		char *out = nf_utf8_repair(v[i].in, v[i].n, &len);
		ck_assert_ptr_nonnull(out);
		ck_assert_msg(strcmp(out, v[i].want) == 0, "vector %zu", i);
		ck_assert_uint_eq(len, strlen(v[i].want));
		free(out);
	}
}
END_TEST

/* The JSON text is a mapping of the entry (issue 11): the text is the
 * stored bytes with a NUL after them, and when the entry shrinks under it
 * the SIGBUS of the next touch ends the process with status 8 (the tools'
 * guard, limits.c) instead of killing it.  An exit test: it runs forked. */
START_TEST(test_mapped_json_sigbus)
{
	char *dir;
	char *path = write_good(&dir, NULL, CRAFT_GOOD_PAYLOAD);
	struct nf_report r;
	struct nf_artifact *a;
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	ck_assert_int_eq(r.count, 0);
	ck_assert_int_eq(a->json_text[a->json_bytes], '\0');
	ck_assert_int_eq(a->json_text[0], '{');
	nf_guard_mapped_json(true);
	int fd = open(path, O_WRONLY);   /* the files go now: the test exits below */
	ck_assert_int_ge(fd, 0);
	rm(dir, path);
	ck_assert_int_eq(ftruncate(fd, 0), 0);
	volatile char c = a->json_text[a->json_bytes / 2];   /* SIGBUS: exits 8 */
	(void)c;
	ck_abort_msg("reading the mapped text of a truncated entry did not raise SIGBUS");
}
END_TEST

Suite *model_suite(void);
Suite *model_suite(void)
{
	Suite *s = suite_create("model");
	TCase *t = tcase_create("model");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, test_good_model);
	tcase_add_test(t, test_report_status);
	tcase_add_test(t, test_deep);
	tcase_add_test(t, test_deep_codec);
	tcase_add_test(t, test_many_objects);
	tcase_add_test(t, test_utf8_repair);
	tcase_add_exit_test(t, test_mapped_json_sigbus, 8);
	suite_add_tcase(s, t);
	return s;
}
