/* tests/reader/test_directory.c — every directory rule of seed §3-§9 a
 * generic reader checks, one crafted bad input each, asserting the exact
 * finding code, severity and scope (contract §5).
 *
 * Most cases are table rows: a mutation of a good directory (set or delete
 * a member by JSON pointer, or a textual replacement in the dumped JSON for
 * what jansson cannot build, like integers beyond int64). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "craft.h"

enum op { SET, DEL, TEXT, RAW };

struct mcase {
	const char *name;
	enum op op;
	const char *path;   /* SET/DEL: JSON pointer; TEXT: substring to replace */
	const char *value;  /* SET: JSON text; TEXT: replacement; RAW: the document */
	const char *code;
	enum nf_severity sev;
	enum nf_scope scope;
	int64_t payload_delta;
	bool fatal;         /* nf_artifact_open fails (header/JSON) */
};

#define E NF_SEV_ERROR
#define W NF_SEV_WARNING
#define D NF_SCOPE_DIRECTORY
#define O NF_SCOPE_OBJECT

static const struct mcase cases[] = {
	/* JSON text (seed §1, §3.1) */
	{"trailing garbage", RAW, NULL, "{\"a\":1} x", "JSON_TRAILING_GARBAGE", E, D, 0, true},
	{"duplicate member", TEXT, "\"metadata\":{", "\"metadata\":{\"k\":1,\"k\":2,", "JSON_DUPLICATE_MEMBER", E, D, 0, true},
	{"duplicate root member", TEXT, "\"provenance\":{}", "\"provenance\":{},\"provenance\":{}", "JSON_DUPLICATE_MEMBER", E, D, 0, true},
	{"invalid utf8", TEXT, "\"good\"", "\"g\xff\xfe\"", "JSON_INVALID_UTF8", E, D, 0, true},
	{"nul escape", TEXT, "\"good\"", "\"g\\u0000d\"", "JSON_NUL", E, D, 0, true},
	{"syntax", TEXT, "\"provenance\":{}", "\"provenance\":{,}", "JSON_SYNTAX", E, D, 0, true},
	{"truncated json", RAW, NULL, "{\"components\":{", "JSON_SYNTAX", E, D, 0, true},
	{"root is array", RAW, NULL, "[1,2]", "FIELD_TYPE", E, D, 0, true},
	/* root record (seed §4.1) */
	{"unknown root field", SET, "extra", "1", "FIELD_UNKNOWN", E, D, 0, false},
	{"missing components", DEL, "components", NULL, "FIELD_MISSING", E, D, 0, false},
	{"missing objects", DEL, "objects", NULL, "FIELD_MISSING", E, D, 0, false},
	{"missing bindings", DEL, "bindings", NULL, "FIELD_MISSING", E, D, 0, false},
	{"missing uses", DEL, "uses", NULL, "FIELD_MISSING", E, D, 0, false},
	{"missing files", DEL, "files", NULL, "FIELD_MISSING", E, D, 0, false},
	{"components wrong type", SET, "components", "[]", "FIELD_TYPE", E, D, 0, false},
	{"objects wrong type", SET, "objects", "{}", "FIELD_TYPE", E, D, 0, false},
	{"bindings wrong type", SET, "bindings", "[]", "FIELD_TYPE", E, D, 0, false},
	{"uses wrong type", SET, "uses", "{}", "FIELD_TYPE", E, D, 0, false},
	{"files wrong type", SET, "files", "null", "FIELD_TYPE", E, D, 0, false},
	{"metadata wrong type", SET, "metadata", "[]", "FIELD_TYPE", E, D, 0, false},
	{"metadata name empty", SET, "metadata/name", "\"\"", "METADATA_NAME", E, D, 0, false},
	{"metadata name not string", SET, "metadata/name", "[\"a\"]", "METADATA_NAME", E, D, 0, false},
	{"provenance wrong type", SET, "provenance", "\"x\"", "FIELD_TYPE", E, D, 0, false},
	{"empty components", SET, "components", "{}", "COMPONENTS_EMPTY", E, D, 0, false},
	{"empty objects", SET, "objects", "[]", "OBJECTS_EMPTY", E, D, 0, false},
	{"empty files", SET, "files", "[]", "FILES_EMPTY", E, D, 0, false},
	/* integers (seed §1) */
	{"negative offset", SET, "objects/1/offset", "-256", "INT_NEGATIVE", E, D, 0, false},
	{"u64 max offset", TEXT, "\"offset\":256", "\"offset\":18446744073709551615", "INT_OUT_OF_RANGE", E, D, 0, false},
	{"beyond u64 offset", TEXT, "\"offset\":256", "\"offset\":99999999999999999999", "INT_OUT_OF_RANGE", E, D, 0, false},
	{"hugely negative offset", TEXT, "\"offset\":256", "\"offset\":-99999999999999999999", "INT_NEGATIVE", E, D, 0, false},
	{"beyond u64 range end", TEXT, "\"range\":[0,8]", "\"range\":[0,99999999999999999999]", "INT_OUT_OF_RANGE", E, D, 0, false},
	{"beyond u64 payload_bytes", TEXT, "\"payload_bytes\":282", "\"payload_bytes\":18446744073709551616", "INT_OUT_OF_RANGE", E, D, 0, false},
	{"big int as id", TEXT, "\"id\":\"w.b\"", "\"id\":99999999999999999999", "FIELD_TYPE", E, D, 0, false},
	{"big int in config", SET, "components/text/config/seed", "1", NULL, W, D, 0, false},
	{"real bytes", SET, "objects/0/bytes", "64.0", "FIELD_TYPE", E, D, 0, false},
	{"bool bytes", SET, "objects/0/bytes", "true", "FIELD_TYPE", E, D, 0, false},
	{"string offset", SET, "objects/0/offset", "\"0\"", "FIELD_TYPE", E, D, 0, false},
	{"zero bytes", SET, "objects/0/bytes", "0", "INT_ZERO", E, D, 0, false},
	/* Shape (seed §1) */
	{"rank 17", SET, "objects/0/shape", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,32]", "SHAPE_RANK", E, D, 0, false},
	{"zero dimension", SET, "objects/0/shape", "[0,8]", "SHAPE_DIM_ZERO", E, D, 0, false},
	{"negative dimension", SET, "objects/0/shape", "[-4,8]", "INT_NEGATIVE", E, D, 0, false},
	{"shape not a list", SET, "objects/0/shape", "32", "FIELD_TYPE", E, D, 0, false},
	{"shape overflow", SET, "objects/0/shape", "[4294967296,4294967296,2]", "SHAPE_OVERFLOW", E, D, 0, false},
	/* objects (seed §5) */
	{"unknown object field", SET, "objects/0/extra", "1", "FIELD_UNKNOWN", E, D, 0, false},
	{"resource with shape", SET, "objects/2/shape", "[10]", "FIELD_UNKNOWN", E, D, 0, false},
	{"missing id", DEL, "objects/0/id", NULL, "FIELD_MISSING", E, D, 0, false},
	{"missing kind", DEL, "objects/0/kind", NULL, "FIELD_MISSING", E, D, 0, false},
	{"missing shape", DEL, "objects/0/shape", NULL, "FIELD_MISSING", E, D, 0, false},
	{"missing format", DEL, "objects/0/format", NULL, "FIELD_MISSING", E, D, 0, false},
	{"missing layout", DEL, "objects/0/layout", NULL, "FIELD_MISSING", E, D, 0, false},
	{"missing offset", DEL, "objects/0/offset", NULL, "FIELD_MISSING", E, D, 0, false},
	{"missing bytes", DEL, "objects/0/bytes", NULL, "FIELD_MISSING", E, D, 0, false},
	{"missing encoding", DEL, "objects/2/encoding", NULL, "FIELD_MISSING", E, D, 0, false},
	{"object not a record", SET, "objects/0", "7", "FIELD_TYPE", E, D, 0, false},
	{"unknown kind", SET, "objects/0/kind", "\"weights\"", "OBJECT_KIND_UNKNOWN", E, D, 0, false},
	{"kind wrong type", SET, "objects/0/kind", "1", "FIELD_TYPE", E, D, 0, false},
	{"empty id", SET, "objects/0/id", "\"\"", "ID_EMPTY", E, D, 0, false},
	{"id not a string", SET, "objects/0/id", "3", "FIELD_TYPE", E, D, 0, false},
	{"duplicate tensor id", SET, "objects/1/id", "\"w.a\"", "OBJECT_ID_DUPLICATE", E, D, 0, false},
	{"duplicate across kinds", SET, "objects/2/id", "\"w.a\"", "OBJECT_ID_DUPLICATE", E, D, 0, false},
	{"overlap", SET, "objects/2/offset", "270", "OBJECT_OVERLAP", E, D, 0, false},
	{"unaligned tensor", SET, "objects/1/offset", "128", "OBJECT_MISALIGNED", E, D, 0, false},
	{"past payload end", SET, "objects/2/bytes", "11", "OBJECT_OUT_OF_BOUNDS", E, D, 0, false},
	{"offset+bytes overflow", TEXT, "\"bytes\":10", "\"bytes\":9223372036854775807", "OBJECT_OUT_OF_BOUNDS", E, D, 0, false},
	{"out of order", SET, "objects/0/offset", "512", "OBJECT_ORDER", E, D, 512, false},
	{"divisors zero", SET, "objects/0/divisors", "0", "INT_ZERO", E, D, 0, false},
	/* object scope (contract §5) */
	{"unknown format", SET, "objects/0/format", "\"q3_weird\"", "OBJECT_FORMAT_UNKNOWN", W, O, 0, false},
	{"unknown layout", SET, "objects/0/layout", "\"zigzag_v9\"", "OBJECT_LAYOUT_UNKNOWN", W, O, 0, false},
	{"unknown encoding", SET, "objects/2/encoding", "\"gzip_v1\"", "OBJECT_ENCODING_UNKNOWN", W, O, 0, false},
	{"bad encoded size", SET, "objects/0/bytes", "66", "OBJECT_SIZE_MISMATCH", E, O, 0, false},
	{"pair not allowed", SET, "objects/0/layout", "\"row_split_k128_v1\"", "OBJECT_PAIR_NOT_ALLOWED", E, O, 0, false},
	{"divisors not allowed", SET, "objects/0/divisors", "2", "OBJECT_DIVISORS_NOT_ALLOWED", E, O, 0, false},
	/* bindings and parts (seed §7.1) */
	{"unknown binding field", SET, "bindings/text~1a/extra", "1", "FIELD_UNKNOWN", E, D, 0, false},
	{"unknown part field", SET, "bindings/text~1b/parts/0/extra", "1", "FIELD_UNKNOWN", E, D, 0, false},
	{"binding both forms", SET, "bindings/text~1a/parts", "[{\"object\":\"w.b\",\"range\":[0,8]}]", "BINDING_FORM", E, D, 0, false},
	{"binding neither form", SET, "bindings/text~1a", "{}", "BINDING_FORM", E, D, 0, false},
	{"binding not a record", SET, "bindings/text~1a", "\"w.a\"", "FIELD_TYPE", E, D, 0, false},
	{"dangling binding", SET, "bindings/text~1a/object", "\"w.nope\"", "BINDING_REF_MISSING", E, D, 0, false},
	{"dangling part", SET, "bindings/text~1b/parts/0/object", "\"w.nope\"", "BINDING_REF_MISSING", E, D, 0, false},
	{"binding to resource", SET, "bindings/text~1a/object", "\"r.tok\"", "BINDING_REF_KIND", E, D, 0, false},
	{"part of resource", SET, "bindings/text~1b/parts/0/object", "\"r.tok\"", "BINDING_REF_KIND", E, D, 0, false},
	{"part past object", SET, "bindings/text~1b/parts/0/range", "[0,9]", "PART_RANGE_OUT_OF_BOUNDS", E, D, 0, false},
	{"part reversed", SET, "bindings/text~1b/parts/0/range", "[5,3]", "PART_RANGE_REVERSED", E, D, 0, false},
	{"part empty range", SET, "bindings/text~1b/parts/0/range", "[4,4]", "PART_RANGE_EMPTY", E, D, 0, false},
	{"part range of three", SET, "bindings/text~1b/parts/0/range", "[0,1,2]", "FIELD_TYPE", E, D, 0, false},
	{"part missing range", DEL, "bindings/text~1b/parts/0/range", NULL, "FIELD_MISSING", E, D, 0, false},
	{"part missing object", DEL, "bindings/text~1b/parts/0/object", NULL, "FIELD_MISSING", E, D, 0, false},
	{"empty parts", SET, "bindings/text~1b/parts", "[]", "BINDING_PARTS_EMPTY", E, D, 0, false},
	{"parts not a list", SET, "bindings/text~1b/parts", "{}", "FIELD_TYPE", E, D, 0, false},
	{"empty binding name", SET, "bindings/", "{\"object\":\"w.a\"}", "ID_EMPTY", E, D, 0, false},
	/* uses (seed §8) */
	{"unknown use field", SET, "uses/0/extra", "1", "FIELD_UNKNOWN", E, D, 0, false},
	{"dangling use", SET, "uses/0/parameter", "\"text/none\"", "USE_PARAMETER_MISSING", E, D, 0, false},
	{"duplicate use", SET, "uses/-", "{\"parameter\":\"text/a\",\"input\":\"text/in\"}", "USE_DUPLICATE", E, D, 0, false},
	{"bad policy", SET, "uses/0/activation_policy", "\"AllowA2\"", "USE_POLICY_UNKNOWN", E, D, 0, false},
	{"policy case", SET, "uses/0/activation_policy", "\"allowa8\"", "USE_POLICY_UNKNOWN", E, D, 0, false},
	{"policy not a string", SET, "uses/0/activation_policy", "8", "FIELD_TYPE", E, D, 0, false},
	{"use missing parameter", DEL, "uses/0/parameter", NULL, "FIELD_MISSING", E, D, 0, false},
	{"use missing input", DEL, "uses/0/input", NULL, "FIELD_MISSING", E, D, 0, false},
	{"use not a record", SET, "uses/0", "[]", "FIELD_TYPE", E, D, 0, false},
	{"auxiliaries not an object", SET, "uses/0/auxiliaries", "[]", "FIELD_TYPE", E, D, 0, false},
	{"dangling auxiliary", SET, "uses/0/auxiliaries", "{\"hadamard_signs\":{\"object\":\"w.zz\"}}", "BINDING_REF_MISSING", E, D, 0, false},
	{"auxiliary to resource", SET, "uses/0/auxiliaries", "{\"d\":{\"object\":\"r.tok\"}}", "BINDING_REF_KIND", E, D, 0, false},
	{"auxiliary bad part", SET, "uses/0/auxiliaries", "{\"d\":{\"parts\":[{\"object\":\"w.b\",\"range\":[0,0]}]}}", "PART_RANGE_EMPTY", E, D, 0, false},
	/* components (seed §4.2, §9) */
	{"unknown component field", SET, "components/text/extra", "1", "FIELD_UNKNOWN", E, D, 0, false},
	{"missing config", DEL, "components/text/config", NULL, "FIELD_MISSING", E, D, 0, false},
	{"config not object", SET, "components/text/config", "[]", "FIELD_TYPE", E, D, 0, false},
	{"component not a record", SET, "components/text", "1", "FIELD_TYPE", E, D, 0, false},
	{"empty component id", SET, "components/", "{\"config\":{}}", "ID_EMPTY", E, D, 0, false},
	{"dangling target", SET, "components/mtp", "{\"config\":{},\"target\":\"txet\"}", "COMPONENT_TARGET_MISSING", E, D, 0, false},
	{"target not a string", SET, "components/mtp", "{\"config\":{},\"target\":1}", "FIELD_TYPE", E, D, 0, false},
	{"dangling resource", SET, "components/text/resources/chat", "\"r.none\"", "RESOURCE_REF_MISSING", E, D, 0, false},
	{"resource is tensor", SET, "components/text/resources/chat", "\"w.a\"", "RESOURCE_REF_KIND", E, D, 0, false},
	{"resources not object", SET, "components/text/resources", "[]", "FIELD_TYPE", E, D, 0, false},
	{"proposal on vision", SET, "components/vision", "{\"config\":{},\"target\":\"text\",\"proposal\":{\"domain\":\"full\"}}", "PROPOSAL_NOT_TEXT", E, D, 0, false},
	{"proposal bad domain", SET, "components/text/proposal", "{\"domain\":\"sparse\"}", "PROPOSAL_DOMAIN", E, D, 0, false},
	{"proposal rows with full", SET, "components/text/proposal", "{\"domain\":\"full\",\"rows\":5}", "PROPOSAL_ROWS", E, D, 0, false},
	{"proposal indexed no rows", SET, "components/text/proposal", "{\"domain\":\"indexed\"}", "PROPOSAL_ROWS", E, D, 0, false},
	{"proposal zero rows", SET, "components/text/proposal", "{\"domain\":\"indexed\",\"rows\":0}", "INT_ZERO", E, D, 0, false},
	{"proposal unknown field", SET, "components/text/proposal", "{\"domain\":\"full\",\"x\":1}", "FIELD_UNKNOWN", E, D, 0, false},
	{"proposal missing domain", SET, "components/text/proposal", "{}", "FIELD_MISSING", E, D, 0, false},
	/* files (seed §2.2, §3.1, §3.3) */
	{"unknown file field", SET, "files/0/extra", "1", "FIELD_UNKNOWN", E, D, 0, false},
	{"entry path not null", SET, "files/0/path", "\"m.ninfer\"", "FILES_ENTRY_PATH_NOT_NULL", E, D, 0, false},
	{"missing payload_bytes", DEL, "files/0/payload_bytes", NULL, "FIELD_MISSING", E, D, 0, false},
	{"missing entry path", DEL, "files/0/path", NULL, "FIELD_MISSING", E, D, 0, false},
	{"zero payload_bytes", SET, "files/0/payload_bytes", "0", "INT_ZERO", E, D, 0, false},
	{"file not a record", SET, "files/0", "282", "FIELD_TYPE", E, D, 0, false},
	{"entry one byte long", SET, "files/0/payload_bytes", "282", "ENTRY_BAD_LENGTH", E, D, 1, false},
	{"entry one byte short", SET, "files/0/payload_bytes", "282", "ENTRY_BAD_LENGTH", E, D, -1, false},
	{"part path null", SET, "files/-", "{\"path\":null,\"payload_bytes\":1}", "FIELD_TYPE", E, D, 0, false},
	{"part path dotdot x", SET, "files/-", "{\"path\":\"../x\",\"payload_bytes\":1}", "FILES_PATH_INVALID", E, D, 0, false},
	{"part path a/b", SET, "files/-", "{\"path\":\"a/b\",\"payload_bytes\":1}", "FILES_PATH_INVALID", E, D, 0, false},
	{"part path backslash", SET, "files/-", "{\"path\":\"a\\\\b\",\"payload_bytes\":1}", "FILES_PATH_INVALID", E, D, 0, false},
	{"part path dot", SET, "files/-", "{\"path\":\".\",\"payload_bytes\":1}", "FILES_PATH_INVALID", E, D, 0, false},
	{"part path dotdot", SET, "files/-", "{\"path\":\"..\",\"payload_bytes\":1}", "FILES_PATH_INVALID", E, D, 0, false},
	{"part path empty", SET, "files/-", "{\"path\":\"\",\"payload_bytes\":1}", "FILES_PATH_INVALID", E, D, 0, false},
	{"part path absolute", SET, "files/-", "{\"path\":\"/etc/passwd\",\"payload_bytes\":1}", "FILES_PATH_INVALID", E, D, 0, false},
	{"part path is entry", SET, "files/-", "{\"path\":\"m.ninfer\",\"payload_bytes\":1}", "FILES_PATH_IS_ENTRY", E, D, 0, false},
	{"part path not string", SET, "files/-", "{\"path\":5,\"payload_bytes\":1}", "FIELD_TYPE", E, D, 0, false},
	{"prefix sum overflow", TEXT, "{\"path\":null,\"payload_bytes\":282}", "{\"path\":null,\"payload_bytes\":282},{\"path\":\"p1\",\"payload_bytes\":9223372036854775807},{\"path\":\"p2\",\"payload_bytes\":9223372036854775807}", "PAYLOAD_OVERFLOW", E, D, 0, false},
};

