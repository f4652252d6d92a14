/* remote/internal.h — what the files of remote/ share; never included
 * outside remote/. */
#ifndef NF_REMOTE_INTERNAL_H
#define NF_REMOTE_INTERNAL_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdarg.h>
#include <time.h>

#include "remote/remote.h"

/* ---- url.c: the URL model ---------------------------------------------- */

enum nf_rscheme { NF_RS_HTTP, NF_RS_HTTPS };   /* of the requests */

struct nf_rurl {
	enum nf_rscheme scheme;
	char *prefix;      /* the entry's "directory": request URL up to its last '/' */
	char *entry;       /* prefix + the entry's (encoded) last segment */
	char *origin;      /* scheme://host[:port] of the requests, for redirect checks */
	char *user;        /* http(s) userinfo, used as basic auth, never printed */
	char *password;
	bool s3;           /* an s3:// entry: requests are signed when there are credentials */
	char *bucket;      /* s3 only */
};

int nf_rurl_parse(struct nf_rurl *u, const char *url, const char *endpoint, const char *region,
		  char **err);
void nf_rurl_free(struct nf_rurl *u);
/* prefix + the percent-encoded `name`; NULL with *why set when the name is
 * not a plain file name or the result would not be one segment under the
 * prefix. */
char *nf_rurl_sibling(const struct nf_rurl *u, const char *name, const char **why);
/* every byte outside RFC 3986 unreserved as %XX (upper case); '/' kept
 * when keep_slash. */
char *nf_rurl_encode(const char *s, bool keep_slash);
/* 1 when `url` is `prefix` followed by exactly one encoded segment */
bool nf_rurl_is_child(const char *prefix, const char *url);

/* ---- creds.c: AWS credentials and region -------------------------------- */

struct nf_rcreds {
	char *key;
	char *secret;
	char *token;
	char *region;
	char *source;      /* where they came from, e.g. "environment", "profile default of FILE" */
};
int nf_rcreds_load(struct nf_rcreds *c, const char *profile, const char *region, char **err);
void nf_rcreds_free(struct nf_rcreds *c);

/* ---- the set ------------------------------------------------------------ */

struct nf_rfile {
	char *url;                 /* request URL (no credentials in it) */
	char *shown;               /* nf_remote_redact(url) */
	struct nf_remote_file_stats st;   /* under the set's lock; .url = shown */
	char lastmod[64];          /* validator when no ETag */
	bool validated;            /* etag or lastmod recorded */
	bool recorded;             /* size and validator stored in the cache (nf_rcache_put_file) */
	/* after a request gave up on transient failures the file rests:
	 * requests fail at once until down_until (nf_rnow_ms), a rest that
	 * doubles with each further give-up (downs) and ends with a success */
	uint64_t down_until;
	unsigned downs;
};

struct nf_rcache;

struct nf_remote {
	struct nf_remote_opts o;
	bool global;               /* curl_global_init done */
	struct nf_rurl u;
	struct nf_rcreds cr;
	bool sign;                 /* s3 with credentials: SigV4 */
	char *sigv4;               /* "aws:amz:REGION:s3" */
	char *ua;
	struct nf_rfile *files;
	uint32_t nfiles;
	bool parts_set;
	pthread_mutex_t lock;      /* file states and counters */
	CURLSH *share;             /* DNS cache and TLS sessions, shared by the threads */
	pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
	struct nf_rcache *cache;
	/* prefetch: the memory budget and the background fetcher */
	struct nf_rpf *pf;
};

/* ---- headers.c: one response's header block ---------------------------- */

/* What a response's header block said; unset fields as nf_rresp_reset()
 * leaves them (clen UINT64_MAX, retry_after_ms -1, strings empty). */
struct nf_rresp {
	long status;               /* the last status line's code, 0 if none parsed */
	char etag[128];
	char lastmod[64];
	bool has_cr;               /* Content-Range: bytes FIRST-LAST/TOTAL parsed */
	uint64_t cr_first, cr_total; /* cr_total UINT64_MAX for '*' */
	uint64_t clen;             /* Content-Length */
	long retry_after_ms;       /* Retry-After, at most a day */
	char location[1024];
};
enum nf_rhline { NF_RH_STATUS, NF_RH_FIELD, NF_RH_END };

void nf_rresp_reset(struct nf_rresp *r);
/* One line as libcurl's header callback hands it (CRLF included, not NUL
 * terminated): a status line resets r and sets the status; a field sets
 * what it names; the empty line ends the block.  `now` is the clock an
 * HTTP-date Retry-After is measured from. */
enum nf_rhline nf_rresp_line(struct nf_rresp *r, const char *line, size_t n, time_t now);

/* ---- http.c: one thread's transfers ------------------------------------ */

/* Body bytes of a request go to a sink: `pos` is the offset inside the
 * request's range.  Returns 0, or -1 to abort the transfer (cancelled). */
typedef int (*nf_rsink)(void *ctx, uint64_t pos, const void *p, size_t n);

struct nf_rreq {
	/* in */
	uint32_t file;
	uint64_t off, len;         /* range; len 0 and head: a HEAD request */
	bool head;
	nf_rsink sink;
	void *ctx;
	/* out */
	int result;                /* 0 or -errno */
	/* private to http.c */
	struct nf_rxfer *x;
};

