/* reader/artifact.c — nf_artifact_open(): header, JSON, model (seed §11.1).
 *
 * Order of work: framing (header.c), the JSON text parsed strictly
 * (duplicate members, invalid UTF-8 and U+0000 refused; whitespace after
 * the value allowed because it is counted in json_bytes, seed §3.1), the
 * root record (seed §4.1), then the tables in dependency order: files
 * (address space), objects, bindings, uses, components.  The jansson tree
 * is freed before returning; the model keeps only arena copies. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/internal.h"

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

/* A root table: checks the type, reports absence, returns it or NULL. */
static json_t *root_table(struct nf_build *b, json_t *root, const char *key, bool array,
			  bool required, bool nonempty, const char *empty_code)
{
	struct nf_where w = {.table = "root"};
	json_t *v = json_object_get(root, key);
	if (!v) {
		if (required)
			nf_dir_error(b, &w, "FIELD_MISSING", "seed §4.1: the root member \"%s\" is "
				     "required", key);
		return NULL;
	}
	if (array ? !json_is_array(v) : !json_is_object(v)) {
		nf_dir_error(b, &w, "FIELD_TYPE", "seed §4.1: the root member \"%s\" is an %s; it is %s",
			     key, array ? "array" : "object", nf_json_type_name(b, v));
		return NULL;
	}
	if (nonempty && (array ? json_array_size(v) : json_object_size(v)) == 0)
		nf_dir_error(b, &w, empty_code, "seed §4.1: the root member \"%s\" is non-empty; it "
			     "is %s", key, array ? "[]" : "{}");
	return v;
}

static void build_model(struct nf_build *b, json_t *root)
{
	struct nf_artifact *a = b->a;
	struct nf_where w = {.table = "root"};
	struct nf_rec rc = {.b = b, .w = &w, .what = "the root record (seed §4.1)", .obj = root};
	nf_rec_members(&rc, root_fields, NULL);

	json_t *files = root_table(b, root, "files", true, true, true, "FILES_EMPTY");
	json_t *objects = root_table(b, root, "objects", true, true, true, "OBJECTS_EMPTY");
	json_t *bindings = root_table(b, root, "bindings", false, true, false, NULL);
	json_t *uses = root_table(b, root, "uses", true, true, false, NULL);
	json_t *components = root_table(b, root, "components", false, true, true,
					"COMPONENTS_EMPTY");
	json_t *metadata = root_table(b, root, "metadata", false, false, false, NULL);
	json_t *provenance = root_table(b, root, "provenance", false, false, false, NULL);

	if (files)
		nf_build_files(b, files, b->entry_size);
	if (objects)
		nf_build_objects(b, objects);
	if (!a->priv->obj_by_id && !nf_index_objects(a))
		b->ar->failed = true;
	b->bindings_json = bindings;
	if (bindings)
		nf_build_bindings(b, bindings);
	if (!a->priv->bind_by_name && !nf_index_bindings(a))
		b->ar->failed = true;
	if (uses)
		nf_build_uses(b, uses);
	if (components)
		nf_build_components(b, components);

	/* seed §10: metadata is open, but its optional name is a non-empty
	 * public name string. */
	json_t *name = metadata ? json_object_get(metadata, "name") : NULL;
	if (name && (!json_is_string(name) || json_string_length(name) == 0)) {
		struct nf_where mw = {.table = "metadata"};
		nf_dir_error(b, &mw, "METADATA_NAME", "seed §10: metadata.name is a non-empty public "
			     "name string; it is %s", json_is_string(name) ? "\"\""
			     : nf_json_type_name(b, name));
	}
	a->uses_json = uses ? nf_pretty(b, uses) : nf_arena_strdup(b->ar, "[]\n");
	a->metadata_json = metadata ? nf_pretty(b, metadata) : nf_arena_strdup(b->ar, "{}\n");
	a->provenance_json = provenance ? nf_pretty(b, provenance) : nf_arena_strdup(b->ar, "{}\n");
}

