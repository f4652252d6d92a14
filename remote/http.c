/* remote/http.c — one thread's HTTP transfers on a curl multi handle.
 *
 * nf_rhttp_run() keeps up to opts.max_inflight requests in flight and
 * drives each to a final result: success, or a refusal that retrying
 * cannot change (404, 403, 412, a changed validator, TLS failures, a
 * refused redirect), or a transient failure (5xx, 429, connection reset,
 * timeout, short body) retried with full-jitter exponential backoff until
 * opts.max_tries attempts or opts.retry_total_ms have passed.  A retry
 * resumes at the first byte not yet received.  Nothing here loops without
 * a bound: attempts are counted, each attempt is bounded by the connect
 * and low-speed timeouts, and the whole request by the retry budget.
 *
 * Redirects are never followed by curl: a 3xx comes back here and is
 * refused, or followed by hand when opts.redirects allows it (same host
 * only, or anywhere, never from https to http); credentials and SigV4 go
 * only to the entry's own origin. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "nf_version.h"
#include "remote/internal.h"

#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define MAX_REDIRECTS 5
#define ERRBODY_CAP 2048
/* curl's receive buffer.  libcurl 7.88 allocates it anew for every
 * transfer, even on a reused handle; the daemon fixes glibc's mmap
 * threshold at 256 KiB (fs/main.c), so a 256 KiB buffer was an mmap, a
 * page fault per 4 KiB received and a munmap per request: 15% of the
 * daemon's profile in a 1 GiB sequential read (18% with munmap).  Below
 * the threshold it comes from the heap, its pages reused. */
#define NF_RBUFSIZE (128 * 1024)
/* How long a file rests after a request of it gave up (retry budget spent
 * on 5xx, resets, stalls): the first rest, doubled per further give-up, and
 * the cap.  Without it the kernel's retry of a failed readahead (a single
 * page, at once) ran the whole budget again, and a part whose first check
 * failed could never be asked again; with it, a stalled or failing server
 * costs one budget, then EIO at once, then one attempt per rest. */
#define DOWN_FIRST_MS 1000u
#define DOWN_MAX_MS 60000u

struct nf_rxfer {
	struct nf_remote_thread *t;
	struct nf_rreq *q;
	CURL *e;
	struct curl_slist *hdrs;
	char *url;                 /* the current target (a redirect may change it) */
	unsigned redirects;
	unsigned tries;
	uint64_t t0, not_before;
	uint64_t got;              /* body bytes handed to the sink, all attempts */
	uint64_t from;             /* first byte asked for by this attempt */
	uint64_t fetched;          /* body bytes of this attempt (stats) */
	uint64_t moved_ms;         /* when this attempt last received a byte (or began) */
	uint64_t stall_ms;         /* ... and how long it may go without one */
	bool active, done;
	struct nf_rresp resp;      /* the response of this attempt (headers.c) */
	bool body_ok;              /* 2xx with a validated header block: body goes to the sink */
	int abort_rc;              /* set by a callback that stopped the transfer */
	char body[ERRBODY_CAP];
	size_t blen;
	char errbuf[CURL_ERROR_SIZE];
};

uint64_t nf_rnow_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64*: jitter only, no secrets */
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

uint64_t nf_rhttp_backoff(uint64_t *rng, unsigned tries, unsigned base_ms, unsigned cap_ms)
{
	uint64_t ceil = base_ms;
	for (unsigned i = 1; i < tries && ceil < cap_ms; i++)
		ceil *= 2;
	if (ceil > cap_ms)
		ceil = cap_ms;
	return ceil ? rnd(rng) % (ceil + 1) : 0;
}

