/* remote/remote.c — the set (file table, credentials, shared caches), the
 * per-thread handles, and the read paths of remote.h.
 *
 * nf_remote_read() sorts the segments by (file, offset), merges the ones
 * that touch into runs, cuts runs into requests of at most opts.max_request
 * bytes, and runs them all at once on the thread's multi handle; each
 * request's body is scattered straight into the segments' buffers. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "nf_version.h"
#include "remote/internal.h"

/* ---- file state ---------------------------------------------------------- */

static void vnote(struct nf_rfile *f, const char *fmt, va_list ap)
{
	vsnprintf(f->st.reason, sizeof f->st.reason, fmt, ap);
}

void nf_rfile_fail(struct nf_remote *r, uint32_t file, enum nf_rfile_status s, int http,
		   const char *fmt, ...)
{
	struct nf_rfile *f = &r->files[file];
	va_list ap;
	pthread_mutex_lock(&r->lock);
	/* the first refusal is the one that explains; keep it */
	if (f->st.status == NF_RFILE_UNKNOWN || f->st.status == NF_RFILE_OK) {
		f->st.status = s;
		f->st.http_status = http;
		va_start(ap, fmt);
		vnote(f, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&r->lock);
}

void nf_rfile_note(struct nf_remote *r, uint32_t file, const char *fmt, ...)
{
	struct nf_rfile *f = &r->files[file];
	va_list ap;
	pthread_mutex_lock(&r->lock);
	if (f->st.status == NF_RFILE_UNKNOWN || f->st.status == NF_RFILE_OK) {
		va_start(ap, fmt);
		vnote(f, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&r->lock);
}

uint64_t nf_rfile_known(struct nf_remote *r, uint32_t file, char *etag)
{
	uint64_t size;
	pthread_mutex_lock(&r->lock);
	size = r->files[file].st.size;
	if (etag) {
		const struct nf_rfile *f = &r->files[file];
		snprintf(etag, 128, "%s", !f->validated ? "" : f->st.etag[0] ? f->st.etag : f->lastmod);
	}
	pthread_mutex_unlock(&r->lock);
	return size;
}

const char *nf_remote_status_name(enum nf_rfile_status s)
{
	switch (s) {
	case NF_RFILE_UNKNOWN: return "unknown";
	case NF_RFILE_OK: return "ok";
	case NF_RFILE_MISSING: return "missing";
	case NF_RFILE_BAD: return "bad";
	case NF_RFILE_CHANGED: return "changed";
	}
	return "?";
}

int nf_remote_file_stats(struct nf_remote *r, uint32_t file, struct nf_remote_file_stats *out)
{
	if (file >= r->nfiles)
		return -EBADF;
	pthread_mutex_lock(&r->lock);
	*out = r->files[file].st;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

uint32_t nf_remote_nfiles(const struct nf_remote *r)
{
	return r->nfiles;
}

static int file_init(struct nf_rfile *f, char *url)
{
	memset(f, 0, sizeof *f);
	f->url = url;
	f->shown = nf_remote_redact(url);
	if (f->shown == NULL)
		return -ENOMEM;
	f->st.url = f->shown;
	f->st.size = UINT64_MAX;
	return 0;
}

static void file_free(struct nf_rfile *f)
{
	free(f->url);
	free(f->shown);
}

/* ---- the set ------------------------------------------------------------ */

static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *ud)
{
	struct nf_remote *r = ud;
	(void)h;
	(void)a;
	pthread_mutex_lock(&r->share_locks[d]);
}

static void share_unlock(CURL *h, curl_lock_data d, void *ud)
{
	struct nf_remote *r = ud;
	(void)h;
	pthread_mutex_unlock(&r->share_locks[d]);
}

static int fail_msg(char **err, int rc, const char *shown, const char *what)
{
	if (*err == NULL && asprintf(err, "%s: %s", shown ? shown : "URL",
				     what ? what : strerror(-rc)) < 0)
		*err = NULL;
	return rc;
}

int nf_remote_open(const char *url, const struct nf_remote_opts *o, struct nf_remote **out,
		   char **err)
{
	struct nf_remote *r;
	char *shown = nf_remote_redact(url), *why = NULL;
	const char *endpoint;
	int rc;

	*out = NULL;
	*err = NULL;
	if (shown == NULL)
		return -ENOMEM;
	r = calloc(1, sizeof *r);
	if (r == NULL) {
		free(shown);
		return -ENOMEM;
	}
	/* reference-counted by libcurl; done here, once per set and before any
	 * thread starts, so curl_easy_init never does it implicitly */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		free(r);
		free(shown);
		return -ENOMEM;
	}
	r->global = true;
	r->o = *o;
	pthread_mutex_init(&r->lock, NULL);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&r->share_locks[i], NULL);
	if (strncmp(url, "s3://", 5) == 0) {
		rc = nf_rcreds_load(&r->cr, o->profile, o->region, &why);
		if (rc < 0)
			goto fail;
	}
	endpoint = o->endpoint ? o->endpoint : getenv("AWS_ENDPOINT_URL");
	rc = nf_rurl_parse(&r->u, url, endpoint, r->cr.region ? r->cr.region : "us-east-1", &why);
	if (rc < 0)
		goto fail;
	r->sign = r->u.s3 && r->cr.key != NULL;
	if (r->sign && asprintf(&r->sigv4, "aws:amz:%s:s3", r->cr.region) < 0) {
		r->sigv4 = NULL;
		rc = -ENOMEM;
		goto fail;
	}
	if (asprintf(&r->ua, "ninferfs/%s", NF_VERSION) < 0) {
		r->ua = NULL;
		rc = -ENOMEM;
		goto fail;
	}
	r->files = calloc(1, sizeof *r->files);
	char *eu = strdup(r->u.entry);
	if (r->files == NULL || eu == NULL || file_init(&r->files[0], eu) < 0) {
		if (r->files == NULL || r->files[0].url == NULL)
			free(eu);
		rc = -ENOMEM;
		goto fail;
	}
	r->nfiles = 1;
	r->share = curl_share_init();
	if (r->share == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	/* DNS answers and TLS sessions are shared by the threads; connections
	 * stay in each thread's multi handle (one connection pool per thread,
	 * like one ring per thread), which keeps them persistent without a
	 * cross-thread connection cache. */
	curl_share_setopt(r->share, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(r->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(r->share, CURLSHOPT_USERDATA, r);
	curl_share_setopt(r->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	curl_share_setopt(r->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	rc = nf_remote_opts_check(o, &why);
	if (rc < 0)
		goto fail;
	if (o->cache_dir && o->cache_dir[0]) {
		rc = nf_rcache_open(&r->cache, o->cache_dir, o->cache_size,
				    o->cache_set ? o->cache_set : r->files[0].shown, o->cache_fsync, &why);
		if (rc < 0)
			goto fail;
	}
	rc = nf_rpf_new(r, &r->pf);
	if (rc < 0)
		goto fail;
	free(shown);
	*out = r;
	return 0;
fail:
	fail_msg(err, rc, shown, why);
	free(why);
	free(shown);
	nf_remote_close(r);
	return rc;
}

void nf_remote_close(struct nf_remote *r)
{
	if (r == NULL)
		return;
	nf_rpf_free(r->pf);
	nf_rcache_close(r->cache);
	if (r->share)
		curl_share_cleanup(r->share);
	for (uint32_t i = 0; i < r->nfiles; i++)
		file_free(&r->files[i]);
	free(r->files);
	nf_rurl_free(&r->u);
	nf_rcreds_free(&r->cr);
	free(r->sigv4);
	free(r->ua);
	pthread_mutex_destroy(&r->lock);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&r->share_locks[i]);
	if (r->global)
		curl_global_cleanup();
	free(r);
}

int nf_remote_set_parts(struct nf_remote *r, const char *const *names, uint32_t n, char **err)
{
	struct nf_rfile *files;
	uint32_t total;

	*err = NULL;
	if (r->parts_set)
		return -EBUSY;
	if (__builtin_add_overflow(n, 1u, &total))
		return -EINVAL;
	files = calloc(total, sizeof *files);
	if (files == NULL)
		return -ENOMEM;
	files[0] = r->files[0];
	for (uint32_t i = 0; i < n; i++) {
		const char *why;
		char *url = nf_rurl_sibling(&r->u, names[i], &why);
		if (url == NULL || file_init(&files[i + 1], url) < 0) {
			if (url == NULL && asprintf(err, "part %" PRIu32 " name refused: it %s", i + 1,
						    why) < 0)
				*err = NULL;
			if (url)
				free(url);
			for (uint32_t j = 1; j <= i; j++)
				file_free(&files[j]);
			free(files);
			return url ? -ENOMEM : -EINVAL;
		}
	}
	free(r->files);
	r->files = files;
	r->nfiles = total;
	r->parts_set = true;
	return 0;
}

int nf_remote_set_cache_key(struct nf_remote *r, const char *key)
{
	return r->cache ? nf_rcache_set_key(r->cache, key) : 0;
}

/* ---- threads -------------------------------------------------------------- */

int nf_remote_thread_new(struct nf_remote *r, struct nf_remote_thread **out)
{
	struct nf_remote_thread *t = calloc(1, sizeof *t);
	*out = NULL;
	if (t == NULL)
		return -ENOMEM;
	t->r = r;
	t->multi = curl_multi_init();
	if (t->multi == NULL) {
		free(t);
		return -ENOMEM;
	}
	curl_multi_setopt(t->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)r->o.max_inflight);
	curl_multi_setopt(t->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	if (getrandom(&t->rng, sizeof t->rng, GRND_NONBLOCK) != sizeof t->rng)
		t->rng = (uint64_t)(uintptr_t)t ^ nf_rnow_ms();
	*out = t;
	return 0;
}

void nf_remote_thread_free(struct nf_remote_thread *t)
{
	if (t == NULL)
		return;
	nf_remote_release(t);
	free(t->held);
	while (t->nidle > 0)
		curl_easy_cleanup(t->idle[--t->nidle]);
	curl_multi_cleanup(t->multi);
	free(t);
}

/* ---- the direct read path --------------------------------------------------- */

/* A request's body is scattered over a run of touching segments. */
struct scatter {
	struct nf_io **segs;   /* sorted, each starting where the last ended */
	size_t nseg;
	size_t cur;
	uint64_t base;         /* absolute offset of the request's first byte */
};

static int scatter_sink(void *ctx, uint64_t pos, const void *p, size_t n)
{
	struct scatter *s = ctx;
	uint64_t at = s->base + pos;
	const char *src = p;

	while (n > 0 && s->cur < s->nseg) {
		struct nf_io *io = s->segs[s->cur];
		if (at >= io->offset + io->length) {
			s->cur++;
			continue;
		}
		uint64_t in = at - io->offset, k = io->length - in;
		if (k > n)
			k = n;
		memcpy((char *)io->dst + in, src, k);
		src += k;
		at += k;
		n -= k;
	}
	return 0;
}

static int seg_check(const struct nf_remote *r, const struct nf_io *io)
{
	uint64_t end;
	if (io->file >= r->nfiles)
		return -EBADF;
	if (io->length == 0)
		return 0;
	if (io->dst == NULL || __builtin_add_overflow(io->offset, io->length, &end) ||
	    end > (uint64_t)INT64_MAX)
		return -EINVAL;
	return 1;
}

static int by_file_offset(const void *a, const void *b)
{
	const struct nf_io *x = *(struct nf_io *const *)a, *y = *(struct nf_io *const *)b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int first_error(const struct nf_io *ios, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ios[i].result < 0)
			return ios[i].result;
	return 0;
}

int nf_rread_direct(struct nf_remote_thread *t, struct nf_io *ios, size_t n)
{
	struct nf_remote *r = t->r;
	struct nf_io **order = NULL;
	struct nf_rreq *reqs = NULL;
	struct scatter *sc = NULL;
	size_t *first = NULL, m = 0, nreq = 0, cap = 0;
	int rc = 0;

	order = calloc(n ? n : 1, sizeof *order);
	if (order == NULL)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		int c = seg_check(r, &ios[i]);
		ios[i].result = c < 0 ? c : 0;
		if (c == 1)
			order[m++] = &ios[i];
	}
	qsort(order, m, sizeof *order, by_file_offset);
	/* count the requests: runs of touching segments, cut at max_request */
	for (size_t i = 0; i < m;) {
		size_t j = i + 1;
		uint64_t end = order[i]->offset + order[i]->length;
		while (j < m && order[j]->file == order[i]->file && order[j]->offset == end)
			end += order[j++]->length;
		cap += (end - order[i]->offset + r->o.max_request - 1) / r->o.max_request;
		i = j;
	}
	reqs = calloc(cap ? cap : 1, sizeof *reqs);
	sc = calloc(cap ? cap : 1, sizeof *sc);
	first = calloc(cap ? cap : 1, sizeof *first);
	if (reqs == NULL || sc == NULL || first == NULL)
		goto nomem;
	for (size_t i = 0; i < m;) {
		size_t j = i + 1;
		uint64_t start = order[i]->offset, end = start + order[i]->length;
		while (j < m && order[j]->file == order[i]->file && order[j]->offset == end)
			end += order[j++]->length;
		for (uint64_t at = start; at < end; at += r->o.max_request) {
			uint64_t len = end - at < r->o.max_request ? end - at : r->o.max_request;
			size_t k = i;
			while (order[k]->offset + order[k]->length <= at)
				k++;
			sc[nreq] = (struct scatter){.segs = order + k, .nseg = j - k, .base = at};
			reqs[nreq] = (struct nf_rreq){.file = order[i]->file, .off = at, .len = len,
						      .sink = scatter_sink, .ctx = &sc[nreq]};
			first[nreq] = k;
			nreq++;
		}
		i = j;
	}
	nf_rhttp_run(t, reqs, nreq);
	/* a failed request fails every segment it touches */
	for (size_t q = 0; q < nreq; q++) {
		if (reqs[q].result == 0)
			continue;
		for (size_t k = first[q]; k < m && order[k]->file == reqs[q].file &&
					  order[k]->offset < reqs[q].off + reqs[q].len; k++)
			if (order[k]->offset + order[k]->length > reqs[q].off && order[k]->result == 0)
				order[k]->result = reqs[q].result;
	}
	rc = first_error(ios, n);
	goto out;
nomem:
	for (size_t i = 0; i < n; i++)
		ios[i].result = -ENOMEM;
	rc = -ENOMEM;
out:
	free(order);
	free(reqs);
	free(sc);
	free(first);
	return rc;
}

int nf_remote_read(struct nf_remote_thread *t, struct nf_io *ios, size_t n)
{
	if (t->r->cache)
		return nf_rread_cached(t, ios, n);
	return nf_rread_direct(t, ios, n);
}

int nf_remote_pread(struct nf_remote_thread *t, uint32_t file, void *buf, uint64_t len,
		    uint64_t off)
{
	struct nf_io io = {.file = file, .offset = off, .length = len, .dst = buf};
	return nf_remote_read(t, &io, 1);
}

static int nosink(void *ctx, uint64_t pos, const void *p, size_t n)
{
	(void)ctx, (void)pos, (void)p, (void)n;
	return 0;
}

/* -o offline: the file's size and validator from its record in the cache
 * (false: none there) */
static bool from_record(struct nf_remote *r, uint32_t file)
{
	struct nf_rfile *f = &r->files[file];
	uint64_t size;
	char kind, v[128];

	if (r->cache == NULL || nf_rcache_get_file(r->cache, file, &size, &kind, v) < 0)
		return false;
	size_t n = strlen(v);
	if (n >= (kind == 'E' ? sizeof f->st.etag : sizeof f->lastmod))
		return false;   /* longer than any we store */
	pthread_mutex_lock(&r->lock);
	f->st.size = size;
	memcpy(kind == 'E' ? f->st.etag : f->lastmod, v, n + 1);
	f->validated = true;
	f->recorded = true;
	if (f->st.status == NF_RFILE_UNKNOWN)
		f->st.status = NF_RFILE_OK;
	pthread_mutex_unlock(&r->lock);
	return true;
}

int nf_remote_stat(struct nf_remote_thread *t, uint32_t file, struct nf_remote_stat *st)
{
	struct nf_remote *r = t->r;
	struct nf_rfile *f;

	if (file >= r->nfiles)
		return -EBADF;
	f = &r->files[file];
	pthread_mutex_lock(&r->lock);
	bool known = f->st.size != UINT64_MAX && (f->validated || f->st.status == NF_RFILE_OK);
	pthread_mutex_unlock(&r->lock);
	if (!known && r->o.offline)
		known = from_record(r, file);
	if (!known) {
		struct nf_rreq q = {.file = file, .head = true, .sink = nosink};
		nf_rhttp_run(t, &q, 1);
		if (q.result < 0)
			return q.result;
	}
	pthread_mutex_lock(&r->lock);
	st->size = f->st.size;
	snprintf(st->etag, sizeof st->etag, "%s", f->st.etag);
	snprintf(st->lastmod, sizeof st->lastmod, "%s", f->lastmod);
	int bad = f->st.status == NF_RFILE_CHANGED ? -EIO : 0;
	/* with the cache: the size and validator, once known, stored there
	 * once per process, for a later -o offline (errors ignored, as for
	 * blocks) */
	bool rec = r->cache && !f->recorded && f->validated && f->st.size != UINT64_MAX &&
		   f->st.status == NF_RFILE_OK;
	if (rec)
		f->recorded = true;
	pthread_mutex_unlock(&r->lock);
	if (rec)
		(void)nf_rcache_put_file(r->cache, file, st->size, st->etag[0] ? 'E' : 'L',
					 st->etag[0] ? st->etag : st->lastmod);
	if (bad == 0 && st->size == UINT64_MAX)
		return -EIO; /* a HEAD without Content-Length */
	return bad;
}
