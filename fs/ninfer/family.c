/* fs/ninfer/family.c — the NInfer family (fs/family.h): its options, the
 * artifact opened and validated by the reader, its files as the adapter's
 * set, the tree, and the ops table.
 *
 * Open: the set is opened and validated before anything is mounted
 * (nf_artifact_open_opts, then every part: nf_artifact_check_files); the
 * findings go to stderr; a set with directory errors is refused (exit 4)
 * unless -o lenient; one the reader cannot read at all is exit 8.  The
 * JSON text is dropped once validated (uses.json and artifact.json are
 * read from the entry when opened): on a large set it is a third of the
 * memory, so it goes before the tree is built, the daemon's peak. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs/ninfer/ninfer.h"
#include "fs/ninfer/tree.h"
#include "remote/remote.h"

/* ---- options ----------------------------------------------------------- */

/* "key=value" of `key`: a copy of the value into *slot (the last wins). */
static int take_value(const char *arg, const char *key, char **slot)
{
	size_t k = strlen(key);
	char *v;

	if (strncmp(arg, key, k) != 0 || arg[k] != '=')
		return 0;
	v = strdup(arg + k + 1);
	if (v == NULL)
		return 0;   /* libfuse then refuses it as unknown: exit 16 */
	free(*slot);
	*slot = v;
	return 1;
}

static int ninfer_option(void *opts, const char *arg)
{
	struct nf_ninfer_opts *o = opts;

	return take_value(arg, "decoded_dtype", &o->decoded_dtype) ||
	       take_value(arg, "max_json", &o->max_json);
}

static void ninfer_opts_free(void *opts)
{
	struct nf_ninfer_opts *o = opts;

	free(o->decoded_dtype);
	free(o->max_json);
}

static int ninfer_check(void *opts, const char *prog)
{
	struct nf_ninfer_opts *o = opts;

	if (o->decoded_dtype == NULL || !strcmp(o->decoded_dtype, "f32"))
		o->dtype = NF_DTYPE_F32;
	else if (!strcmp(o->decoded_dtype, "bf16"))
		o->dtype = NF_DTYPE_BF16;
	else if (!strcmp(o->decoded_dtype, "f16"))
		o->dtype = NF_DTYPE_F16;
	else {
		fprintf(stderr, "%s: decoded_dtype must be f32, bf16 or f16, not '%s'\n", prog,
			o->decoded_dtype);
		return -1;
	}
	o->max_json_bytes = NF_DEFAULT_MAX_JSON;
	if (o->max_json && (nf_parse_size(o->max_json, &o->max_json_bytes) != 0 ||
			    o->max_json_bytes == 0)) {
		fprintf(stderr, "%s: max_json must be a positive size (e.g. 4G), not '%s'\n", prog,
			o->max_json);
		return -1;
	}
	return 0;
}

/* ---- the files, as the adapter's set (the reader's files interface) ---- */

static int set_acquire(void *arg, uint32_t i)
{
	return nf_file_acquire(((struct nf_ninfer *)arg)->a, i);
}

static void set_release(void *arg, uint32_t i)
{
	nf_file_release(((struct nf_ninfer *)arg)->a, i);
}

static enum nf_fstatus set_status(void *arg, uint32_t i, const char **reason)
{
	switch (nf_file_status(((struct nf_ninfer *)arg)->a, i, reason)) {
	case NF_FILE_PRESENT: return NF_FSTATUS_PRESENT;
	case NF_FILE_MISSING: return NF_FSTATUS_MISSING;
	case NF_FILE_BAD: return NF_FSTATUS_BAD;
	default: return NF_FSTATUS_UNCHECKED;
	}
}

static int set_verify(void *arg, uint32_t i)
{
	return nf_file_verify(((struct nf_ninfer *)arg)->a, i);
}