/* ---- open / close ------------------------------------------------------ */

static void free_artifact(struct nf_artifact *a)
{
	if (!a)
		return;
	struct nf_artifact_private *p = a->priv;
	if (p) {
		if (p->files)
			for (uint32_t i = 0; i < a->nfiles; i++) {
				if (i > 0 && p->files[i].fd >= 0)
					close(p->files[i].fd);
				free(p->files[i].reason);
			}
		free(p->files);
		if (p->entry_fd >= 0)
			close(p->entry_fd);
		if (p->dirfd >= 0)
			close(p->dirfd);
		free(p->entry_dir);
		pthread_mutex_destroy(&p->lock);
		nf_arena_free(&p->arena);
		free(p);
	}
	free(a);
}

void nf_artifact_close(struct nf_artifact *a)
{
	free_artifact(a);
}

static int set_paths(struct nf_artifact *a, const char *entry_path)
{
	struct nf_artifact_private *p = a->priv;
	a->entry_path = nf_arena_strdup(&p->arena, entry_path);
	const char *slash = strrchr(entry_path, '/');
	a->entry_name = nf_arena_strdup(&p->arena, slash ? slash + 1 : entry_path);
	if (slash == entry_path)
		p->entry_dir = strdup("/");
	else if (slash)
		p->entry_dir = strndup(entry_path, (size_t)(slash - entry_path));
	else
		p->entry_dir = strdup(".");
	return a->entry_path && a->entry_name && p->entry_dir ? 0 : -ENOMEM;
}

int nf_artifact_open(const char *entry_path, struct nf_report *report, struct nf_artifact **out)
{
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
	p->dirfd = -1;
	p->entry_fd = -1;
	if (set_paths(a, entry_path) < 0) {
		free_artifact(a);
		nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY", "header",
			      "cannot allocate the artifact");
		return -ENOMEM;
	}

	/* O_NONBLOCK: a FIFO or device given as the entry must not hang the
	 * open; nf_read_entry() refuses anything but a regular file, for
	 * which the flag changes nothing. */
	p->entry_fd = open(entry_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (p->entry_fd < 0) {
		int e = errno;
		nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "ENTRY_UNREADABLE", "header",
			      "%s: %s", entry_path, strerror(e));
		free_artifact(a);
		return -e;
	}
	struct nf_build b = {.a = a, .r = report, .ar = &p->arena};
	int rc = nf_read_entry(a, p->entry_fd, report, &b.entry_size);
	if (rc < 0) {
		free_artifact(a);
		return rc;
	}
	int err = 0;
	json_t *root = parse_json(&b, &err);
	if (!root) {
		if (err == -ENOMEM && !nf_report_has_code(report, "OUT_OF_MEMORY"))
			nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY", "json",
				      "cannot parse the JSON directory");
		nf_bigints_free(&b.bigints);
		free_artifact(a);
		return err ? err : -EINVAL;
	}
	if (!json_is_object(root)) {
		nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "FIELD_TYPE", "root",
			      "seed §4.1: the JSON directory is an object; it is %s",
			      nf_json_type_name(&b, root));
		json_decref(root);
		nf_bigints_free(&b.bigints);
		free_artifact(a);
		return -EINVAL;
	}
	build_model(&b, root);
	json_decref(root);
	nf_bigints_free(&b.bigints);
	free(b.all_ids);

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
		st->fd = p->entry_fd;
		if (b.files_ok && a->files[0].file_bytes != b.entry_size) {
			st->status = NF_FILE_BAD;
			st->code = "ENTRY_BAD_LENGTH";
			st->reason = strdup("the entry's length differs from entry_payload_start + "
					    "files[0].payload_bytes (seed §3.1)");
		} else {
			st->status = NF_FILE_PRESENT;
		}
	}
	/* The directory of the entry, once: parts are opened beneath it. */
	p->dirfd = open(p->entry_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	*out = a;
	return 0;
}