/* ---- JSON pointer editing --------------------------------------------- */

static char *unescape(const char *s, size_t n)
{
	char *t = malloc(n + 1);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '~' && i + 1 < n) {
			t[k++] = s[i + 1] == '1' ? '/' : '~';
			i++;
		} else {
			t[k++] = s[i];
		}
	}
	t[k] = '\0';
	return t;
}

static void edit(json_t *root, const char *path, json_t *value)
{
	json_t *v = root;
	const char *p = path;
	for (;;) {
		const char *slash = strchr(p, '/');
		char *tok = unescape(p, slash ? (size_t)(slash - p) : strlen(p));
		if (!slash) {
			if (json_is_object(v)) {
				if (value)
					json_object_set_new(v, tok, value);
				else
					ck_assert_int_eq(json_object_del(v, tok), 0);
			} else {
				ck_assert(json_is_array(v));
				if (strcmp(tok, "-") == 0)
					json_array_append_new(v, value);
				else if (value)
					json_array_set_new(v, strtoul(tok, NULL, 10), value);
				else
					json_array_remove(v, strtoul(tok, NULL, 10));
			}
			free(tok);
			return;
		}
		json_t *next = json_is_object(v) ? json_object_get(v, tok)
						 : json_array_get(v, strtoul(tok, NULL, 10));
		if (!next && json_is_object(v)) {
			next = json_object();
			json_object_set_new(v, tok, next);
		}
		free(tok);
		ck_assert_ptr_nonnull(next);
		v = next;
		p = slash + 1;
	}
}