static void set_change_hook(void *arg, void (*hook)(void *, uint32_t), void *hook_arg)
{
	nf_files_set_change_hook(((struct nf_ninfer *)arg)->a, hook, hook_arg);
}

/* A remote set's files.json shows each file's requests and cache hits:
 * their sum moves when it would read differently. */
static uint64_t remote_activity(const struct nf_artifact *a)
{
	struct nf_remote *r = nf_artifact_remote(a);
	struct nf_remote_file_stats st;
	uint64_t sum = 0;

	for (uint32_t i = 0; r && i < a->nfiles; i++)
		if (nf_remote_file_stats(r, i, &st) == 0)
			sum += st.requests + st.cache_hits;
	return sum;
}

static void set_stats(void *arg, struct nf_set_stats *out)
{
	const struct nf_artifact *a = ((struct nf_ninfer *)arg)->a;
	struct nf_files_stats st;

	nf_files_stats(a, &st);
	*out = (struct nf_set_stats){.open = st.open, .open_max = st.open_max,
				     .evictions = st.evictions, .reopens = st.reopens,
				     .changes = st.changes, .activity = remote_activity(a)};
}

static char *set_files_json(void *arg)
{
	return nf_files_json(((struct nf_ninfer *)arg)->a);
}

static const struct nf_set_ops set_ops = {
	.acquire = set_acquire,
	.release = set_release,
	.status = set_status,
	.verify = set_verify,
	.set_change_hook = set_change_hook,
	.stats = set_stats,
	.files_json = set_files_json,
};

/* Display names (the entry's basename, the parts' paths) and the local
 * paths the watch uses (the entry as given; a part relative to the
 * entry's directory, as the reader resolves it).  A part path that is not
 * a plain name beside the entry broke seed §3.3 and is never opened: it
 * gets no watch (it would name another directory). */
static bool plain_name(const char *p)
{
	return p[0] != '\0' && strchr(p, '/') == NULL && strcmp(p, ".") != 0 && strcmp(p, "..") != 0;
}

static int make_names(struct nf_ninfer *n)
{
	const struct nf_artifact *a = n->a;
	bool remote = nf_artifact_remote(a) != NULL;
	const char *slash = strrchr(a->entry_path, '/');
	size_t dirlen = slash ? (size_t)(slash - a->entry_path) + 1 : 0;

	n->names = calloc(a->nfiles, sizeof *n->names);
	n->paths = calloc(a->nfiles, sizeof *n->paths);
	n->owned_paths = calloc(a->nfiles, sizeof *n->owned_paths);
	if (n->names == NULL || n->paths == NULL || n->owned_paths == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < a->nfiles; i++) {
		const char *p = a->files[i].path;
		n->names[i] = p ? p : a->entry_name;
		if (remote) {
			/* a remote file is shown by its URL (redacted), and has
			 * no local path to watch: the ETag says when it changed */
			const char *url = nf_file_url(a, i);
			n->names[i] = url ? url : n->names[i];
			continue;
		}
		if (p == NULL || !plain_name(p)) {
			n->paths[i] = p == NULL ? a->entry_path : NULL;
			continue;
		}
		if (asprintf(&n->owned_paths[i], "%.*s%s", (int)dirlen, a->entry_path, p) < 0) {
			n->owned_paths[i] = NULL;
			return -ENOMEM;
		}
		n->paths[i] = n->owned_paths[i];
	}
	return 0;
}

/* ---- open ---------------------------------------------------------------- */