const char *nf_rhttp_s3code(const char *body, size_t n, char *out, size_t cap)
{
	/* S3 error bodies are <Error><Code>NAME</Code>...; the code is an
	 * identifier, so a search for the element is enough (no XML library
	 * for one element of a fixed schema). */
	const char *b = memmem(body, n, "<Code>", 6), *e;
	size_t len;

	if (b == NULL || cap == 0)
		return NULL;
	b += 6;
	e = memmem(b, n - (size_t)(b - body), "</Code>", 7);
	if (e == NULL)
		return NULL;
	len = (size_t)(e - b);
	if (len == 0 || len >= cap)
		return NULL;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)b[i]) && b[i] != '.' && b[i] != '_' && b[i] != '-')
			return NULL;
	memcpy(out, b, len);
	out[len] = '\0';
	return out;
}

/* ---- response headers -------------------------------------------------- */

static void reset_response(struct nf_rxfer *x)
{
	nf_rresp_reset(&x->resp);
	x->body_ok = false;
	x->blen = 0;
}

/* The end of a 2xx header block: check (or record) the file's validator
 * and size, and the range the server chose.  Returns false to abort. */
static bool check_headers(struct nf_rxfer *x)
{
	struct nf_remote *r = x->t->r;
	struct nf_rfile *f = &r->files[x->q->file];
	uint64_t size = UINT64_MAX;
	bool changed = false;
	char why[sizeof f->st.reason] = "";

	if (x->q->head)
		size = x->resp.clen;
	else if (x->resp.status == 206 && x->resp.has_cr)
		size = x->resp.cr_total;
	if (!x->q->head && x->resp.status != 206) {
		x->abort_rc = -EIO;
		nf_rfile_fail(r, x->q->file, NF_RFILE_BAD, (int)x->resp.status,
			      "the server ignored the Range header (HTTP %ld instead of 206)", x->resp.status);
		return false;
	}
	if (!x->q->head && (!x->resp.has_cr || x->resp.cr_first != x->from)) {
		x->abort_rc = -EIO;
		nf_rfile_fail(r, x->q->file, NF_RFILE_BAD, (int)x->resp.status,
			      "the server answered the range from %" PRIu64 " with another range",
			      x->from);
		return false;
	}
	pthread_mutex_lock(&r->lock);
	if (f->st.status == NF_RFILE_CHANGED) {
		changed = true;
		snprintf(why, sizeof why, "%s", f->st.reason);
	} else if (f->validated && f->st.etag[0] && strcmp(f->st.etag, x->resp.etag) != 0) {
		changed = true;
		snprintf(why, sizeof why, "changed on the server: ETag %s, first seen %s",
			 x->resp.etag[0] ? x->resp.etag : "(none)", f->st.etag);
	} else if (f->validated && !f->st.etag[0] && strcmp(f->lastmod, x->resp.lastmod) != 0) {
		changed = true;
		snprintf(why, sizeof why, "changed on the server: Last-Modified %s, first seen %s",
			 x->resp.lastmod[0] ? x->resp.lastmod : "(none)", f->lastmod);
	} else if (size != UINT64_MAX && f->st.size != UINT64_MAX && size != f->st.size) {
		changed = true;
		snprintf(why, sizeof why, "changed on the server: %" PRIu64 " bytes, first seen %" PRIu64,
			 size, f->st.size);
	} else {
		if (!f->validated && (x->resp.etag[0] || x->resp.lastmod[0])) {
			snprintf(f->st.etag, sizeof f->st.etag, "%s", x->resp.etag);
			snprintf(f->lastmod, sizeof f->lastmod, "%s", x->resp.lastmod);
			f->validated = true;
		}
		if (f->st.size == UINT64_MAX && size != UINT64_MAX)
			f->st.size = size;
		if (f->st.status == NF_RFILE_UNKNOWN) {
			f->st.status = NF_RFILE_OK;
			f->st.http_status = (int)x->resp.status;
		}
	}
	pthread_mutex_unlock(&r->lock);
	if (changed) {
		x->abort_rc = -EIO;
		nf_rfile_fail(r, x->q->file, NF_RFILE_CHANGED, (int)x->resp.status, "%s", why);
		return false;
	}
	x->body_ok = true;
	return true;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ud)
{
	struct nf_rxfer *x = ud;
	size_t n = size * nitems;

	switch (nf_rresp_line(&x->resp, buf, n, time(NULL))) {
	case NF_RH_STATUS:
		x->body_ok = false;
		x->blen = 0;
		break;
	case NF_RH_END:
		if (x->resp.status >= 200 && x->resp.status < 300 && !check_headers(x))
			return 0;
		break;
	case NF_RH_FIELD:
		break;
	}
	return n;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	struct nf_rxfer *x = ud;
	size_t n = size * nmemb;

	if (!x->body_ok) { /* an error body: keep its start for the S3 code */
		size_t k = n < ERRBODY_CAP - 1 - x->blen ? n : ERRBODY_CAP - 1 - x->blen;
		memcpy(x->body + x->blen, p, k);
		x->blen += k;
		return n;
	}
	if (x->got > x->q->len || n > x->q->len - x->got) {
		x->abort_rc = -EIO;
		nf_rfile_fail(x->t->r, x->q->file, NF_RFILE_BAD, (int)x->resp.status,
			      "the server sent more bytes than the range asked for");
		return 0;
	}
	if (x->q->sink(x->q->ctx, x->got, p, n) < 0) {
		x->abort_rc = -ECANCELED;
		return 0;
	}
	x->got += n;
	x->fetched += n;
	x->moved_ms = nf_rnow_ms();
	return n;
}

