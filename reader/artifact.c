/* reader/artifact.c — nf_artifact_open(): header, JSON, model (seed §11.1).
 *
 * Order of work: framing (header.c), the JSON text parsed strictly
 * (duplicate members, invalid UTF-8 and U+0000 refused; whitespace after
 * the value allowed because it is counted in json_bytes, seed §3.1), the
 * root record (seed §4.1), then the tables in dependency order: files
 * (address space), objects, bindings, uses, components.  The model keeps
 * only arena copies.
 *
 * Scale (issue 6): the text is not parsed into one jansson tree (that costs
 * ~15x the text for a big set).  json_scan.c splits the root object; the
 * big tables (objects, bindings, uses) are parsed one record at a time and
 * every other member alone, so the peak is the text + the model + one
 * record.  When the scan cannot vouch for the text, or a record turns out
 * not to be what it said, the findings of that attempt are dropped and the
 * whole text goes to jansson as before: bad JSON is reported in one way
 * only, and both ways give the same findings for the same text
 * (tests/reader/test_stream.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "reader/internal.h"
#include "reader/source.h"
#include "remote/remote.h"

static const char *const root_fields[] = {"components", "objects", "bindings", "uses", "files",
					  "metadata", "provenance", NULL};

/* ---- sorted indices ---------------------------------------------------- */

/* qsort_r would need a context argument; sort (id, index) pairs instead. */
struct name_ix {
	const char *name;
	uint32_t index;
};

static int cmp_name_ix(const void *x, const void *y)
{
	const struct name_ix *a = x, *b = y;
	return strcmp(a->name, b->name);
}