static char *replace(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	ck_assert_msg(at != NULL, "'%s' not in the good directory", from);
	char *out = NULL;
	ck_assert_int_ge(asprintf(&out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)), 0);
	return out;
}

/* Build the case's entry in a fresh directory; returns the entry path. */
static char *build_case(const struct mcase *c, char **dirp)
{
	char *dir = craft_dir("dir");
	ck_assert_ptr_nonnull(dir);
	*dirp = dir;
	char *text;
	if (c->op == RAW) {
		text = strdup(c->value);
	} else {
		json_t *d = craft_good_dir();
		ck_assert_ptr_nonnull(d);
		if (c->op == SET) {
			json_error_t e;
			json_t *v = json_loads(c->value, JSON_DECODE_ANY, &e);
			ck_assert_msg(v != NULL, "bad test value %s", c->value);
			edit(d, c->path, v);
		} else if (c->op == DEL) {
			edit(d, c->path, NULL);
		}
		text = json_dumps(d, JSON_COMPACT);
		json_decref(d);
		if (c->op == TEXT) {
			char *t = replace(text, c->path, c->value);
			free(text);
			text = t;
		}
	}
	if (strcmp(c->name, "big int in config") == 0) {
		char *t = replace(text, "\"seed\":1", "\"seed\":18446744073709551616");
		free(text);
		text = t;
	}
	char *path = craft_path(dir, "m.ninfer");
	struct craft_entry e = {.json = text, .truncate_to = -1,
				.payload_len = CRAFT_GOOD_PAYLOAD + c->payload_delta};
	ck_assert_int_eq(craft_write_entry(path, &e), 0);
	free(text);
	return path;
}