/* Open and validate; returns an exit status (0: go on). */
static int open_artifact(struct nf_ninfer *n, const struct nf_mount *m)
{
	const char *entry = n->entry;   /* fit to print: a URL is redacted */
	struct nf_report *r = &n->report;
	int rc;

	/* uses.json is made on open (nf_uses_json), not kept: for a large set
	 * it is the largest text of the model after the JSON itself */
	struct nf_open_opts oo = {.flags = NF_OPEN_LAZY_USES_JSON, .max_json = n->opt->max_json_bytes,
				  .remote = m->remote};
	if (m->remote)
		oo.flags |= NF_OPEN_REMOTE;
	rc = nf_artifact_open_opts(m->source, &oo, r, &n->a);
	if (rc < 0 || n->a == NULL) {
		size_t dir_errors = nf_report_count(r, NF_SEV_ERROR, NF_SCOPE_DIRECTORY);
		struct stat st;

		nf_report_print_text(stderr, r, NULL, entry);
		/* a header or JSON the reader rejects is a directory error: the
		 * entry was read, it is refused (there is no model to mount,
		 * even with -o lenient) */
		if (dir_errors) {
			fprintf(stderr, "ninferfs: %s: refused: %zu directory error%s (its header or "
					"JSON cannot be read as an artifact, even with -o lenient)\n",
				entry, dir_errors, dir_errors == 1 ? "" : "s");
			return NF_EXIT_DIRECTORY;
		}
		if (!m->remote && rc == -EINVAL && stat(entry, &st) == 0 && !S_ISREG(st.st_mode))
			fprintf(stderr, "ninferfs: cannot read %s: not a regular file\n", entry);
		else
			fprintf(stderr, "ninferfs: cannot read %s: %s\n", entry,
				strerror(rc < 0 ? -rc : EIO));
		return NF_EXIT_ENTRY;
	}
	/* A remote set is mounted lazily (issue 14): only the entry's header
	 * and JSON are fetched now; each part is checked (its header, seed
	 * §3.2) by the engine before its first read, and files.json says how
	 * it went.  A local one checks every part now, as always. */
	if (!m->remote)
		nf_artifact_check_files(n->a, r);
	if (nf_report_has_code(r, "FILE_OPEN_LIMIT")) {
		/* not even one part could get a descriptor: operational (issue 11) */
		nf_report_print_text(stderr, r, n->a, entry);
		fprintf(stderr, "ninferfs: %s: no descriptor left to open its parts: not mounted "
				"(raise ulimit -n)\n", entry);
		return NF_EXIT_ENTRY;
	}
	if (!n->a->directory_ok && !m->lenient) {
		size_t dir_errors = nf_report_count(r, NF_SEV_ERROR, NF_SCOPE_DIRECTORY);

		nf_report_print_text(stderr, r, n->a, entry);
		fprintf(stderr, "ninferfs: %s: refused: %zu directory error%s (-o lenient mounts what "
				"is consistent)\n", entry, dir_errors, dir_errors == 1 ? "" : "s");
		return NF_EXIT_DIRECTORY;
	}
	if (r->count > 0)
		nf_report_print_text(stderr, r, n->a, entry);
	n->validation_json = nf_report_to_json(r, n->a, entry, "ninferfs", m->argc, m->argv);
	if (n->validation_json == NULL || make_names(n) < 0) {
		fprintf(stderr, "ninferfs: out of memory\n");
		return NF_EXIT_ENTRY;
	}
	/* Nothing reads the JSON text from here on (artifact.json and
	 * uses.json are read from the entry when opened; uses.json's size was
	 * counted while reading): on a large set it is a third of the memory,
	 * so it goes before the tree is built, the daemon's peak. */
	nf_artifact_drop_json_text(n->a);
	return 0;
}

static void ninfer_close(void *state)
{
	struct nf_ninfer *n = state;

	if (n == NULL)
		return;
	if (n->has_st)
		nf_safetensors_free(&n->st);
	/* a document the kernel never released (a signal ended the session) */
	free(n->uses_doc);
	if (n->uses_lock_made)
		pthread_mutex_destroy(&n->uses_lock);
	for (uint32_t i = 0; n->owned_paths && n->a && i < n->a->nfiles; i++)
		free(n->owned_paths[i]);
	free(n->owned_paths);
	free(n->empty);
	free(n->names);
	free(n->paths);
	free(n->validation_json);
	if (n->a)
		nf_artifact_close(n->a);
	nf_report_free(&n->report);
	free(n);
}

