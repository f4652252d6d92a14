/* fs/engine.h — the read engine seam: how the adapter fetches segment
 * lists (struct nf_io of io/io.h), whatever serves the files.
 *
 * One engine is chosen once at mount (main.c) and never changes: io_uring
 * over the set's descriptors (fs/engine_uring.c, on iouring/) for local
 * files; HTTP range GETs (fs/engine_remote.c, on remote/) for a set whose
 * files are URLs (issue 14).  The engine keeps state per worker thread (made on the thread's
 * first read, freed when the thread ends), so reads on different threads
 * share nothing; `read` takes the whole segment list of one FUSE request
 * (readpath.c: one submission per request).
 *
 * Counters: an engine names up to NF_ENGINE_STATS_MAX counters of its own
 * (io_uring: uring_submissions, uring_sqes, short_reads); `stats` gives a
 * thread's running totals and the adapter sums what each read added into
 * the stats document, under those names, in that order. */
#ifndef NF_FS_ENGINE_H
#define NF_FS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/io.h"

#define NF_ENGINE_STATS_MAX 5

/* A remote file as the engine sees it (stats: "remote" of each file). */
struct nf_engine_file_stats {
	const char *url;          /* redacted: no credentials */
	const char *status;       /* "unknown", "ok", "missing", "bad", "changed" */
	int http_status;          /* of the response that set the status (0: none) */
	const char *reason;       /* why not ok, or the last transient failure ("") */
	uint64_t bytes_fetched, requests, retries;
	uint64_t cache_hits, cache_misses;
	uint64_t prefetch_hits, prefetch_bytes;
	char buf[320];            /* holds reason */
};

/* Bytes of an io's buffer that read_ref left elsewhere: dst[0, len) is
 * at src. */
struct nf_engine_ref {
	void *dst;
	const void *src;
	size_t len;
};

struct nf_engine_ops {
	const char *name;
	unsigned nstats;                  /* <= NF_ENGINE_STATS_MAX */
	const char *const *stat_names;
	/* This thread's state; 0 or -errno (the read then fails with ENOMEM). */
	int (*thread_new)(void *engine, void **th);
	void (*thread_free)(void *th);
	/* Read every segment fully into its buffer: ios[i].file indexes the
	 * set's files, offset is the file offset.  Each io's result is 0 or
	 * -errno (-EIO for EOF inside the span), or -ECANCELED when it was not
	 * issued because an earlier failure stopped the read.  Returns 0 when
	 * all succeeded, else a negative errno.  `stream` is the open file's
	 * (stream_new), or NULL. */
	int (*read)(void *th, void *stream, struct nf_io *ios, size_t n);
	void (*stats)(const void *th, uint64_t *out);   /* nstats running totals */
	void (*close)(void *engine);      /* after every thread state is freed */
	/* Optional (NULL: none).  Per-open read state, one per open file of a
	 * view read through the engine (remote: a sequential-read detector
	 * with its prefetched windows); may be read from several threads at
	 * once; the engine frees what is left at close. */
	int (*stream_new)(void *engine, void **stream);
	void (*stream_free)(void *engine, void *stream);
	/* Optional (NULL: none).  The file ranges the open view's bytes lie
	 * in, in the view's order (ios[].file, offset, length; dst unused),
	 * given once right after stream_new: the engine may fetch ahead
	 * across them (remote: a split object's next part, before the reader
	 * gets there) and never beyond them. */
	void (*stream_path)(void *engine, void *stream, const struct nf_io *ranges, size_t n);
	/* Optional (NULL: none).  `read`, except that bytes the engine holds
	 * in memory of its own (remote: prefetched chunks) may be left there
	 * instead of copied into the ios' buffers: refs[0, *nrefs) (at most
	 * cap, in the order of their dst, each inside one io's buffer) say
	 * which bytes are where.  That memory stays valid and unchanged until
	 * release(th), which the caller must call, whatever read_ref
	 * returned, before th's next read: the adapter writes its FUSE reply
	 * from it (one copy fewer: bench/README.md, issue 14). */
	int (*read_ref)(void *th, void *stream, struct nf_io *ios, size_t n,
			struct nf_engine_ref *refs, size_t cap, size_t *nrefs);
	void (*release)(void *th);
	/* What the engine knows of file i, for stats and logs. */
	int (*file_stats)(void *engine, uint32_t i, struct nf_engine_file_stats *out);
};

struct nf_engine {
	const struct nf_engine_ops *ops;
	void *state;
	bool fixed_files;   /* every file is held open for the whole mount (stats) */
};

struct nf_fs;
/* The io_uring engine over fs->set: fixed files when the family's
 * open-file cache holds every file (each acquired now, held until close,
 * registered once per ring), else plain rings to which every read gives
 * the descriptors it acquired.  0 or -ENOMEM. */
int nf_engine_uring_open(struct nf_engine *e, struct nf_fs *fs);
/* The remote engine over fs->set.remote (remote/remote.h): one
 * nf_remote_thread per worker thread, a prefetch stream per open file,
 * every file checked through the set's verify before its first read (a
 * part's header, seed §3.2) and after a failed one (an object changed on
 * the server becomes bad: contract §5).  0 or -ENOMEM. */
int nf_engine_remote_open(struct nf_engine *e, struct nf_fs *fs);

#endif