START_TEST(test_case)
{
	const struct mcase *c = &cases[_i];
	char *dir;
	char *path = build_case(c, &dir);
	struct nf_report r;
	struct nf_artifact *a = NULL;
	int rc = craft_open(path, &r, &a);
	const char *code = c->code ? c->code : "JSON_INT_INEXACT";
	const struct nf_finding *f = craft_find(&r, code);
	if (!f || f->severity != c->sev || f->scope != c->scope) {
		fprintf(stderr, "case \"%s\": expected %s; report:\n", c->name, code);
		craft_dump(&r);
	}
	ck_assert_msg(f != NULL, "%s: no %s finding", c->name, code);
	ck_assert_msg(f->severity == c->sev, "%s: severity %s", c->name,
		      nf_severity_name(f->severity));
	ck_assert_msg(f->scope == c->scope, "%s: scope %s", c->name, nf_scope_name(f->scope));
	ck_assert_ptr_nonnull(f->where);
	ck_assert(strlen(f->evidence) > 0);
	if (c->fatal) {
		ck_assert_int_lt(rc, 0);
		ck_assert_ptr_null(a);
	} else {
		ck_assert_msg(rc == 0, "%s: open failed %d", c->name, rc);
		ck_assert_ptr_nonnull(a);
		/* directory_ok is false exactly when a directory error exists. */
		ck_assert_int_eq(a->directory_ok, nf_report_count(&r, NF_SEV_ERROR, NF_SCOPE_DIRECTORY) == 0);
		/* A JSON report of any bad input is well-formed. */
		char *doc = nf_report_to_json(&r, a, path, "test", 0, NULL);
		json_error_t e;
		json_t *j = json_loads(doc, 0, &e);
		ck_assert_ptr_nonnull(j);
		json_decref(j);
		free(doc);
	}
	nf_artifact_close(a);
	nf_report_free(&r);
	free(path);
	free(dir);
}
END_TEST

