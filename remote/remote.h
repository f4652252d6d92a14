/* remote/remote.h — the remote read engine: fetch lists of (file, offset,
 * length, buffer) segments from HTTP(S) servers and S3-compatible stores
 * with range GETs (libcurl's multi interface).
 *
 * The same shape as iouring/engine.h: a segment list in (struct nf_io),
 * bytes or -errno per segment out.  Depends on nothing else of ours.
 *
 *   struct nf_remote         one artifact set: the entry URL (file 0) and its
 *                            parts (files 1..), credentials, per-file state
 *                            (ETag, size, status, counters), the optional
 *                            block cache and the prefetch memory budget.
 *                            Thread-safe once nf_remote_set_parts() is done.
 *   struct nf_remote_thread  one thread's transfers (a curl multi handle and
 *                            its connection cache), like one ring per thread.
 *   struct nf_remote_stream  one reader's sequential-read detector and
 *                            prefetched windows; the caller owns it (the
 *                            daemon keeps one per open file handle).
 *
 * Consistency: the first response for a file records its ETag (or
 * Last-Modified) and size; every later request carries If-Match (or
 * If-Unmodified-Since) and every response's validator is compared, so an
 * object replaced on the server marks the file NF_RFILE_CHANGED and every
 * later read of it fails with -EIO.
 *
 * Secrets: credentials are never put in a URL, a reason, a stats record or
 * a log line; every URL this library shows went through nf_remote_redact(). */
#ifndef NF_REMOTE_REMOTE_H
#define NF_REMOTE_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/io.h"

enum nf_redirects {
	NF_REDIRECT_NONE,       /* a 3xx is an error naming the target (default) */
	NF_REDIRECT_SAME_HOST,  /* follow to the same scheme, host and port */
	NF_REDIRECT_ANY,        /* follow anywhere, but never https -> http */
};

struct nf_remote_opts {
	const char *endpoint;        /* s3: NULL = $AWS_ENDPOINT_URL, else AWS itself */
	const char *region;          /* NULL = $AWS_REGION, $AWS_DEFAULT_REGION, profile, us-east-1 */
	const char *profile;         /* NULL = $AWS_PROFILE, else "default" */
	const char *cafile;          /* extra CA bundle (PEM) instead of the system store */
	enum nf_redirects redirects;
	unsigned max_tries;          /* attempts per request, first included (5) */
	unsigned retry_total_ms;     /* a request gives up after this long (30000) */
	unsigned backoff_base_ms;    /* full-jitter backoff base (100), cap retry_total/4 */
	unsigned connect_timeout_ms; /* (10000) */
	unsigned low_speed_bytes;    /* an attempt slower than this many bytes/s ... (1) */
	unsigned low_speed_secs;     /* ... for this many seconds is dropped (15) */
	unsigned max_inflight;       /* transfers at once per thread (16) */
	uint64_t max_request;        /* merged runs are cut into requests of at most this (16 MiB) */
	uint64_t prefetch_mem;       /* prefetched bytes held at once, all streams (256 MiB) */
	uint64_t prefetch_min;       /* first prefetch window (1 MiB) */
	uint64_t prefetch_max;       /* window cap (64 MiB) */
	const char *cache_dir;       /* block cache directory, NULL = no cache */
	uint64_t cache_size;         /* cache size limit (1 GiB) */
	const char *cache_set;       /* cache key of the set (artifact id); NULL = entry URL */
	bool cache_fsync;            /* fsync each block before its rename (off) */
	bool offline;                /* no request at all: sizes, validators and
				      * blocks only from the cache (off) */
};

/* Fills in the defaults above. */
void nf_remote_opts_init(struct nf_remote_opts *o);

/* Applies one "key=value" option (endpoint, region, profile, cafile,
 * redirects=none|same-host|any, tries, retry_ms, backoff_ms, connect_ms,
 * low_speed_bytes, low_speed_secs, inflight, max_request, prefetch_mem,
 * prefetch_min, prefetch_max, cache, cache_size, cache_set, cache_fsync,
 * offline);
 * sizes take K/M/G suffixes.  The strings are not copied: `kv` must outlive
 * the options.  Returns 0, -ENOENT for a key that is not ours (the caller
 * may own it), or -EINVAL with *err set (free it). */
int nf_remote_opts_set(struct nf_remote_opts *o, char *kv, char **err);
/* Once all are set: the rules between options (offline needs a cache).
 * 0, or -EINVAL with *err set (free it). */
