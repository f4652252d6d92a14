/* reader/source_remote.c — the files of a set on an HTTP(S) server or an
 * S3-compatible store (issue 14): the remote source of source.h, on the
 * engine of remote/remote.h.
 *
 * The entry is the URL given (file 0 of the engine's set); after the files
 * table is read, its parts are declared once (nf_remote_set_parts), each
 * the URL beside the entry's that the engine resolves and percent-encodes
 * as one path segment.  A part whose path broke seed §3.3 is never
 * requested: it is declared under a placeholder name no read ever asks
 * for (the reader never reads a file whose path is bad), so the engine's
 * file indices stay the reader's.
 *
 * Reads: the header with one range GET of [0, 32) (its Content-Range
 * gives the entry's length), then the JSON in chunks (json_fetch.c), with
 * the engine's block cache, if any, keyed by the artifact id from the
 * header (nf_remote_set_cache_key).  A part is checked the first time it
 * is needed, like a local one: [0, 32) fetched, its length from the same
 * response, the rules of nf_part_check_header (a transient failure, after
 * the engine's retries, leaves it unchecked for a later read to try
 * again; a 404, a refusal or a bad header is the verdict); nf_artifact_check_files
 * fetches the headers of all parts at once (check_all: up to the engine's
 * inflight limit in parallel).  The engine records each file's ETag (or
 * Last-Modified) at its first response and sends it back with If-Match
 * every time after: an object replaced on the server fails the read that
 * sees it, and this source then marks the file FILE_CHANGED (contract §5),
 * as the local source does for a replaced part.  404/410 make a part
 * missing, 401/403 and every other refusal bad, always with the engine's
 * reason (HTTP status, S3 error code, where the credentials came from —
 * never what they are).
 *
 * Threads: the engine wants one nf_remote_thread per calling thread; a
 * small pool of them is shared by whoever calls nf_file_pread.  First
 * checks of parts are serialized by their own mutex; the artifact's lock
 * is never held across a request. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"
#include "reader/source.h"
#include "remote/remote.h"

#define POOL 8          /* idle thread handles kept */
#define CHECK_BATCH 256 /* part headers asked for in one nf_remote_read */

struct remote {
	struct nf_remote *r;
	pthread_mutex_t pool_lock;
	struct nf_remote_thread *pool[POOL];
	uint32_t npool;
	pthread_mutex_t check_lock;   /* first checks of parts, one batch at a time */
	bool *declared;               /* per file: its URL is the part's own (not a placeholder) */
	uint32_t ndeclared;
};

static struct remote *R_of(const struct nf_artifact *a)
{
	return a->priv->src_state;
}

struct nf_remote *nf_source_remote_set(const struct nf_artifact *a)
{
	return R_of(a) ? R_of(a)->r : NULL;
}

/* ---- thread handles ------------------------------------------------------ */

static int thread_get(struct remote *R, struct nf_remote_thread **t)
{
	pthread_mutex_lock(&R->pool_lock);
	*t = R->npool ? R->pool[--R->npool] : NULL;
	pthread_mutex_unlock(&R->pool_lock);
	return *t ? 0 : nf_remote_thread_new(R->r, t);
}

static void thread_put(struct remote *R, struct nf_remote_thread *t)
{
	pthread_mutex_lock(&R->pool_lock);
	if (R->npool < POOL) {
		R->pool[R->npool++] = t;
		t = NULL;
	}
	pthread_mutex_unlock(&R->pool_lock);
	nf_remote_thread_free(t);
}

/* ---- the entry ----------------------------------------------------------- */

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The entry's file name: the last segment of the URL's path, percent-
 * decoded for http(s) (an s3 key is not encoded).  Arena memory. */