/* ---- one attempt ------------------------------------------------------- */

static bool same_origin(const struct nf_remote *r, const char *url)
{
	size_t n = strlen(r->u.origin);
	return strncmp(url, r->u.origin, n) == 0 && (url[n] == '/' || url[n] == '\0');
}

static int add_header(struct nf_rxfer *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add_header(struct nf_rxfer *x, const char *fmt, ...)
{
	char *h;
	va_list ap;
	int rc;
	struct curl_slist *l;

	va_start(ap, fmt);
	rc = vasprintf(&h, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -ENOMEM;
	l = curl_slist_append(x->hdrs, h);
	explicit_bzero(h, strlen(h)); /* may be a session token */
	free(h);
	if (l == NULL)
		return -ENOMEM;
	x->hdrs = l;
	return 0;
}

static int set_auth(struct nf_rxfer *x)
{
	struct nf_remote *r = x->t->r;
	CURL *e = x->e;
	int rc = 0;

	if (!same_origin(r, x->url))
		return 0;
	if (r->sign) {
		curl_easy_setopt(e, CURLOPT_AWS_SIGV4, r->sigv4);
		curl_easy_setopt(e, CURLOPT_USERNAME, r->cr.key);
		curl_easy_setopt(e, CURLOPT_PASSWORD, r->cr.secret);
		/* libcurl signs the empty-body hash but does not send the header;
		 * S3 and RGW refuse a signed request without it. */
		rc = add_header(x, "x-amz-content-sha256: " EMPTY_SHA256);
		if (rc == 0 && r->cr.token)
			rc = add_header(x, "x-amz-security-token: %s", r->cr.token);
	} else if (r->u.user) {
		curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(e, CURLOPT_USERNAME, r->u.user);
		curl_easy_setopt(e, CURLOPT_PASSWORD, r->u.password ? r->u.password : "");
	}
	return rc;
}

static int start_attempt(struct nf_rxfer *x)
{
	struct nf_remote *r = x->t->r;
	struct nf_rfile *f = &r->files[x->q->file];
	const struct nf_remote_opts *o = &r->o;
	char range[64], etag[128], lastmod[64];
	bool validated;
	CURL *e;
	int rc = 0;

	if (x->t->nidle > 0) {
		e = x->e = x->t->idle[--x->t->nidle];
		curl_easy_reset(e);
	} else {
		e = x->e = curl_easy_init();
	}
	if (e == NULL)
		return -ENOMEM;
	reset_response(x);
	x->abort_rc = 0;
	x->fetched = 0;
	x->errbuf[0] = '\0';
	x->tries++;
	curl_easy_setopt(e, CURLOPT_URL, x->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(e, CURLOPT_SHARE, r->share);
	curl_easy_setopt(e, CURLOPT_USERAGENT, r->ua);
	/* an https set never talks plain http, not even after a redirect */
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, r->u.scheme == NF_RS_HTTPS ? "https" : "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	/* wait for a connection being set up rather than open a second one:
	 * over HTTP/2 the requests then share it as streams */
	curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
	/* a stalled attempt ends by the request's deadline (retry_ms after its
	 * first try): the connect and stall timeouts shrink to what is left, so
	 * a stall fails the request within retry_ms (+ curl's 1 s granularity)
	 * while a slow transfer that moves is never cut */
	uint64_t spent = nf_rnow_ms() - x->t0;
	uint64_t left = spent < o->retry_total_ms ? o->retry_total_ms - spent : 0;
	uint64_t stall_s = left / 1000 < o->low_speed_secs ? left / 1000 : o->low_speed_secs;
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(left < o->connect_timeout_ms ? (left ? left : 1) : o->connect_timeout_ms));
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, (long)o->low_speed_bytes);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (long)(stall_s ? stall_s : 1));
	/* curl's low-speed check averages over its last seconds, so a stall
	 * after a few bytes ran 6-7 s past low_speed_secs (measured: 22 s for
	 * 15); the serve loop also drops an attempt that received nothing for
	 * that long (stalled()) */
	x->moved_ms = nf_rnow_ms();
	x->stall_ms = (stall_s ? stall_s : 1) * 1000;
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_BUFFERSIZE, (long)NF_RBUFSIZE);
	if (o->cafile)
		curl_easy_setopt(e, CURLOPT_CAINFO, o->cafile);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	if (x->q->head) {
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
	} else {
		x->from = x->q->off + x->got;
		snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, x->from,
			 x->q->off + x->q->len - 1);
		curl_easy_setopt(e, CURLOPT_RANGE, range);
	}
	pthread_mutex_lock(&r->lock);
	validated = f->validated;
	snprintf(etag, sizeof etag, "%s", f->st.etag);
	snprintf(lastmod, sizeof lastmod, "%s", f->lastmod);
	f->st.requests++;
	if (x->tries > 1)
		f->st.retries++;
	pthread_mutex_unlock(&r->lock);
	if (validated && etag[0])
		rc = add_header(x, "If-Match: %s", etag);
	else if (validated)
		rc = add_header(x, "If-Unmodified-Since: %s", lastmod);
	if (rc == 0)
		rc = set_auth(x);
	if (rc == 0 && x->hdrs)
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
	if (rc == 0 && curl_multi_add_handle(x->t->multi, e) != CURLM_OK)
		rc = -ENOMEM;
	if (rc < 0) {
		curl_easy_cleanup(e);
		x->e = NULL;
		curl_slist_free_all(x->hdrs);
		x->hdrs = NULL;
		return rc;
	}
	x->active = true;
	return 0;
}