int nf_remote_opts_check(const struct nf_remote_opts *o, char **err);

/* 1 when `s` is a URL this engine serves (http://, https://, s3://). */
bool nf_remote_is_url(const char *s);

/* A copy of `url` fit to print: user:password@ and any query string
 * replaced.  NULL on allocation failure. */
char *nf_remote_redact(const char *url);
/* A command-line argument fit to print: a URL redacted, or a -o list
 * whose values may be URLs (endpoint=http://user:pw@host) with each such
 * value redacted; anything else copied.  NULL on allocation failure. */
char *nf_remote_redact_arg(const char *s);

struct nf_remote;
struct nf_remote_thread;
struct nf_remote_stream;

/* Opens the set whose entry is `url` (file 0).  No request is made yet.
 * Errors (bad URL, options, credentials file) return -errno with *err set
 * to a message that names the (redacted) URL. */
int nf_remote_open(const char *url, const struct nf_remote_opts *o, struct nf_remote **out,
		   char **err);
void nf_remote_close(struct nf_remote *r);

/* Declares the parts: names[i] becomes file i+1, resolved as a sibling of
 * the entry (one percent-encoded path segment after the entry's directory;
 * "", ".", "..", and names with '/' or NUL are refused: -EINVAL with *err).
 * Once per set, before any other thread uses it (-EBUSY the second time). */
int nf_remote_set_parts(struct nf_remote *r, const char *const *names, uint32_t n, char **err);
uint32_t nf_remote_nfiles(const struct nf_remote *r);

/* Names the set in the block cache (the reader passes the artifact id from
 * the entry header, known only after the first read): blocks stored from
 * now on, and looked up, are keyed by it.  Like nf_remote_set_parts,
 * before other threads use the set.  A no-op without a cache. */
int nf_remote_set_cache_key(struct nf_remote *r, const char *key);

int nf_remote_thread_new(struct nf_remote *r, struct nf_remote_thread **out);
void nf_remote_thread_free(struct nf_remote_thread *t);

/* Reads every segment fully: adjacent segments of one file are merged into
 * one range GET, up to opts.max_inflight requests in flight, bytes written
 * straight into the segments' buffers (through the block cache when it is
 * on).  Each segment's result is 0 or -errno: -EIO for a short body, a
 * changed object, a timeout or exhausted retries (the reason is kept in
 * the file's stats; after exhausted retries the file rests, 1 s doubling
 * to 60 s until a success, and its reads fail at once meanwhile), -ENOENT for 404/410, -EACCES for 401/403, -EBADF for a
 * file index out of range, -EINVAL for a bad span.  Returns 0 or the first
 * failing segment's result. */
int nf_remote_read(struct nf_remote_thread *t, struct nf_io *ios, size_t n);

/* pread(2) for the reader's header/JSON/part-header reads: all of
 * [off, off+len) or -errno (-EIO when the object is shorter). */
int nf_remote_pread(struct nf_remote_thread *t, uint32_t file, void *buf, uint64_t len,
		    uint64_t off);

struct nf_remote_stat {
	uint64_t size;
	char etag[128];   /* ETag as sent (quotes included), or "" */
	char lastmod[64]; /* Last-Modified, when the server sent no ETag */
};
/* Size and validator of a file: from earlier responses, else one HEAD. */
int nf_remote_stat(struct nf_remote_thread *t, uint32_t file, struct nf_remote_stat *st);

/* Prefetching reads for one reader.  A read near the furthest byte read of
 * the same file (16 MiB behind it to 16 MiB, or a window, beyond what was
 * read or fetched ahead: the kernel's readahead delivers one reader's
 * requests out of order, on several threads) is sequential: the stream
 * then fetches ahead in windows that start at opts.prefetch_min and double
 * up to opts.prefetch_max, on the set's background threads, within the
 * set's opts.prefetch_mem budget, and the read takes its bytes from them;
 * a straggler further behind reads directly; any other read (and a file's
 * first) drops the windows of that file and goes straight to the network.  Same results as nf_remote_read.  A
 * stream may be read from several threads at once (each with its own
 * nf_remote_thread); free it before its set. */