static const char *entry_name_of(struct nf_artifact *a, const char *url)
{
	const char *s = strstr(url, "://");
	s = s ? s + 3 : url;
	size_t n = strcspn(s, "?#");
	const char *slash = memrchr(s, '/', n);
	const char *seg = slash ? slash + 1 : s + n;
	size_t len = (size_t)(s + n - seg);
	char *out = nf_arena_calloc(&a->priv->arena, len + 1, 1);
	if (!out)
		return NULL;
	bool decode = strncmp(url, "s3://", 5) != 0;
	size_t k = 0;
	for (size_t i = 0; i < len; i++) {
		int hi, lo;
		if (decode && seg[i] == '%' && i + 2 < len && (hi = hexval(seg[i + 1])) >= 0 &&
		    (lo = hexval(seg[i + 2])) >= 0 && (hi | lo)) {
			out[k++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			out[k++] = seg[i];
		}
	}
	out[k] = '\0';
	return out;
}

/* The engine's account of file i's failure, for messages. */
static void engine_reason(struct remote *R, uint32_t i, int rc, char *buf, size_t n)
{
	struct nf_remote_file_stats fs;
	if (nf_remote_file_stats(R->r, i, &fs) == 0 && fs.reason[0])
		snprintf(buf, n, "%s", fs.reason);
	else
		snprintf(buf, n, "%s", strerror(-rc));
}

static uint64_t known_size(struct remote *R, uint32_t i)
{
	struct nf_remote_file_stats fs;
	return nf_remote_file_stats(R->r, i, &fs) == 0 ? fs.size : UINT64_MAX;
}

/* The size of file i after a read of it failed: known from a response, or
 * asked for with a HEAD (a file shorter than the range has none to give);
 * UINT64_MAX when it cannot be had. */
static uint64_t size_after_failure(struct remote *R, struct nf_remote_thread *t, uint32_t i)
{
	uint64_t size = known_size(R, i);
	struct nf_remote_stat st;
	if (size == UINT64_MAX && nf_remote_stat(t, i, &st) == 0)
		size = st.size;
	return size;
}

struct json_reader {
	struct remote *R;
	struct nf_remote_thread *t;
	char why[320];
};

static int read_entry(void *ctx, void *buf, uint64_t len, uint64_t off, const char **why)
{
	struct json_reader *jr = ctx;
	int rc = nf_remote_pread(jr->t, 0, buf, len, off);
	if (rc < 0) {
		engine_reason(jr->R, 0, rc, jr->why, sizeof jr->why);
		*why = jr->why;
	}
	return rc;
}

static int remote_open(struct nf_artifact *a, const char *entry, const struct nf_open_opts *o,
		       struct nf_report *r, uint64_t *entry_size)
{
	struct nf_artifact_private *p = a->priv;
	struct remote *R = calloc(1, sizeof *R);
	char *shown = nf_remote_redact(entry), *err = NULL;
	if (R) {
		pthread_mutex_init(&R->pool_lock, NULL);
		pthread_mutex_init(&R->check_lock, NULL);
		p->src_state = R;
	}
	a->entry_path = shown ? nf_arena_strdup(&p->arena, shown) : NULL;
	free(shown);
	if (!R || !a->entry_path) {
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY", "header",
			      "cannot allocate the artifact");
		return -ENOMEM;
	}
	struct nf_remote_opts defaults;
	nf_remote_opts_init(&defaults);
	int rc = nf_remote_open(entry, o && o->remote ? o->remote : &defaults, &R->r, &err);
	if (rc < 0) {
		/* err names the redacted URL */
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL,
			      rc == -ENOMEM ? "OUT_OF_MEMORY" : "ENTRY_UNREADABLE", "header", "%s",
			      err ? err : strerror(-rc));
		free(err);
		return rc;
	}
	a->entry_name = entry_name_of(a, entry);
	struct json_reader jr = {.R = R};
	if (!a->entry_name || thread_get(R, &jr.t) < 0) {
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY", "header",
			      "cannot allocate the artifact");
		return -ENOMEM;
	}
	/* The header, and the entry's length from the same response. */
	uint8_t h[NF_ENTRY_HEADER_BYTES];
	struct nf_remote_stat st;
	rc = nf_remote_pread(jr.t, 0, h, sizeof h, 0);
	if (rc == 0)
		rc = nf_remote_stat(jr.t, 0, &st);
	if (rc == 0) {
		*entry_size = st.size;
	} else {
		uint64_t size = rc == -EIO ? size_after_failure(R, jr.t, 0) : UINT64_MAX;
		if (size < NF_ENTRY_HEADER_BYTES) {
			*entry_size = size;
			rc = nf_entry_header(a, NULL, size, r);   /* HEADER_TRUNCATED */
		} else {
			char why[320];
			engine_reason(R, 0, rc, why, sizeof why);
			nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "ENTRY_UNREADABLE", "header",
				      "%s: %s", a->entry_path, why);
		}
		thread_put(R, jr.t);
		return rc < 0 ? rc : -EIO;
	}
	rc = nf_entry_header(a, h, *entry_size, r);
	/* the cache knows the set by its artifact id, unless the caller named it */
	bool named = o && o->remote && o->remote->cache_set;
	if (rc == 0 && !named && (rc = nf_remote_set_cache_key(R->r, a->artifact_id_hex)) < 0)
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY", "header",
			      "cannot key the block cache by the artifact id: %s", strerror(-rc));
	if (rc == 0)
		rc = nf_json_fetch(a, read_entry, &jr, r);
	thread_put(R, jr.t);
	return rc;
}