/* Lenient model: an inconsistent object is left out with its bindings;
 * object-scope problems keep the object. */
START_TEST(test_lenient_model)
{
	char *dir;
	struct mcase c = {"x", SET, "objects/0/offset", "1", NULL, E, D, 0, false};
	char *path = build_case(&c, &dir);
	struct nf_report r;
	struct nf_artifact *a = NULL;
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	ck_assert(!a->directory_ok);
	ck_assert(nf_report_has_code(&r, "OBJECT_MISALIGNED"));
	ck_assert_int_eq(a->nobjects, 2);
	ck_assert_int_lt(nf_object_find(a, "w.a"), 0);
	ck_assert_int_ge(nf_object_find(a, "w.b"), 0);
	ck_assert_int_eq(a->objects[0].index, 1);
	/* text/a named w.a: left out silently (the object's error says why),
	 * and the use of text/a with it. */
	ck_assert(!nf_report_has_code(&r, "BINDING_REF_MISSING"));
	ck_assert(!nf_report_has_code(&r, "USE_PARAMETER_MISSING"));
	ck_assert_int_eq(a->nbindings, 1);
	ck_assert_int_lt(nf_binding_find(a, "text/a"), 0);
	ck_assert_int_eq(a->nuses, 0);
	nf_artifact_close(a);
	nf_report_free(&r);
	free(path);
	free(dir);

	struct mcase c2 = {"x", SET, "objects/0/format", "\"q3_weird\"", NULL, W, O, 0, false};
	path = build_case(&c2, &dir);
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	ck_assert(a->directory_ok);
	ck_assert_int_eq(a->nobjects, 3);
	int64_t k = nf_object_find(a, "w.a");
	ck_assert_int_eq(k, 0);
	ck_assert_int_eq(a->objects[k].codec_status, NF_CODEC_UNKNOWN_FORMAT);
	ck_assert(!a->objects[k].size_ok);
	ck_assert_int_eq(nf_report_exit_status(&r), 1);
	nf_artifact_close(a);
	nf_report_free(&r);
	free(path);
	free(dir);

	struct mcase c3 = {"x", SET, "objects/0/bytes", "66", NULL, E, O, 0, false};
	path = build_case(&c3, &dir);
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	ck_assert(a->directory_ok);
	ck_assert_int_eq(a->nobjects, 3);
	ck_assert_int_eq(a->objects[0].codec_status, NF_CODEC_OK);
	ck_assert(!a->objects[0].size_ok);
	ck_assert_int_eq(nf_report_exit_status(&r), 4);
	nf_artifact_close(a);
	nf_report_free(&r);
	free(path);
	free(dir);
}
END_TEST