static void end_attempt(struct nf_rxfer *x)
{
	struct nf_remote *r = x->t->r;
	if (x->e) {
		curl_multi_remove_handle(x->t->multi, x->e);
		if (x->t->nidle < NF_RIDLE)
			x->t->idle[x->t->nidle++] = x->e;   /* reset when reused */
		else
			curl_easy_cleanup(x->e);
		x->e = NULL;
	}
	curl_slist_free_all(x->hdrs);
	x->hdrs = NULL;
	x->active = false;
	pthread_mutex_lock(&r->lock);
	r->files[x->q->file].st.bytes_fetched += x->fetched;
	pthread_mutex_unlock(&r->lock);
}

static void finish(struct nf_rxfer *x, int rc)
{
	x->q->result = rc;
	x->done = true;
}

/* The request gave up: the file rests (DOWN_FIRST_MS, doubling). */
static void file_down(struct nf_remote *r, uint32_t file)
{
	struct nf_rfile *f = &r->files[file];
	pthread_mutex_lock(&r->lock);
	unsigned n = f->downs < 16 ? f->downs : 16;
	uint64_t rest = (uint64_t)DOWN_FIRST_MS << n;
	f->downs++;
	f->down_until = nf_rnow_ms() + (rest < DOWN_MAX_MS ? rest : DOWN_MAX_MS);
	pthread_mutex_unlock(&r->lock);
}