static int remote_files_ready(struct nf_artifact *a, struct nf_report *r)
{
	struct remote *R = R_of(a);
	uint32_t n = a->priv->files && a->nfiles ? a->nfiles - 1 : 0;
	const char **names = calloc(n ? n : 1, sizeof *names);
	char **holders = calloc(n ? n : 1, sizeof *holders);
	R->declared = calloc(n + 1, sizeof *R->declared);
	int rc = names && holders && R->declared ? 0 : -ENOMEM;
	R->ndeclared = n + 1;
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		uint32_t f = i + 1;
		if (a->priv->files[f].path_ok && a->files[f].path) {
			names[i] = a->files[f].path;
			R->declared[f] = true;
		} else if (asprintf(&holders[i], "nf-unrequested-part-%" PRIu32, f) < 0) {
			holders[i] = NULL;
			rc = -ENOMEM;
		} else {
			names[i] = holders[i];   /* never read: its path is bad */
		}
	}
	char *err = NULL;
	if (rc == 0)
		rc = nf_remote_set_parts(R->r, names, n, &err);
	if (rc < 0)
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL,
			      rc == -ENOMEM ? "OUT_OF_MEMORY" : "ENTRY_UNREADABLE", "files",
			      "%s: the parts cannot be located: %s", a->entry_path,
			      err ? err : strerror(-rc));
	free(err);
	for (uint32_t i = 0; holders && i < n; i++)
		free(holders[i]);
	free(holders);
	free(names);
	return rc;
}

static void remote_close(struct nf_artifact *a)
{
	struct remote *R = R_of(a);
	if (!R)
		return;
	for (uint32_t i = 0; i < R->npool; i++)
		nf_remote_thread_free(R->pool[i]);
	nf_remote_close(R->r);
	pthread_mutex_destroy(&R->pool_lock);
	pthread_mutex_destroy(&R->check_lock);
	free(R->declared);
	free(R);
	a->priv->src_state = NULL;
}

/* ---- parts --------------------------------------------------------------- */

/* A failed read of file i that the engine gave up on (5xx, resets, stalls,
 * short bodies after the bounded retries), not a verdict of the server (a
 * 404, a refusal, a changed object) */
static bool transient(struct remote *R, uint32_t i, int rc)
{
	struct nf_remote_file_stats fs;
	return rc == -EIO && nf_remote_file_stats(R->r, i, &fs) == 0 &&
	       (fs.status == NF_RFILE_UNKNOWN || fs.status == NF_RFILE_OK);
}

/* Part i's header was asked for and the read ended with rc (h holds the
 * bytes when rc is 0): its status, from the same rules as a local part.
 * Unless `final`, a transient failure leaves the part unchecked: the read
 * that needed it fails with EIO, and a later one asks again (the engine
 * lets a file that gave up rest first, 1 s doubling to 60 s, so the
 * server is asked at a bounded rate); a one-shot check (check_all) takes
 * it as the verdict. */