/* The where of a part finding names the binding and the part. */
START_TEST(test_where_format)
{
	char *dir;
	struct mcase c = {"x", SET, "bindings/text~1b/parts/0/range", "[0,9]", NULL, E, D, 0, false};
	char *path = build_case(&c, &dir);
	struct nf_report r;
	struct nf_artifact *a = NULL;
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	const struct nf_finding *f = craft_find(&r, "PART_RANGE_OUT_OF_BOUNDS");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->where, "bindings[\"text/b\"].parts[0]");
	nf_artifact_close(a);
	nf_report_free(&r);
	free(path);
	free(dir);

	struct mcase c2 = {"x", SET, "objects/1/offset", "128", NULL, E, D, 0, false};
	path = build_case(&c2, &dir);
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	f = craft_find(&r, "OBJECT_MISALIGNED");
	ck_assert_str_eq(f->where, "objects[1] w.b");
	nf_artifact_close(a);
	nf_report_free(&r);
	free(path);
	free(dir);
}
END_TEST

/* Bindings keep their shapes per contract §2; big integers in open objects
 * are warnings only; an auxiliary's where names the role. */
START_TEST(test_shapes_bigints_aux)
{
	char *dir;
	struct mcase c = {"x", SET, "bindings/text~1c",
			  "{\"parts\":[{\"object\":\"w.a\",\"range\":[8,16]},"
			  "{\"object\":\"w.a\",\"range\":[0,8]}]}", NULL, E, D, 0, false};
	char *path = build_case(&c, &dir);
	struct nf_report r;
	struct nf_artifact *a = NULL;
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	ck_assert_int_eq(r.count, 0);
	const struct nf_binding *b = &a->bindings[nf_binding_find(a, "text/c")];
	ck_assert(b->whole_rows);
	ck_assert_int_eq(b->rank, 2);
	ck_assert_int_eq(b->shape[0], 2);
	ck_assert_int_eq(b->shape[1], 8);
	ck_assert_int_eq(b->parts[0].begin, 8);
	nf_artifact_close(a);
	nf_report_free(&r);
	free(path);
	free(dir);

	struct mcase c2 = {"x", SET, "bindings/text~1c",
			   "{\"parts\":[{\"object\":\"w.a\",\"range\":[3,16]}]}", NULL, E, D, 0, false};
	path = build_case(&c2, &dir);
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	b = &a->bindings[nf_binding_find(a, "text/c")];
	ck_assert(!b->whole_rows);
	ck_assert_int_eq(b->rank, 1);
	ck_assert_int_eq(b->shape[0], 13);
	nf_artifact_close(a);
	nf_report_free(&r);
	free(path);
	free(dir);

	/* Integers beyond int64 in metadata and provenance: warnings, the
	 * value stays reachable as a real; a normal field nearby is fine. */
	char *d2 = craft_dir("bigint");
	json_t *d = craft_good_dir();
	char *text = json_dumps(d, JSON_COMPACT);
	json_decref(d);
	char *t1 = NULL;
	const char *at = strstr(text, "\"provenance\":{}");
	ck_assert_ptr_nonnull(at);
	ck_assert_int_ge(asprintf(&t1, "%.*s\"provenance\":{\"seed\":[1,-99999999999999999999]}%s",
				  (int)(at - text), text, at + strlen("\"provenance\":{}")), 0);
	char *p2 = craft_path(d2, "m.ninfer");
	struct craft_entry e = {.json = t1, .payload_len = CRAFT_GOOD_PAYLOAD, .truncate_to = -1};
	ck_assert_int_eq(craft_write_entry(p2, &e), 0);
	ck_assert_int_eq(craft_open(p2, &r, &a), 0);
	const struct nf_finding *f = craft_find(&r, "JSON_INT_INEXACT");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->where, "/provenance/seed/1");
	ck_assert_int_eq(r.count, 1);
	ck_assert(a->directory_ok);
	ck_assert_ptr_nonnull(strstr(a->provenance_json, "-1e20"));
	nf_artifact_close(a);
	nf_report_free(&r);
	free(text);
	free(t1);
	unlink(p2);
	free(p2);
	rmdir(d2);
	free(d2);

	struct mcase c3 = {"x", SET, "uses/0/auxiliaries",
			   "{\"d\":{\"parts\":[{\"object\":\"w.b\",\"range\":[0,0]}]}}",
			   NULL, E, D, 0, false};
	path = build_case(&c3, &dir);
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	f = craft_find(&r, "PART_RANGE_EMPTY");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->where, "uses[0].auxiliaries[\"d\"].parts[0]");
	ck_assert_int_eq(a->nuses, 0);
	nf_artifact_close(a);
	nf_report_free(&r);
	free(path);
	free(dir);
}
END_TEST

