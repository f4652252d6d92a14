/* fs/engine.h — the read engine seam: how the adapter fetches segment
 * lists (struct nf_io of io/io.h), whatever serves the files.
 *
 * One engine is chosen once at mount (main.c) and never changes: io_uring
 * over the set's descriptors (fs/engine_uring.c, on iouring/) for local
 * files; the remote engine (remote/, issue 14) comes next behind the same
 * ops.  The engine keeps state per worker thread (made on the thread's
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

#define NF_ENGINE_STATS_MAX 4

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
	 * all succeeded, else a negative errno. */
	int (*read)(void *th, struct nf_io *ios, size_t n);
	void (*stats)(const void *th, uint64_t *out);   /* nstats running totals */
	void (*close)(void *engine);      /* after every thread state is freed */
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

#endif