static void part_checked(struct nf_artifact *a, struct nf_remote_thread *t, uint32_t i, int rc,
			 const uint8_t *h, bool final)
{
	struct remote *R = R_of(a);
	const char *path = a->files[i].path;
	const char *url = nf_file_url(a, i);
	struct nf_remote_stat st;
	char why[320];
	uint64_t size = UINT64_MAX;
	if (rc == 0) {
		rc = nf_remote_stat(t, i, &st);   /* known from the response: no request */
		size = rc == 0 ? st.size : UINT64_MAX;
	} else if (rc == -EIO) {
		size = size_after_failure(R, t, i);
		if (size >= NF_ENTRY_HEADER_BYTES)
			size = UINT64_MAX;   /* long enough: the read failed for another reason */
	}
	if (rc < 0 && size == UINT64_MAX)
		engine_reason(R, i, rc, why, sizeof why);
	if (rc < 0 && size == UINT64_MAX && !final && transient(R, i, rc))
		return;
	pthread_mutex_lock(&a->priv->lock);
	if (a->priv->files[i].status == NF_FILE_UNCHECKED) {
		if (rc == 0 || size != UINT64_MAX)
			nf_part_check_header(a, i, rc == 0 ? h : NULL, size);
		else if (rc == -ENOENT)
			nf_file_set(a, i, NF_FILE_MISSING, "FILE_MISSING", "%s: %s: %s", path, url, why);
		else
			nf_file_set(a, i, NF_FILE_BAD, "FILE_UNREADABLE", "%s: %s: %s", path, url, why);
	}
	pthread_mutex_unlock(&a->priv->lock);
}

static bool unchecked(const struct nf_artifact *a, uint32_t i)
{
	pthread_mutex_lock(&a->priv->lock);
	const struct nf_file_state *st = &a->priv->files[i];
	bool u = i > 0 && st->path_ok && st->status == NF_FILE_UNCHECKED;
	pthread_mutex_unlock(&a->priv->lock);
	return u;
}

/* Check the parts [from, to) not checked yet, their headers fetched in one
 * engine call (in parallel); `final`: see part_checked.  0 or -ENOMEM
 * (they stay unchecked). */
static int check_parts(struct nf_artifact *a, uint32_t from, uint32_t to, bool final)
{
	struct remote *R = R_of(a);
	struct nf_remote_thread *t;
	if (thread_get(R, &t) < 0)
		return -ENOMEM;
	struct nf_io *ios = calloc(CHECK_BATCH, sizeof *ios);
	uint8_t (*h)[NF_ENTRY_HEADER_BYTES] = calloc(CHECK_BATCH, sizeof *h);
	int rc = ios && h ? 0 : -ENOMEM;
	pthread_mutex_lock(&R->check_lock);
	for (uint32_t i = from; rc == 0 && i < to;) {
		size_t n = 0;
		for (; i < to && n < CHECK_BATCH; i++)
			if (unchecked(a, i)) {
				ios[n] = (struct nf_io){.file = i, .offset = 0,
							.length = NF_ENTRY_HEADER_BYTES, .dst = h[n]};
				n++;
			}
		if (n == 0)
			continue;
		nf_remote_read(t, ios, n);
		for (size_t k = 0; k < n; k++)
			part_checked(a, t, ios[k].file, ios[k].result, h[k], final);
	}
	pthread_mutex_unlock(&R->check_lock);
	free(ios);
	free(h);
	thread_put(R, t);
	return rc;
}

static void remote_check_all(struct nf_artifact *a)
{
	check_parts(a, 1, a->nfiles, true);
}

/* What the engine found since, taken into file i's status: an object that
 * changed on the server or went away after its first response is a
 * changed file (contract §5).  Calls the change hook once. */