/* A files table whose payload_bytes the reader could not take (a
 * directory error, mounted with -o lenient) leaves the logical space
 * undefined (seed §2.2): every file holds no logical byte then, so every
 * payload read fails (-ERANGE, then EIO) as the reader's map refuses it,
 * and the files' own bytes (artifact.json) still read. */
static struct nf_extents empty_space(struct nf_ninfer *n)
{
	n->empty = calloc(n->a->nfiles, sizeof *n->empty);
	for (uint32_t i = 0; n->empty && i < n->a->nfiles; i++)
		n->empty[i].data_offset = n->a->files[i].data_offset;
	return NF_EXTENTS_PLAIN(n->empty, n->empty ? n->a->nfiles : 0, 0);
}

static int ninfer_open(const struct nf_mount *m, void *opts, struct nf_opened *out)
{
	struct nf_ninfer *n = calloc(1, sizeof *n);
	struct stat st;
	int status;

	if (n == NULL) {
		fprintf(stderr, "ninferfs: out of memory\n");
		return NF_EXIT_ENTRY;
	}
	n->fs = m->fs;
	n->opt = opts;
	n->entry = m->shown;
	nf_report_init(&n->report);
	nf_raise_fd_limit();   /* sets with many parts (issue 11) */
	nf_guard_mapped_json(true);   /* until open_artifact() drops the mapped JSON */
	status = open_artifact(n, m);
	nf_guard_mapped_json(false);
	if (status == NF_EXIT_OK && pthread_mutex_init(&n->uses_lock, NULL) != 0) {
		fprintf(stderr, "ninferfs: out of memory\n");
		status = NF_EXIT_ENTRY;
	}
	if (status != NF_EXIT_OK) {
		ninfer_close(n);
		return status;
	}
	n->uses_lock_made = true;
	const struct nf_artifact *a = n->a;
	uint64_t bytes = 0;
	for (uint32_t i = 0; i < a->nfiles; i++)
		if (__builtin_add_overflow(bytes, a->files[i].file_bytes, &bytes))
			bytes = UINT64_MAX;
	out->state = n;
	out->errors = nf_report_count(&n->report, NF_SEV_ERROR, -1);
	out->warnings = nf_report_count(&n->report, NF_SEV_WARNING, -1);
	struct nf_extents ext = nf_artifact_extents(a);
	if (nf_extents_check(&ext) < 0 && (ext = empty_space(n), ext.base == NULL)) {
		fprintf(stderr, "ninferfs: out of memory\n");
		ninfer_close(n);
		return NF_EXIT_ENTRY;
	}
	out->set = (struct nf_set){.n = a->nfiles, .extents = ext, .names = n->names,
				   .paths = n->paths, .bytes = bytes, .ops = &set_ops, .arg = n,
				   .remote = nf_artifact_remote(a)};
	/* a remote set's times are the mount's (no file to stat) */
	if (m->remote)
		clock_gettime(CLOCK_REALTIME, &out->mtime);
	else if (stat(n->entry, &st) == 0)
		out->mtime = st.st_mtim;
	return NF_EXIT_OK;
}

/* ---- the tree ------------------------------------------------------------ */

/* The sizes of the files made on open: uses.json (when the reader did not
 * keep it), counted without making it, and model.safetensors by building
 * its header, which is kept. */
struct sizes_job {
	struct nf_ninfer *n;
	int uses_rc, st_rc;
};

static void *sizes_run(void *arg)
{
	struct sizes_job *job = arg;
	struct nf_ninfer *n = job->n;

	if (n->a->uses_json == NULL)
		job->uses_rc = nf_uses_json_size(n->a, &n->uses_bytes);
	job->st_rc = nf_safetensors_build(&n->st, n->a, n->opt->dtype);
	return NULL;
}