/* A request of the file succeeded: no rest. */
static void file_up(struct nf_remote *r, uint32_t file)
{
	struct nf_rfile *f = &r->files[file];
	pthread_mutex_lock(&r->lock);
	f->downs = 0;
	f->down_until = 0;
	pthread_mutex_unlock(&r->lock);
}

/* A transient failure: schedule the next attempt, or give up. */
static void retry(struct nf_rxfer *x, const char *why)
{
	struct nf_remote *r = x->t->r;
	uint64_t now = nf_rnow_ms(), delay, spent = now - x->t0;
	unsigned cap = r->o.retry_total_ms / 4 ? r->o.retry_total_ms / 4 : 1;

	if (x->tries >= r->o.max_tries) {
		nf_rfile_note(r, x->q->file, "gave up after %u tries in %" PRIu64 " ms: %s", x->tries,
			      spent, why);
		file_down(r, x->q->file);
		finish(x, -EIO);
		return;
	}
	delay = nf_rhttp_backoff(&x->t->rng, x->tries, r->o.backoff_base_ms, cap);
	if (x->resp.retry_after_ms >= 0 && (uint64_t)x->resp.retry_after_ms > delay)
		delay = (uint64_t)x->resp.retry_after_ms;
	if (spent + delay > r->o.retry_total_ms) {
		nf_rfile_note(r, x->q->file,
			      "gave up after %u tries in %" PRIu64 " ms (the next in %" PRIu64
			      " ms would pass retry_ms=%u): %s",
			      x->tries, spent, delay, r->o.retry_total_ms, why);
		file_down(r, x->q->file);
		finish(x, -EIO);
		return;
	}
	nf_rfile_note(r, x->q->file, "try %u: %s", x->tries, why);
	x->not_before = now + delay;
}

static bool curl_transient(CURLcode c)
{
	switch (c) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_SSL_CONNECT_ERROR:
		return true;
	default:
		return false;
	}
}

/* A 3xx: follow it when the options allow, else refuse it by name. */
static void redirect(struct nf_rxfer *x)
{
	struct nf_remote *r = x->t->r;
	CURLU *h = curl_url();
	char *next = NULL, *shown;
	const char *why = NULL;

	if (h == NULL || x->resp.location[0] == '\0') {
		why = "no Location";
	} else if (curl_url_set(h, CURLUPART_URL, x->url, 0) != CURLUE_OK ||
		   curl_url_set(h, CURLUPART_URL, x->resp.location, 0) != CURLUE_OK ||
		   curl_url_get(h, CURLUPART_URL, &next, 0) != CURLUE_OK) {
		why = "a Location that is not a URL";
	} else if (r->u.scheme == NF_RS_HTTPS && strncmp(next, "https://", 8) != 0) {
		why = "a downgrade from https (never followed)";
	} else if (r->o.redirects == NF_REDIRECT_NONE) {
		why = "redirects are not followed (option redirects=same-host or any)";
	} else if (r->o.redirects == NF_REDIRECT_SAME_HOST && !same_origin(r, next)) {
		why = "another host (option redirects=any allows it)";
	} else if (x->redirects >= MAX_REDIRECTS) {
		why = "too many redirects";
	}
	shown = nf_remote_redact(next ? next : x->resp.location);
	if (why) {
		nf_rfile_fail(r, x->q->file, NF_RFILE_BAD, (int)x->resp.status,
			      "HTTP %ld redirect to %s refused: %s", x->resp.status, shown ? shown : "?", why);
		finish(x, -EIO);
	} else {
		char *u = strdup(next);
		if (u == NULL) {
			finish(x, -ENOMEM);
		} else {
			free(x->url);
			x->url = u;
			x->redirects++;
			x->tries--; /* a hop is not a failed attempt; MAX_REDIRECTS bounds hops */
			x->not_before = 0;
		}
	}
	free(shown);
	curl_free(next);
	curl_url_cleanup(h);
}