/* A raw NUL byte in the JSON text or in its padding is not whitespace. */
START_TEST(test_raw_nul)
{
	char *dir = craft_dir("nul");
	json_t *d = craft_good_dir();
	char *text = json_dumps(d, JSON_COMPACT);
	json_decref(d);
	size_t n = strlen(text);
	char *buf = malloc(n + 4);
	memcpy(buf, text, n);
	memcpy(buf + n, " \0 ", 3);
	char *path = craft_path(dir, "m.ninfer");
	struct craft_entry e = {.json = buf, .json_len = n + 3, .payload_len = CRAFT_GOOD_PAYLOAD,
				.truncate_to = -1};
	ck_assert_int_eq(craft_write_entry(path, &e), 0);
	struct nf_report r;
	struct nf_artifact *a = NULL;
	ck_assert_int_lt(craft_open(path, &r, &a), 0);
	ck_assert_int_eq(r.count, 1);
	ck_assert_int_eq(r.items[0].severity, NF_SEV_ERROR);
	ck_assert_int_eq(r.items[0].scope, NF_SCOPE_DIRECTORY);
	ck_assert_int_eq(strncmp(r.items[0].code, "JSON_", 5), 0);
	nf_report_free(&r);
	/* Inside a string. */
	char *q = strstr(buf, "good");
	q[1] = '\0';
	ck_assert_int_eq(craft_write_entry(path, &e), 0);
	ck_assert_int_lt(craft_open(path, &r, &a), 0);
	ck_assert_int_eq(strncmp(r.items[0].code, "JSON_", 5), 0);
	nf_report_free(&r);
	free(buf);
	free(text);
	unlink(path);
	free(path);
	rmdir(dir);
	free(dir);
}
END_TEST

