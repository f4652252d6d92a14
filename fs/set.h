/* fs/set.h — the backing files of a mount, as the adapter sees them.
 *
 * A family gives the adapter its files (struct nf_set, filled by its
 * open): how many, a display name each (a path, or later a redacted URL),
 * the extent table that joins them into one logical space (io/extent.h:
 * PIECES views are spans of that space), a local path each for the watch
 * of changed files, and the ops below, through which the adapter reaches
 * the files: acquire/release around every read (fs/engine_uring.c),
 * status/verify for files.json, stats and the watch (fs/files_doc.c,
 * fs/stats.c, fs/watch.c), and the change hook that lets the watch drop
 * the kernel's pages of a file that changed (contract §5).
 *
 * The ops are called from any worker thread at once: they must be
 * thread-safe (the NInfer reader's files interface is).  Everything in
 * struct nf_set is immutable once the family's open returned.
 *
 * set.c keeps the adapter's side: per-file counters, and the accounting
 * and logging of every segment read (nf_set_account). */
#ifndef NF_FS_SET_H
#define NF_FS_SET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "io/extent.h"
#include "io/io.h"

struct nf_remote;

enum nf_fstatus {
	NF_FSTATUS_UNCHECKED = 0,   /* never opened */
	NF_FSTATUS_PRESENT,
	NF_FSTATUS_MISSING,
	NF_FSTATUS_BAD,             /* bad from the start, or changed while mounted */
};

/* The family's open-file cache (NInfer: the reader's bounded cache of part
 * descriptors, issue 11); "descriptors" in the stats document. */
struct nf_set_stats {
	uint32_t open, open_max;       /* descriptors open now; how many may stay open */
	uint64_t evictions, reopens;   /* closed to make room; opened again */
	uint64_t changes;              /* files found changed: files.json is rebuilt
					  when it moves */
	uint64_t activity;             /* moves when a file's counters in files.json
					  move (remote: requests, cache hits); 0 */
};

struct nf_set_ops {
	/* An fd for file i, valid until the matching release (owned by the
	 * family: never closed by the adapter), or -errno: -ENOENT missing,
	 * -EIO bad or changed (it is compared with what was first opened),
	 * -EMFILE/-ENFILE no descriptor now (a limit of this run). */
	int (*acquire)(void *arg, uint32_t i);
	void (*release)(void *arg, uint32_t i);
	/* Its status now; *reason (may be NULL) says why when bad or missing,
	 * valid while the set is open. */
	enum nf_fstatus (*status)(void *arg, uint32_t i, const char **reason);
	/* Compare file i with what was first opened now (a change marks it
	 * bad and calls the hook); 0 or what acquire returned. */
	int (*verify)(void *arg, uint32_t i);
	/* hook(hook_arg, i) once per file that becomes bad because it changed,
	 * from the thread that noticed, no lock held; NULL: none. */
	void (*set_change_hook)(void *arg, void (*hook)(void *hook_arg, uint32_t i),
				void *hook_arg);
	void (*stats)(void *arg, struct nf_set_stats *out);
	/* files.json as the files are now: malloc'd, NUL-terminated; NULL on
	 * ENOMEM. */
	char *(*files_json)(void *arg);
};

struct nf_set {
	uint32_t n;
	struct nf_extents extents;     /* the logical space PIECES views span */
	const char *const *names;      /* n display names: stats, logs */
	const char *const *paths;      /* n local paths for the watch (relative to the
					  working directory at mount), NULL entries for
					  files that are not local; or NULL */
	uint64_t bytes;                /* the files' lengths summed (statfs) */
	struct nf_remote *remote;      /* files that are URLs (remote/remote.h): read
					  by the remote engine; NULL: local files */
	const struct nf_set_ops *ops;
	void *arg;                     /* the ops' first argument */
};

/* The adapter's flags of one file (its read counters are per thread:
 * fs/counters.c). */
struct nf_file_counters {
	atomic_bool logged;      /* the first error on this file was logged */
	atomic_bool changed;     /* found changed while mounted (watch.c) */
	atomic_bool inval_due;   /* ... and the kernel's pages of the views on it
				    are still to be dropped */
};

struct nf_fs;
/* The counters of fs->set (0 or -ENOMEM); freed by nf_set_free. */
int nf_set_init(struct nf_fs *fs);
void nf_set_free(struct nf_fs *fs);
/* Count ios [0, n) done by an engine, each on its file, in the counts of
 * the thread that read them (fs/counters.c); the first error on a file is
 * logged, later ones not.  An io whose result is -ECANCELED was not issued
 * (an earlier failure stopped the read) and is not counted. */
struct nf_counts;
void nf_set_account(struct nf_fs *fs, struct nf_counts *c, const struct nf_io *ios, size_t n);
/* "present", "missing", "bad", "unchecked". */
const char *nf_fstatus_name(enum nf_fstatus s);

#endif