#define NF_RIDLE 16            /* easy handles kept per thread for reuse */

struct nf_remote_thread {
	struct nf_remote *r;
	CURLM *multi;
	uint64_t rng;              /* xorshift state for backoff jitter */
	/* easy handles of finished attempts, reset and reused: a fresh one
	 * allocates (and the kernel zeroes) a new 256 KiB receive buffer per
	 * request */
	CURL *idle[NF_RIDLE];
	unsigned nidle;
	/* chunks whose bytes the last nf_remote_stream_read_ref handed out
	 * (one reference each), until nf_remote_release */
	struct pfchunk **held;
	size_t nheld, heldcap;
};

/* Runs the requests to completion (retries included); each gets a result. */
void nf_rhttp_run(struct nf_remote_thread *t, struct nf_rreq *reqs, size_t n);

/* A stream of requests: next() gives the next one to start or NULL (none
 * now; `idle` says nothing is in flight, so it may block until there is
 * work, and NULL then ends the serve); done() gets each one back with its
 * result.  The prefetcher feeds its worker this way, so chunks queued while
 * others are in flight start at once (it calls curl_multi_wakeup). */
struct nf_rsource {
	struct nf_rreq *(*next)(void *ctx, bool idle);
	void (*done)(void *ctx, struct nf_rreq *q);
	/* optional: true when a request in flight or waiting to retry is no
	 * longer wanted (it ends with -ECANCELED, even a stalled one) */
	bool (*abandon)(void *ctx, const struct nf_rreq *q);
	void *ctx;
	/* optional: in flight at most this many (0, or more than
	 * opts.max_inflight: opts.max_inflight) */
	unsigned max_active;
};
void nf_rhttp_serve(struct nf_remote_thread *t, const struct nf_rsource *src);
/* The S3 error code of an XML error body, or NULL (copied into out). */
const char *nf_rhttp_s3code(const char *body, size_t n, char *out, size_t cap);
/* Full-jitter backoff for attempt `tries` (1-based): [0, min(cap, base*2^(tries-1))] ms. */
uint64_t nf_rhttp_backoff(uint64_t *rng, unsigned tries, unsigned base_ms, unsigned cap_ms);
uint64_t nf_rnow_ms(void);

/* file state updates, under r->lock */
void nf_rfile_fail(struct nf_remote *r, uint32_t file, enum nf_rfile_status s, int http,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void nf_rfile_note(struct nf_remote *r, uint32_t file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- cache.c: the block cache ------------------------------------------ */

#define NF_RCACHE_BLOCK ((uint64_t)1 << 20)

int nf_rcache_open(struct nf_rcache **out, const char *dir, uint64_t limit, const char *set,
		   bool fsync_blocks, char **err);
void nf_rcache_close(struct nf_rcache *c);
int nf_rcache_set_key(struct nf_rcache *c, const char *set);
/* Block `block` of file `file` with validator `etag`: its `len` bytes
 * into buf.  0 on a verified hit, -ENOENT on a miss, a foreign or corrupt
 * block (which is then removed). */
int nf_rcache_get(struct nf_rcache *c, uint32_t file, uint64_t block, const char *etag,
		  void *buf, uint64_t len);
/* Stores it (temp file + rename); errors are ignored by callers: the cache
 * is an optimisation. */
int nf_rcache_put(struct nf_rcache *c, uint32_t file, uint64_t block, const char *etag,
		  const void *buf, uint64_t len);

/* A file's size and validator as last seen from its server ('E' an ETag,
 * 'L' a Last-Modified), stored beside its blocks under the set key of the
 * moment, so that -o offline can mount a set it has never asked about in
 * this process.  get: 0, or -ENOENT (none, or foreign or corrupt: then
 * removed). */
int nf_rcache_put_file(struct nf_rcache *c, uint32_t file, uint64_t size, char kind,
		       const char *validator);
int nf_rcache_get_file(struct nf_rcache *c, uint32_t file, uint64_t *size, char *kind,
		       char validator[128]);

/* remote.c: the cached read path */
int nf_rread_cached(struct nf_remote_thread *t, struct nf_io *ios, size_t n);
/* remote.c: the plain read path (merge, cut, fetch) */
int nf_rread_direct(struct nf_remote_thread *t, struct nf_io *ios, size_t n);
/* the recorded size, or UINT64_MAX; validator copied into etag (cap 128) */
uint64_t nf_rfile_known(struct nf_remote *r, uint32_t file, char *etag);

/* ---- copy.c ------------------------------------------------------------ */

/* memcpy for a destination read only much later (a prefetch chunk): large
 * copies bypass the cache; the bytes are visible to other threads in
 * order with the caller's next stores, as memcpy's are */
void nf_rcopy_cold(void *dst, const void *src, size_t n);

/* ---- prefetch.c -------------------------------------------------------- */

struct nf_rpf;
struct pfchunk;
int nf_rpf_new(struct nf_remote *r, struct nf_rpf **out);
void nf_rpf_free(struct nf_rpf *pf);

#endif