/* Whitespace after the JSON value is part of json_bytes (seed §3.1). */
START_TEST(test_trailing_whitespace_ok)
{
	char *dir = craft_dir("ws");
	json_t *d = craft_good_dir();
	char *text = json_dumps(d, JSON_COMPACT);
	json_decref(d);
	char *padded = NULL;
	ck_assert_int_ge(asprintf(&padded, "%s \n\t\r   ", text), 0);
	char *path = craft_path(dir, "m.ninfer");
	struct craft_entry e = {.json = padded, .payload_len = CRAFT_GOOD_PAYLOAD, .truncate_to = -1};
	ck_assert_int_eq(craft_write_entry(path, &e), 0);
	struct nf_report r;
	struct nf_artifact *a = NULL;
	ck_assert_int_eq(craft_open(path, &r, &a), 0);
	if (r.count)
		craft_dump(&r);
	ck_assert_int_eq(r.count, 0);
	ck_assert_int_eq(a->json_bytes, strlen(padded));
	ck_assert_mem_eq(a->json_text, padded, strlen(padded));
	nf_artifact_close(a);
	nf_report_free(&r);
	free(text);
	free(padded);
	free(path);
	free(dir);
}
END_TEST

Suite *directory_suite(void);
Suite *directory_suite(void)
{
	Suite *s = suite_create("directory");
	TCase *t = tcase_create("cases");
	tcase_add_loop_test(t, test_case, 0, (int)(sizeof cases / sizeof cases[0]));
	tcase_add_test(t, test_lenient_model);
	tcase_add_test(t, test_where_format);
	tcase_add_test(t, test_trailing_whitespace_ok);
	tcase_add_test(t, test_shapes_bigints_aux);
	tcase_add_test(t, test_raw_nul);
	suite_add_tcase(s, t);
	return s;
}