static uint32_t *sorted_index(struct nf_arena *ar, uint32_t n, const char *(*name)(const void *,
										  uint32_t),
			      const void *base)
{
	uint32_t *ix = nf_arena_calloc(ar, n ? n : 1, sizeof *ix);
	struct name_ix *tmp = malloc((n ? n : 1) * sizeof *tmp);
	if (!ix || !tmp) {
		free(tmp);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		tmp[i] = (struct name_ix){name(base, i), i};
	qsort(tmp, n, sizeof *tmp, cmp_name_ix);
	for (uint32_t i = 0; i < n; i++)
		ix[i] = tmp[i].index;
	free(tmp);
	return ix;
}

static const char *object_name(const void *base, uint32_t i)
{
	return ((const struct nf_object *)base)[i].id;
}

static const char *binding_name(const void *base, uint32_t i)
{
	return ((const struct nf_binding *)base)[i].name;
}

bool nf_index_objects(struct nf_artifact *a)
{
	a->priv->obj_by_id = sorted_index(&a->priv->arena, a->nobjects, object_name, a->objects);
	return a->priv->obj_by_id != NULL;
}

bool nf_index_bindings(struct nf_artifact *a)
{
	a->priv->bind_by_name = sorted_index(&a->priv->arena, a->nbindings, binding_name, a->bindings);
	return a->priv->bind_by_name != NULL;
}

static int64_t find_sorted(const uint32_t *ix, uint32_t n, const char *key,
			   const char *(*name)(const void *, uint32_t), const void *base)
{
	if (!ix || !key)
		return -1;
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name(base, ix[mid]), key);
		if (c == 0)
			return ix[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int64_t nf_object_find(const struct nf_artifact *a, const char *id)
{
	return find_sorted(a->priv->obj_by_id, a->nobjects, id, object_name, a->objects);
}

int64_t nf_binding_find(const struct nf_artifact *a, const char *name)
{
	return find_sorted(a->priv->bind_by_name, a->nbindings, name, binding_name, a->bindings);
}

/* ---- JSON ---------------------------------------------------------------- */

static const char *json_error_finding(const json_error_t *e, enum nf_scope *scope)
{
	*scope = NF_SCOPE_DIRECTORY;
	switch (json_error_code(e)) {
	case json_error_invalid_utf8: return "JSON_INVALID_UTF8";
	case json_error_duplicate_key: return "JSON_DUPLICATE_MEMBER";
	case json_error_end_of_input_expected: return "JSON_TRAILING_GARBAGE";
	case json_error_null_character:
	case json_error_null_byte_in_key: return "JSON_NUL";
	case json_error_numeric_overflow: return "JSON_NUMBER_OVERFLOW";
	case json_error_stack_overflow: return "JSON_TOO_DEEP";
	case json_error_out_of_memory: *scope = NF_SCOPE_OPERATIONAL; return "OUT_OF_MEMORY";
	default: return "JSON_SYNTAX";
	}
}

static json_t *parse_json(struct nf_build *b, int *err)
{
	struct nf_artifact *a = b->a;
	size_t len = (size_t)a->json_bytes, rlen = 0;
	char *rewritten = nf_json_rewrite_bigints(a->json_text, len, &rlen, &b->bigints, err);
	if (*err)
		return NULL;
	json_error_t e;
	/* No JSON_DECODE_ANY (the root is a record), no JSON_ALLOW_NUL (an ID
	 * never holds U+0000, seed §1), no JSON_DISABLE_EOF_CHECK (anything but
	 * whitespace after the value is garbage, seed §3.1). */
	json_t *root = rewritten ? json_loadb(rewritten, rlen, JSON_REJECT_DUPLICATES, &e)
				 : json_loadb(a->json_text, len, JSON_REJECT_DUPLICATES, &e);
	bool was_rewritten = rewritten != NULL;
	free(rewritten);
	if (!root) {
		enum nf_scope scope;
		const char *code = json_error_finding(&e, &scope);
		nf_report_add(b->r, NF_SEV_ERROR, scope, code, "json",
			      "seed §1, §3.1: the JSON directory of %s must be one strict UTF-8 JSON "
			      "object with unique member names%s: %s at line %d, column %d, byte %d of "
			      "the JSON", a->entry_name, was_rewritten ? " (big integers rewritten)" : "",
			      e.text, e.line, e.column, e.position);
		*err = scope == NF_SCOPE_OPERATIONAL ? -ENOMEM : -EINVAL;
		return NULL;
	}
	nf_json_resolve_bigints(&b->bigints, root);
	for (size_t i = 0; i < b->bigints.count; i++) {
		const struct nf_bigint *bi = &b->bigints.items[i];
		if (bi->open)
			nf_report_add(b->r, NF_SEV_WARNING, NF_SCOPE_DIRECTORY, "JSON_INT_INEXACT",
				      bi->pointer, "integer %s does not fit a 64-bit integer; this "
				      "reader exposes it as the nearest binary64 value", bi->literal);
	}
	return root;
}

/* A root member: parsed as a whole (v), or a big table streamed from the
 * text record by record (v NULL, [start, end) and count from the scan). */
enum { M_FILES, M_OBJECTS, M_BINDINGS, M_USES, M_COMPONENTS, M_METADATA, M_PROVENANCE, M_N };
static const char *const member_keys[M_N] = {"files", "objects", "bindings", "uses",
					     "components", "metadata", "provenance"};
struct member {
	bool present;
	json_t *v;
	size_t start, end, count;
};

/* A root table: checks the type, reports absence; true when usable. */
static bool root_table(struct nf_build *b, const struct member *m, const char *key, bool array,
		       bool required, bool nonempty, const char *empty_code)
{
	struct nf_where w = {.table = "root"};
	if (!m->present) {
		if (required)
			nf_dir_error(b, &w, "FIELD_MISSING", "seed §4.1: the root member \"%s\" is "
				     "required", key);
		return false;
	}
	/* A streamed member always has the expected container type. */
	if (m->v && (array ? !json_is_array(m->v) : !json_is_object(m->v))) {
		nf_dir_error(b, &w, "FIELD_TYPE", "seed §4.1: the root member \"%s\" is an %s; it is %s",
			     key, array ? "array" : "object", nf_json_type_name(b, m->v));
		return false;
	}
	size_t size = !m->v ? m->count : array ? json_array_size(m->v) : json_object_size(m->v);
	if (nonempty && size == 0)
		nf_dir_error(b, &w, empty_code, "seed §4.1: the root member \"%s\" is non-empty; it "
			     "is %s", key, array ? "[]" : "{}");
	return true;
}

static void member_recs(struct nf_build *b, const struct member *m, struct nf_recs *rs)
{
	if (m->v)
		nf_recs_tree(rs, m->v, &b->stream_failed);
	else
		nf_recs_text(rs, b->a->json_text, m->start, m->end, m->count, &b->stream_failed);
}

static void build_tables(struct nf_build *b, const struct member *mem)
{
	struct nf_artifact *a = b->a;
	bool files = root_table(b, &mem[M_FILES], "files", true, true, true, "FILES_EMPTY");
	bool objects = root_table(b, &mem[M_OBJECTS], "objects", true, true, true, "OBJECTS_EMPTY");
	bool bindings = root_table(b, &mem[M_BINDINGS], "bindings", false, true, false, NULL);
	bool uses = root_table(b, &mem[M_USES], "uses", true, true, false, NULL);
	bool components = root_table(b, &mem[M_COMPONENTS], "components", false, true, true,
				     "COMPONENTS_EMPTY");
	json_t *metadata = root_table(b, &mem[M_METADATA], "metadata", false, false, false, NULL)
				   ? mem[M_METADATA].v : NULL;
	json_t *provenance = root_table(b, &mem[M_PROVENANCE], "provenance", false, false, false,
					NULL) ? mem[M_PROVENANCE].v : NULL;
	struct nf_recs rs;

	if (files)
		nf_build_files(b, mem[M_FILES].v, b->entry_size);
	if (objects) {
		member_recs(b, &mem[M_OBJECTS], &rs);
		nf_build_objects(b, &rs);
		nf_recs_done(&rs);
	}
	if (!a->priv->obj_by_id && !nf_index_objects(a))
		b->ar->failed = true;
	if (bindings) {
		member_recs(b, &mem[M_BINDINGS], &rs);
		nf_build_bindings(b, &rs);
		nf_recs_done(&rs);
	}
	if (!a->priv->bind_by_name && !nf_index_bindings(a))
		b->ar->failed = true;
	if (uses) {
		member_recs(b, &mem[M_USES], &rs);
		nf_build_uses(b, &rs);
		nf_recs_done(&rs);
	}
	if (components)
		nf_build_components(b, mem[M_COMPONENTS].v);

	/* seed §10: metadata is open, but its optional name is a non-empty
	 * public name string. */
	json_t *name = metadata ? json_object_get(metadata, "name") : NULL;
	if (name && (!json_is_string(name) || json_string_length(name) == 0)) {
		struct nf_where mw = {.table = "metadata"};
		nf_dir_error(b, &mw, "METADATA_NAME", "seed §10: metadata.name is a non-empty public "
			     "name string; it is %s", json_is_string(name) ? "\"\""
			     : nf_json_type_name(b, name));
	}
	a->metadata_json = metadata ? nf_pretty(b, metadata) : nf_arena_strdup(b->ar, "{}\n");
	a->provenance_json = provenance ? nf_pretty(b, provenance) : nf_arena_strdup(b->ar, "{}\n");
}

/* The whole tree (the slow way: big integers, or text the scan would not
 * vouch for). */
static void build_model(struct nf_build *b, json_t *root)
{
	struct nf_where w = {.table = "root"};
	struct nf_rec rc = {.b = b, .w = &w, .what = "the root record (seed §4.1)", .obj = root};
	nf_rec_members(&rc, root_fields, NULL);
	struct member mem[M_N] = {{0}};
	for (int k = 0; k < M_N; k++) {
		mem[k].v = json_object_get(root, member_keys[k]);
		mem[k].present = mem[k].v != NULL;
	}
	build_tables(b, mem);
}

/* Record by record from the scan: the big tables (objects, bindings, uses)
 * are streamed when they have their container type; every other member is
 * small and parsed alone.  Sets b->stream_failed when the text is not what
 * the scan said (then the caller parses it whole). */
static void build_model_streamed(struct nf_build *b, const struct nf_root_scan *scan)
{
	const char *t = b->a->json_text;
	struct member mem[M_N] = {{0}};
	json_t *keys = json_object();
	if (!keys) {
		b->ar->failed = true;
		return;
	}
	for (size_t i = 0; i < scan->n && !b->stream_failed; i++) {
		const struct nf_scan_member *sm = &scan->m[i];
		if (json_object_set_new(keys, sm->key, json_null()) < 0)
			b->ar->failed = true;
		int k = 0;
		while (k < M_N && strcmp(member_keys[k], sm->key) != 0)
			k++;
		struct member *m = k < M_N ? &mem[k] : NULL;
		bool stream = (k == M_OBJECTS || k == M_USES) ? t[sm->start] == '['
			      : k == M_BINDINGS ? t[sm->start] == '{' : false;
		if (m) {
			m->present = true;
			m->start = sm->start;
			m->end = sm->end;
			m->count = sm->count;
		}
		if (stream)
			continue;
		json_t *v = nf_json_load_range(t, sm->start, sm->end);
		if (!v)
			b->stream_failed = true;
		if (m)
			m->v = v;
		else
			json_decref(v); /* unknown: only checked to be JSON */
	}
	if (!b->stream_failed) {
		struct nf_where w = {.table = "root"};
		struct nf_rec rc = {.b = b, .w = &w, .what = "the root record (seed §4.1)", .obj = keys};
		nf_rec_members(&rc, root_fields, NULL);
		build_tables(b, mem);
	}
	json_decref(keys);
	for (int k = 0; k < M_N; k++)
		json_decref(mem[k].v);
	if (!b->stream_failed && mem[M_USES].present && !mem[M_USES].v) {
		b->a->priv->uses_range = true;
		b->a->priv->uses_start = mem[M_USES].start;
		b->a->priv->uses_end = mem[M_USES].end;
		b->a->priv->uses_count = mem[M_USES].count;
	}
}

/* Forget a streamed build that turned out to be on text the scan misread
 * (its arena pieces stay until close; this only happens on bad JSON). */
static void reset_model(struct nf_build *b)
{
	struct nf_artifact *a = b->a;
	struct nf_artifact_private *p = a->priv;
	if (p->files)
		for (uint32_t i = 0; i < a->nfiles; i++)
			free(p->files[i].reason);
	free(p->files);
	p->files = NULL;
	p->obj_by_id = NULL;
	p->bind_by_name = NULL;
	p->uses_range = false;
	a->nfiles = 0;
	a->files = NULL;
	a->payload_bytes = 0;
	a->nobjects = 0;
	a->objects = NULL;
	a->nbindings = 0;
	a->bindings = NULL;
	a->nuses = 0;
	a->uses = NULL;
	a->ncomponents = 0;
	a->components = NULL;
	a->uses_json = a->metadata_json = a->provenance_json = NULL;
	free(b->all_ids);
	b->all_ids = NULL;
	b->nall_ids = 0;
	free(b->dropped_bindings);
	b->dropped_bindings = NULL;
	b->ndropped_bindings = b->cap_dropped_bindings = 0;
	free(b->uses_buf);
	b->uses_buf = NULL;
	b->uses_len = b->uses_cap = 0;
	b->dir_error = false;
	b->files_ok = false;
	b->stream_failed = false;
}

/* ---- open / close ------------------------------------------------------ */

static void build_free(struct nf_build *b)
{
	nf_bigints_free(&b->bigints);
	free(b->all_ids);
	b->all_ids = NULL;
	free(b->dropped_bindings);
	b->dropped_bindings = NULL;
	free(b->uses_buf);
	b->uses_buf = NULL;
	nf_arena_free(&b->scratch);
}

static void free_artifact(struct nf_artifact *a)
{
	if (!a)
		return;
	struct nf_artifact_private *p = a->priv;
	if (p) {
		if (p->src)
			p->src->close(a);
		if (p->files)
			for (uint32_t i = 0; i < a->nfiles; i++)
				free(p->files[i].reason);
		free(p->files);
		free(p->uses_json);
		free(p->json_text);
		if (p->json_map)
			munmap(p->json_map, p->json_map_len);
		pthread_mutex_destroy(&p->lock);
		nf_arena_free(&p->arena);
		free(p);
	}
	free(a);
}

char *nf_uses_json(const struct nf_artifact *a)
{
	const struct nf_artifact_private *p = a->priv;
	if (!p->uses_range)
		return a->uses_json ? strdup(a->uses_json) : strdup("[]\n");
	if (a->json_text)
		return nf_uses_pretty(a->json_text, p->uses_start, p->uses_end, p->uses_count);
	/* the text was dropped: the uses array from the entry again, if the
	 * entry is still the file it was (nf_file_pread checks, for a local
	 * entry its fingerprint, for a remote one its ETag) */
	size_t n = p->uses_end - p->uses_start;
	char *text = malloc(n + 1), *out = NULL;
	if (!text)
		return NULL;
	struct nf_artifact *wa = (struct nf_artifact *)a;   /* only the file state changes */
	if (nf_file_pread(wa, 0, text, n, NF_ENTRY_HEADER_BYTES + p->uses_start) == 0) {
		text[n] = '\0';
		out = nf_uses_pretty(text, 0, n, p->uses_count);
	}
	free(text);
	if (!out)
		errno = EIO; /* cut or changed since: not what the model was built from */
	return out;
}

int nf_uses_json_size(const struct nf_artifact *a, uint64_t *size)
{
	const struct nf_artifact_private *p = a->priv;
	if (p->uses_size_known) {
		*size = p->uses_json_size;
		return 0;
	}
	if (a->uses_json) {
		*size = strlen(a->uses_json);
		return 0;
	}
	char *s = nf_uses_json(a);
	if (!s)
		return -ENOMEM;
	*size = strlen(s);
	free(s);
	return 0;
}

void nf_artifact_drop_json_text(struct nf_artifact *a)
{
	free(a->priv->json_text);
	a->priv->json_text = NULL;
	if (a->priv->json_map)
		munmap(a->priv->json_map, a->priv->json_map_len);
	a->priv->json_map = NULL;
	a->json_text = NULL;
}

void nf_artifact_close(struct nf_artifact *a)
{
	free_artifact(a);
}

int nf_artifact_open(const char *entry_path, struct nf_report *report, struct nf_artifact **out)
{
	return nf_artifact_open_opts(entry_path, NULL, report, out);
}

int nf_artifact_open_flags(const char *entry_path, unsigned flags, struct nf_report *report,
			   struct nf_artifact **out)
{
	struct nf_open_opts o = {.flags = flags};
	return nf_artifact_open_opts(entry_path, &o, report, out);
}

int nf_artifact_open_opts(const char *entry_path, const struct nf_open_opts *opts,
			  struct nf_report *report, struct nf_artifact **out)
{
	unsigned flags = opts ? opts->flags : 0;
	*out = NULL;
	struct nf_artifact *a = calloc(1, sizeof *a);
	struct nf_artifact_private *p = calloc(1, sizeof *p);
	if (!a || !p) {
		free(a);
		free(p);
		nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY", "header",
			      "cannot allocate the artifact");
		return -ENOMEM;
	}
	a->priv = p;
	nf_arena_init(&p->arena);
	pthread_mutex_init(&p->lock, NULL);
	p->max_json = opts ? opts->max_json : 0;
	/* Where the files come from (source.h): a URL is a remote set only
	 * when the caller asks for it, so a caller that knows nothing of URLs
	 * keeps treating every entry as a path. */
	bool remote = (flags & NF_OPEN_REMOTE) && nf_remote_is_url(entry_path);
	p->src = remote ? &nf_source_remote : &nf_source_local;
	struct nf_build b = {.a = a, .r = report, .ar = &p->arena, .flags = flags};
	int rc = p->src->open(a, entry_path, opts, report, &b.entry_size);
	if (rc < 0) {
		free_artifact(a);
		return rc;
	}
	nf_arena_init(&b.scratch);
	size_t mark = report->count;
	bool oom_mark = report->oom;
	bool streamed = false;
	struct nf_root_scan scan;
	if (nf_json_scan_root(a->json_text, (size_t)a->json_bytes, &scan)) {
		build_model_streamed(&b, &scan);
		nf_root_scan_free(&scan);
		streamed = !b.stream_failed;
		if (!streamed) {
			nf_report_truncate(report, mark, oom_mark);
			reset_model(&b);
		}
	}
	if (!streamed) {
		int err = 0;
		json_t *root = parse_json(&b, &err);
		if (!root) {
			if (err == -ENOMEM && !nf_report_has_code(report, "OUT_OF_MEMORY"))
				nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY",
					      "json", "cannot parse the JSON directory");
			build_free(&b);
			free_artifact(a);
			return err ? err : -EINVAL;
		}
		if (!json_is_object(root)) {
			nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "FIELD_TYPE", "root",
				      "seed §4.1: the JSON directory is an object; it is %s",
				      nf_json_type_name(&b, root));
			json_decref(root);
			build_free(&b);
			free_artifact(a);
			return -EINVAL;
		}
		build_model(&b, root);
		json_decref(root);
	}
	/* uses.json: built record by record, handed to the artifact. */
	if (b.uses_buf) {
		char *fit = realloc(b.uses_buf, b.uses_len + 1);
		if (fit)
			b.uses_buf = fit;
		p->uses_json = b.uses_buf;
		a->uses_json = p->uses_json;
		b.uses_buf = NULL;
	} else if (!(streamed && p->uses_range && (flags & NF_OPEN_LAZY_USES_JSON))) {
		a->uses_json = nf_arena_strdup(&p->arena, "[]\n");
	} else {
		p->uses_json_size = b.uses_len; /* counted, not made */
		p->uses_size_known = true;
	}
	build_free(&b);

	if (p->arena.failed) {
		nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY", "json",
			      "out of memory while building the model of %s", a->entry_name);
		free_artifact(a);
		return -ENOMEM;
	}
	if (!p->files) {
		/* No usable files table: keep the arrays valid and empty. */
		a->nfiles = 0;
	}
	a->directory_ok = !b.dir_error;

	/* The entry is files[0]: already open, its length already checked. */
	if (a->nfiles > 0 && p->files) {
		struct nf_file_state *st = &p->files[0];
		if (b.files_ok && a->files[0].file_bytes != b.entry_size) {
			st->status = NF_FILE_BAD;
			st->code = "ENTRY_BAD_LENGTH";
			st->reason = strdup("the entry's length differs from entry_payload_start + "
					    "files[0].payload_bytes (seed §3.1)");
		} else {
			st->status = NF_FILE_PRESENT;
		}
	}
	rc = p->src->files_ready(a, report);
	if (rc < 0) {
		free_artifact(a);
		return rc;
	}
	*out = a;
	return 0;
}