static void take_engine_state(struct nf_artifact *a, uint32_t i)
{
	struct remote *R = R_of(a);
	struct nf_remote_file_stats fs;
	if (nf_remote_file_stats(R->r, i, &fs) < 0)
		return;
	/* (a refusal later on, 401/403, leaves it present: like a local read
	 * error, it fails the reads, and the engine's stats say why) */
	if (fs.status != NF_RFILE_CHANGED && fs.status != NF_RFILE_MISSING)
		return;
	char what[512];
	snprintf(what, sizeof what, "%s at %s", fs.status == NF_RFILE_CHANGED ? "changed on the server"
		 : "gone from the server", fs.url);
	if (fs.reason[0])
		snprintf(what + strlen(what), sizeof what - strlen(what), " (%s)", fs.reason);
	pthread_mutex_lock(&a->priv->lock);
	bool changed = nf_file_mark_changed(a, i, what);
	pthread_mutex_unlock(&a->priv->lock);
	if (changed)
		nf_file_tell_hook(a, i);
}

/* Checks file i if it never was; then 0 if it is present, else its error. */
static int ready(struct nf_artifact *a, uint32_t i)
{
	if (unchecked(a, i) && check_parts(a, i, i + 1, false) < 0)
		return -ENOMEM;
	take_engine_state(a, i);
	switch (nf_file_status(a, i, NULL)) {
	case NF_FILE_PRESENT: return 0;
	case NF_FILE_MISSING: return -ENOENT;
	default: return -EIO;
	}
}

static int remote_verify(struct nf_artifact *a, uint32_t i)
{
	return ready(a, i);
}

static int remote_pread(struct nf_artifact *a, uint32_t i, void *buf, uint64_t len, uint64_t off)
{
	struct remote *R = R_of(a);
	struct nf_remote_thread *t;
	int rc = a->priv->files ? ready(a, i) : 0;   /* no files table: the entry itself */
	if (rc < 0)
		return rc;
	if (thread_get(R, &t) < 0)
		return -ENOMEM;
	rc = nf_remote_pread(t, i, buf, len, off);
	thread_put(R, t);
	if (rc < 0 && a->priv->files)
		take_engine_state(a, i);
	/* a file that was there and is refused or gone now: -EIO, as a
	 * local part removed after its first open */
	return rc == -EACCES || rc == -ENOENT ? -EIO : rc;
}

static int remote_acquire(struct nf_artifact *a, uint32_t i)
{
	(void)a;
	(void)i;
	return -EREMOTE;   /* no descriptors: nf_file_pread, or the engine */
}

static void remote_release(struct nf_artifact *a, uint32_t i)
{
	(void)a;
	(void)i;
}

static int remote_fingerprint(const struct nf_artifact *a, uint32_t i,
			      struct nf_file_fingerprint *out)
{
	(void)a;
	(void)i;
	(void)out;
	return -EREMOTE;   /* its identity is its ETag: nf_remote_file_stats */
}

static void remote_stats(const struct nf_artifact *a, struct nf_files_stats *out)
{
	(void)a;
	(void)out;   /* no descriptors, no cache of them */
}

static void remote_set_open_max(struct nf_artifact *a, uint32_t n)
{
	(void)a;
	(void)n;
}

static const char *remote_url(const struct nf_artifact *a, uint32_t i)
{
	struct remote *R = R_of(a);
	struct nf_remote_file_stats fs;
	if (!R || !R->r || i >= R->ndeclared || (i > 0 && !R->declared[i]) ||
	    nf_remote_file_stats(R->r, i, &fs) < 0)
		return NULL;
	return fs.url;   /* the engine's redacted copy, valid while the set is open */
}

const struct nf_source_ops nf_source_remote = {
	.kind = "remote",
	.open = remote_open,
	.files_ready = remote_files_ready,
	.check_all = remote_check_all,
	.acquire = remote_acquire,
	.release = remote_release,
	.verify = remote_verify,
	.fingerprint = remote_fingerprint,
	.pread = remote_pread,
	.stats = remote_stats,
	.set_open_max = remote_set_open_max,
	.url = remote_url,
	.close = remote_close,
};