static void http_refusal(struct nf_rxfer *x)
{
	struct nf_remote *r = x->t->r;
	char code[64], why[160];
	const char *s3 = nf_rhttp_s3code(x->body, x->blen, code, sizeof code);
	long st = x->resp.status;

	snprintf(why, sizeof why, "HTTP %ld%s%s%s", st, s3 ? " (" : "", s3 ? s3 : "", s3 ? ")" : "");
	if (st == 404 || st == 410) {
		nf_rfile_fail(r, x->q->file, NF_RFILE_MISSING, (int)st, "%s", why);
		finish(x, -ENOENT);
	} else if (st == 401 || st == 403) {
		/* which credentials were refused (where from, never what) */
		if (r->sign)
			nf_rfile_fail(r, x->q->file, NF_RFILE_BAD, (int)st, "%s; signed with credentials from %s",
				      why, r->cr.source ? r->cr.source : "?");
		else
			nf_rfile_fail(r, x->q->file, NF_RFILE_BAD, (int)st, "%s%s", why,
				      r->u.s3 ? "; unsigned: no credentials found" : "");
		finish(x, -EACCES);
	} else if (st == 412) {
		nf_rfile_fail(r, x->q->file, NF_RFILE_CHANGED, (int)st,
			      "changed on the server: If-Match failed (%s)", why);
		finish(x, -EIO);
	} else if (st == 416) {
		nf_rfile_note(r, x->q->file, "range %" PRIu64 "+%" PRIu64 " past the end: %s",
			      x->q->off, x->q->len, why);
		finish(x, -EIO);
	} else {
		nf_rfile_fail(r, x->q->file, NF_RFILE_BAD, (int)st, "%s", why);
		finish(x, -EIO);
	}
}

/* One attempt ended with curl code c. */
static void attempt_done(struct nf_rxfer *x, CURLcode c)
{
	struct nf_remote *r = x->t->r;
	char why[300];
	int abort_rc = x->abort_rc;
	long st = x->resp.status;

	end_attempt(x);
	if (abort_rc) { /* the callbacks already said why */
		finish(x, abort_rc == -ECANCELED ? -ECANCELED : -EIO);
		return;
	}
	if (c != CURLE_OK) {
		snprintf(why, sizeof why, "%s%s%s%s", c == CURLE_OPERATION_TIMEDOUT ? "timed out: " : "",
			 curl_easy_strerror(c), x->errbuf[0] ? ": " : "", x->errbuf);
		if (curl_transient(c)) {
			retry(x, why);
		} else {
			nf_rfile_fail(r, x->q->file, NF_RFILE_BAD, 0, "%s", why);
			finish(x, -EIO);
		}
		return;
	}
	if (st >= 200 && st < 300) {
		if (x->q->head || x->got == x->q->len) {
			file_up(r, x->q->file);
			finish(x, 0);
			return;
		}
		uint64_t size = nf_rfile_known(r, x->q->file, NULL);
		if (size != UINT64_MAX && x->q->off + x->q->len > size) {
			nf_rfile_note(r, x->q->file, "range %" PRIu64 "+%" PRIu64
				      " past the end of the %" PRIu64 "-byte object",
				      x->q->off, x->q->len, size);
			finish(x, -EIO);
			return;
		}
		snprintf(why, sizeof why, "short body: %" PRIu64 " of %" PRIu64 " bytes", x->got,
			 x->q->len);
		retry(x, why);
	} else if (st >= 300 && st < 400 && st != 304) {
		redirect(x);
	} else if (st == 429 || st >= 500) {
		snprintf(why, sizeof why, "HTTP %ld", st);
		retry(x, why);
	} else {
		http_refusal(x);
	}
}