int nf_remote_stream_new(struct nf_remote *r, struct nf_remote_stream **out);
void nf_remote_stream_free(struct nf_remote_stream *s);
int nf_remote_stream_read(struct nf_remote_thread *t, struct nf_remote_stream *s,
			  struct nf_io *ios, size_t n);

/* Where the stream's reader goes: the file ranges an open view's bytes
 * lie in, in the order a sequential reader meets them (an object of a
 * split set runs from one part's end on at the next part's payload).
 * With a path, a window never reaches beyond the range it is in, and
 * windows that reach a range's end go on at the next range, in its file,
 * before the reader gets there, so that a part boundary costs no round
 * trip; that file's first read is then sequential.  Ranges of one file
 * that overlap or nearly touch are joined (prefetch.c, PATH_GAP); all are
 * kept, 44 bytes each, for the stream's life (a view's ranges are as many
 * as its objects' pieces and the part boundaries in them: memory in step
 * with the set's own tables).  Call it before the stream's first read;
 * the ranges' dst and result are not used, and the caller's array is not
 * kept.  With no memory for it (or more than NF_REMOTE_PATH_MAX ranges,
 * which the indices cannot count), the stream has no path (it reads as
 * without one). */
#define NF_REMOTE_PATH_MAX UINT32_MAX
void nf_remote_stream_path(struct nf_remote_stream *s, const struct nf_io *ranges, size_t n);
/* A file the stream's windows went on into ahead of its reader
 * (nf_remote_stream_path), each once, in order (a few kept until taken),
 * else UINT32_MAX: the caller may check that file now
 * (fs/engine_remote.c: a part's header), not when the reader gets
 * there. */
uint32_t nf_remote_stream_reached(struct nf_remote_stream *s);

/* Bytes of an io's buffer that a read left in the stream's prefetched
 * memory instead of copying them: dst[0, len) is to be taken from src. */
struct nf_remote_ref {
	void *dst;
	const void *src;
	size_t len;
};
/* nf_remote_stream_read, except that bytes found in prefetched chunks are
 * not copied into the ios' buffers: refs[0, *nrefs) (at most cap, in the
 * order of their dst; bytes beyond cap are copied as usual) say where
 * they are.  The chunks they point into are held by `t` (not reused, not
 * freed, their bytes unchanged, even when the stream drops or cancels
 * them meanwhile) until nf_remote_release(t), which must come before t's
 * next read and whatever this returned.  This saves the copy chunk ->
 * reply buffer: FUSE's reply can be written straight from the chunks. */
int nf_remote_stream_read_ref(struct nf_remote_thread *t, struct nf_remote_stream *s,
			      struct nf_io *ios, size_t n, struct nf_remote_ref *refs, size_t cap,
			      size_t *nrefs);
/* The most bytes the set's prefetched chunks held at once so far (all
 * streams; at most opts.prefetch_mem). */
uint64_t nf_remote_prefetch_peak(struct nf_remote *r);
/* Gives back the chunks t's last nf_remote_stream_read_ref holds (none: a
 * no-op). */
void nf_remote_release(struct nf_remote_thread *t);

enum nf_rfile_status {
	NF_RFILE_UNKNOWN,   /* no response yet */
	NF_RFILE_OK,
	NF_RFILE_MISSING,   /* 404 / 410 */
	NF_RFILE_BAD,       /* 401 / 403, other refusals, TLS failures */
	NF_RFILE_CHANGED,   /* ETag / Last-Modified / size differs from the first response */
};
const char *nf_remote_status_name(enum nf_rfile_status s);

struct nf_remote_file_stats {
	const char *url;          /* redacted; valid while the set is open */
	enum nf_rfile_status status;
	int http_status;          /* of the response that set the status (0: none) */
	char reason[320];         /* why not OK, or the last transient failure */
	uint64_t size;            /* UINT64_MAX until known */
	char etag[128];
	uint64_t bytes_fetched;   /* body bytes received */
	uint64_t requests;        /* HTTP requests sent, retries included */
	uint64_t retries;
	uint64_t cache_hits;      /* blocks served from the cache */
	uint64_t cache_misses;    /* blocks fetched and stored */
	uint64_t prefetch_hits;   /* bytes served from prefetched windows */
	uint64_t prefetch_bytes;  /* bytes fetched ahead */
};
/* A snapshot of file `file`'s counters and state (-EBADF out of range). */
int nf_remote_file_stats(struct nf_remote *r, uint32_t file, struct nf_remote_file_stats *out);

#endif