/* The generated file `name` under directory `dir` when it is of `kind`. */
static int64_t generated(const struct nf_tree *t, uint32_t dir, const char *name, unsigned kind)
{
	int64_t i = nf_tree_lookup(t, dir, name, strlen(name));

	return i >= 0 && !t->nodes[i].is_dir && t->nodes[i].kind == kind ? i : -1;
}

static int ninfer_build(void *state, struct nf_tree *t)
{
	struct nf_ninfer *n = state;
	char err[2048] = "";
	int rc;

	/* The generated files' sizes are made on the other core while the
	 * tree is built: both only read the model (issue 6: mount time). */
	struct sizes_job job = {.n = n};
	pthread_t side;
	bool threaded = pthread_create(&side, NULL, sizes_run, &job) == 0;
	if (!threaded)
		sizes_run(&job);
	struct nf_ninfer_docs docs = {.validation_json = n->validation_json,
				      .dtype = n->opt->dtype,
				      .safetensors = true};
	rc = nf_ninfer_tree_build(t, n->a, &docs, err, sizeof err);
	if (threaded)
		pthread_join(side, NULL);
	if (job.st_rc == 0)
		n->has_st = true;
	if (rc == -EEXIST) {
		/* two records, one path (man ninferfs.5, NAMES): exit 4 */
		fprintf(stderr, "ninferfs: %s: not mounted: %s\n", n->entry, err);
		return rc;
	}
	if (rc < 0) {
		fprintf(stderr, "ninferfs: cannot build the tree: %s\n", err);
		return rc;
	}
	if (job.st_rc < 0 || job.uses_rc < 0) {
		fprintf(stderr, "ninferfs: cannot build %s: %s\n",
			job.st_rc < 0 ? "model.safetensors" : "uses.json",
			strerror(job.st_rc < 0 ? -job.st_rc : -job.uses_rc));
		return job.st_rc < 0 ? job.st_rc : job.uses_rc;
	}
	int64_t uses = generated(t, 0, "uses.json", NF_VIEW_USES);
	int64_t dec = nf_tree_lookup(t, 0, "decoded", 7);
	int64_t st = dec >= 0 ? generated(t, (uint32_t)dec, "model.safetensors",
					  NF_VIEW_SAFETENSORS) : -1;
	if (uses > 0)
		nf_tree_set_size(t, (uint32_t)uses, n->uses_bytes);
	if (st > 0)
		nf_tree_set_size(t, (uint32_t)st, n->st.size);
	n->tree = t;
	return 0;
}

/* ---- documents made on open ---------------------------------------------- */

static int ninfer_open_doc(void *state, uint32_t node, const struct nf_view *v, const char **text)
{
	(void)node;
	if (v->kind != NF_VIEW_USES)
		return 1;
	return nf_uses_acquire(state, v->size, text);
}

static void ninfer_release_doc(void *state, uint32_t node, const char *text)
{
	(void)node;
	(void)text;
	nf_uses_release(state);
}

const struct nf_family nf_family_ninfer = {
	.name = "ninfer",
	.help = "    -o decoded_dtype=f32|bf16|f16  element type of decoded/ views (f32)\n"
		"    -o max_json=BYTES      refuse a larger JSON directory (4G; K, M, G, T)\n",
	.opts_size = sizeof(struct nf_ninfer_opts),
	.option = ninfer_option,
	.opts_free = ninfer_opts_free,
	.check = ninfer_check,
	.detect = NULL,   /* the fallback: whatever no other family takes */
	.open = ninfer_open,
	.build = ninfer_build,
	.open_doc = ninfer_open_doc,
	.release_doc = ninfer_release_doc,
	.read = nf_ninfer_read,
	.touches = nf_ninfer_touches,
	.view_spans = nf_ninfer_view_spans,
	.xattr_get = nf_ninfer_xattr_get,
	.xattr_list = nf_ninfer_xattr_list,
	.close = ninfer_close,
};