/* ---- the loop ---------------------------------------------------------- */

/* Refuses a request before any I/O when its file is already known bad,
 * or rests after a request that gave up (file_down). */
static int precheck(struct nf_remote *r, const struct nf_rreq *q)
{
	int rc = 0;
	if (q->file >= r->nfiles)
		return -EBADF;
	if (r->o.offline) {   /* the one place every request passes */
		nf_rfile_note(r, q->file, "not in the cache (-o offline: nothing is asked of the server)");
		return -EIO;
	}
	uint64_t now = nf_rnow_ms();
	pthread_mutex_lock(&r->lock);
	switch (r->files[q->file].st.status) {
	case NF_RFILE_MISSING:
		rc = -ENOENT;
		break;
	case NF_RFILE_BAD:
		rc = r->files[q->file].st.http_status == 401 || r->files[q->file].st.http_status == 403
			     ? -EACCES : -EIO;
		break;
	case NF_RFILE_CHANGED:
		rc = -EIO;
		break;
	default:
		if (now < r->files[q->file].down_until)
			rc = -EIO;
		break;
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* Takes the next request from the source and gets it going: a transfer
 * ready to start, or finished at once (a file already known bad, an empty
 * range).  NULL when the source has none now. */
static struct nf_rxfer *take(struct nf_remote_thread *t, const struct nf_rsource *src, bool idle,
			     bool *more)
{
	struct nf_remote *r = t->r;
	struct nf_rreq *q = src->next(src->ctx, idle);
	struct nf_rxfer *x;
	int rc;

	*more = q != NULL;
	if (q == NULL)
		return NULL;
	q->result = 0;
	x = calloc(1, sizeof *x);
	rc = x ? precheck(r, q) : -ENOMEM;
	if (rc == 0 && (x->url = strdup(r->files[q->file].url)) == NULL)
		rc = -ENOMEM;
	if (rc < 0 || (!q->head && q->len == 0)) {
		q->result = rc;
		if (x)
			free(x->url);
		free(x);
		src->done(src->ctx, q);
		return NULL;
	}
	x->t = t;
	x->q = q;
	x->t0 = nf_rnow_ms();
	return x;
}

static void retire(struct nf_rxfer *x, const struct nf_rsource *src)
{
	struct nf_rreq *q = x->q;
	if (x->active)
		end_attempt(x);
	free(x->url);
	free(x);
	src->done(src->ctx, q);
}

void nf_rhttp_serve(struct nf_remote_thread *t, const struct nf_rsource *src)
{
	struct nf_remote *r = t->r;
	/* transfers in flight or waiting to retry: at most max_inflight (or
	 * the source's own bound), so a request waiting for its backoff holds
	 * its slot */
	unsigned max = src->max_active && src->max_active < r->o.max_inflight ? src->max_active
									      : r->o.max_inflight;
	struct nf_rxfer **xs = calloc(max, sizeof *xs);
	size_t nx = 0, active = 0;
	bool exhausted = false;

	if (xs == NULL) { /* fail what the source has, without blocking */
		struct nf_rreq *q;
		while ((q = src->next(src->ctx, false)) != NULL) {
			q->result = -ENOMEM;
			src->done(src->ctx, q);
		}
		return;
	}
	for (;;) {
		uint64_t now = nf_rnow_ms(), wake = UINT64_MAX;
		/* hand back the finished ones, then start due retries, then new
		 * requests while there is room */
		for (size_t i = 0; i < nx;) {
			if (xs[i]->done) {
				retire(xs[i], src);
				xs[i] = xs[--nx];
			} else {
				i++;
			}
		}
		for (size_t i = 0; i < nx && active < max; i++) {
			struct nf_rxfer *x = xs[i];
			if (x->active)
				continue;
			if (x->not_before > now) {
				wake = x->not_before < wake ? x->not_before : wake;
				continue;
			}
			int rc = start_attempt(x);
			if (rc < 0)
				finish(x, rc);
			else
				active++;
		}
		while (nx < max) {
			bool more;
			struct nf_rxfer *x = take(t, src, nx == 0, &more);
			if (!more) {
				exhausted = nx == 0;
				break;
			}
			if (x == NULL)
				continue;
			int rc = start_attempt(x);
			if (rc < 0)
				finish(x, rc);
			else
				active++;
			xs[nx++] = x;
		}
		/* hand back the ones whose start failed */
		for (size_t i = 0; i < nx;) {
			if (xs[i]->done) {
				retire(xs[i], src);
				xs[i] = xs[--nx];
			} else {
				i++;
			}
		}
		if (nx == 0) {
			if (exhausted)
				break;
			continue;   /* the source had nothing while busy: ask again, idle */
		}
		int running = 0, q = 0;
		curl_multi_perform(t->multi, &running);
		CURLMsg *m;
		while ((m = curl_multi_info_read(t->multi, &q)) != NULL) {
			struct nf_rxfer *x = NULL;
			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
			CURLcode c = m->data.result;
			active--;
			attempt_done(x, c);
		}
		bool finished = false;
		now = nf_rnow_ms();
		for (size_t i = 0; i < nx; i++) {
			struct nf_rxfer *x = xs[i];
			if (!x->done && src->abandon && src->abandon(src->ctx, x->q)) {
				if (x->active) {
					end_attempt(x);
					active--;
				}
				finish(x, -ECANCELED);
			} else if (!x->done && x->active && now - x->moved_ms >= x->stall_ms) {
				char why[96];
				snprintf(why, sizeof why, "timed out: no byte for %" PRIu64 " s", x->stall_ms / 1000);
				end_attempt(x);
				active--;
				retry(x, why);
			}
			finished |= x->done;
		}
		if (finished)
			continue;
		long wait_ms = 1000;
		now = nf_rnow_ms();
		for (size_t i = 0; i < nx; i++) {
			if (!xs[i]->active && xs[i]->not_before < wake)
				wake = xs[i]->not_before;
			if (xs[i]->active && xs[i]->moved_ms + xs[i]->stall_ms < wake)
				wake = xs[i]->moved_ms + xs[i]->stall_ms;
		}
		if (wake != UINT64_MAX)
			wait_ms = wake <= now ? 0 : (long)(wake - now < 1000 ? wake - now : 1000);
		/* curl_multi_wakeup() (a new request queued) ends the wait early */
		if (active > 0 || wait_ms > 0)
			curl_multi_poll(t->multi, NULL, 0, (int)wait_ms, NULL);
	}
	free(xs);
}

/* nf_rhttp_run: a source that hands out the array, then has no more. */
struct array_src {
	struct nf_rreq *reqs;
	size_t n, next;
};

static struct nf_rreq *array_next(void *ctx, bool idle)
{
	struct array_src *a = ctx;
	(void)idle;
	return a->next < a->n ? &a->reqs[a->next++] : NULL;
}

static void array_done(void *ctx, struct nf_rreq *q)
{
	(void)ctx;
	(void)q;
}

void nf_rhttp_run(struct nf_remote_thread *t, struct nf_rreq *reqs, size_t n)
{
	struct array_src a = {.reqs = reqs, .n = n};
	struct nf_rsource src = {.next = array_next, .done = array_done, .ctx = &a};
	nf_rhttp_serve(t, &src);
}
