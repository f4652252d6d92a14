/* fs/context.h — all state of one ninferfs daemon, in one struct.
 *
 * Everything but the counters, the per-thread engine state and the open
 * state of generated files is immutable once the session loop runs: the
 * tree, the family's model, the documents.  The family's own state is
 * behind `fam` (fs/family.h); nothing here knows what it is. */
#ifndef NF_FS_CONTEXT_H
#define NF_FS_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "fs/engine.h"
#include "fs/family.h"
#include "fs/initx.h"
#include "fs/set.h"
#include "fs/tree.h"
#include "io/extent.h"
#include "remote/remote.h"

#define NF_DEFAULT_URING_DEPTH 64
#define NF_DEFAULT_THREADS 16
#define NF_TIMEOUT 86400.0      /* the tree never changes */
#define NF_READ_AHEAD_KB 16384
#define NF_FAMILIES_MAX 4       /* main.c's table */

struct nf_options {
	char *source;
	char *format;            /* -o format=NAME: the family, else detected */
	int lenient;
	int direct_io;           /* -o direct_io: every open FOPEN_DIRECT_IO */
	unsigned uring_depth;
	unsigned threads;
	unsigned uid, gid, umask;
	int has_uid, has_gid, has_umask;
	int show_help, show_version;
	int has_fsname, has_subtype;
	int mount_helper;        /* invoked as mount.fuse.ninferfs */
	int fake;                /* mount(8) -f */
};

/* A counter written by one thread only and read by the stats at any time
 * (fs/counters.c): relaxed atomics, so no locked instruction. */
typedef _Atomic uint64_t nf_counter;
static inline void nf_count(nf_counter *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* Request sizes in the stats ("read_sizes"): <= 4 KiB, <= 8 KiB, ...,
 * <= 1 MiB, more. */
#define NF_SIZE_BUCKETS 10
unsigned nf_size_bucket(size_t size);

/* One file's counters as one thread counted them. */
struct nf_fcount {
	nf_counter reads, bytes, errors;
};

/* One thread's counters (fs/counters.c): FUSE reads, reply bytes, failed
 * reads, the engine's running totals, the request sizes, and per file the
 * segments read, their bytes and failures. */
struct nf_counts {
	nf_counter reads, bytes, errors;
	nf_counter engine[NF_ENGINE_STATS_MAX];
	nf_counter sizes[NF_SIZE_BUCKETS];
	struct nf_fcount *files;
};

/* Per-thread read state (pthread key), created on the first read; every
 * thread's is allocated apart (aligned to its own cache lines). */
#define NF_REPLY_REFS 32   /* read_ref refs one reply takes (readpath.c) */
struct nf_thread {
	struct nf_fs *fs;
	const struct nf_engine *engine;
	void *eng;               /* the engine's state of this thread */
	/* The work area (readpath.c): the reply at its start, then the
	 * request's scratch (nf_rd_scratch), in huge pages; `used` bytes of
	 * it taken by this request, `total` asked in all (scratch that did not
	 * fit went to `side` blocks, freed at the next request), `high` the
	 * most one request asked: the area grows to it. */
	char *work;
	size_t workcap, used, total, high;
	struct nf_side *side;
	struct nf_segment *segs;
	size_t segcap;
	struct nf_io *ios;
	size_t iocap;
	/* bytes of this request's reply the engine left in its own memory
	 * (read_ref, readpath.c), and the reply's pieces made from them */
	struct nf_engine_ref refs[NF_REPLY_REFS];
	size_t nrefs;
	bool held;               /* read_ref called: release before the next read */
	struct iovec iov[2 * NF_REPLY_REFS + 1];
	struct nf_counts c;
	struct nf_thread *prev, *next;   /* fs->threads */
	bool joined;
};

/* A stats snapshot: one per open, listed (fs/handles.c). */
struct nf_snap {
	struct nf_snap *prev, *next;
	size_t len;
	char text[];
};
/* All stats snapshots held at once (fs/handles.c): an open beyond fails
 * with EMFILE (man ninferfs.5, stats). */
#define NF_SNAP_BYTES_MAX (64u << 20)

struct nf_fs {
	struct nf_options opt;   /* first: fuse_opt's offsets are into it (main.c) */
	char *shown;             /* the source fit to print (a URL redacted) */
	char **shown_argv;       /* argv fit to print, for validation.json */
	/* a URL source (http://, https://, s3://): the remote engine's -o
	 * options (their values point into remote_kv, copies of the items) */
	bool remote;
	struct nf_remote_opts remote_opts;
	char **remote_kv;
	size_t nremote_kv;
	char *remote_first;      /* the first remote option given, for messages */
	/* the family: its options blocks (one per family of main.c's table,
	 * filled while parsing; the first option each took, to refuse one of
	 * a family that is not mounted), the chosen one and its state */
	void *fam_opts[NF_FAMILIES_MAX];
	char *fam_opt_first[NF_FAMILIES_MAX];
	const struct nf_family *family;
	void *fam;
	size_t fam_errors, fam_warnings;   /* the report summary */
	struct nf_set set;              /* the backing files */
	struct nf_engine engine;
	struct nf_tree tree;
	struct nf_watch *watch;         /* changed files: inotify and page-cache drops */
	struct nf_files_docs *files_docs; /* files.json, rebuilt when a status changes */
	atomic_bool limit_logged;       /* a descriptor limit hit by a read was logged */
	atomic_uint nchanged;           /* files found changed while mounted */
	struct nf_file_counters *files;
	struct timespec mtime;          /* the source's mtime: every node's times */
	uid_t uid;
	gid_t gid;
	mode_t umask;
	bool foreground;
	bool no_opendir;                /* set at INIT: opendir answers ENOSYS */
	struct nf_initx initx;          /* -o direct_io: the INIT reply patch */
	pthread_key_t thread_key;
	bool key_made;
	/* the worker threads' counters (fs/counters.c): the live threads,
	 * and what the ended ones counted */
	pthread_mutex_t threads_lock;
	struct nf_thread *threads;
	struct nf_counts gone;
	bool counters_made;
	/* stats snapshots not yet released (fs/handles.c) */
	pthread_mutex_t snap_lock;
	bool handles_made;
	struct nf_snap *snaps;
	size_t snap_bytes;
};

/* readpath.c */
struct nf_thread *nf_thread_get(struct nf_fs *fs);
void nf_thread_free(void *th);
/* The reply buffer of a request of `len` bytes, at the start of the
 * thread's work area, which this resets for the request (the scratch of
 * the previous one is given back); NULL on ENOMEM. */
char *nf_thread_reply(struct nf_thread *th, size_t len);
/* Tells the engine's stream of an open view (engine.h stream_path) the
 * file ranges the view's bytes lie in: a PIECES view's, or those of the
 * spans its family names (family.h view_spans), all of them (the remote
 * engine keeps them for the open's life: remote.h).  Other views and
 * engines: nothing. */
void nf_read_path(struct nf_fs *fs, void *stream, uint32_t node, const struct nf_view *v);
/* Fill out[0, len) with bytes [off, off+len) of a PIECES view (off + len
 * <= its size), with the open file's engine stream (or NULL).  Returns 0
 * or -EIO (the failing files are logged once each). */
int nf_read_pieces(struct nf_fs *fs, struct nf_thread *th, void *stream, const struct nf_view *v,
		   uint64_t off, size_t len, char *out);
/* FILE views: file bytes [file_offset + off, + len).  0 or -EIO. */
int nf_read_file(struct nf_fs *fs, struct nf_thread *th, void *stream, const struct nf_view *v,
		 uint64_t off, size_t len, char *out);
/* After nf_read_pieces or nf_read_file filled `out` (the reply buffer):
 * the reply as *iov[0, count), when the engine left bytes of it in its
 * own memory (read_ref), or 0: send out[0, len) as it is.  Either way
 * nf_read_release once the reply is sent. */
size_t nf_read_reply(struct nf_thread *th, char *out, size_t len, const struct iovec **iov);
void nf_read_release(struct nf_thread *th);

/* counters.c: init before the first worker thread, free after the last;
 * join when a thread's state is made, leave when it goes (its counts are
 * kept); sum fills *out (out->files malloc'd: free it) with every count
 * so far.  0 or -ENOMEM. */
int nf_counters_init(struct nf_fs *fs);
void nf_counters_free(struct nf_fs *fs);
int nf_counters_join(struct nf_fs *fs, struct nf_thread *th);
void nf_counters_leave(struct nf_fs *fs, struct nf_thread *th);
int nf_counters_sum(struct nf_fs *fs, struct nf_counts *out);

/* stats.c: the stats document, malloc'd. */
char *nf_stats_json(struct nf_fs *fs);

/* handles.c: stats snapshots, one per open; nf_handles_free() frees what
 * the kernel never released (a session ended by a signal).  0 or
 * -errno. */
int nf_handles_init(struct nf_fs *fs);
int nf_snap_open(struct nf_fs *fs, struct nf_snap **out);
void nf_snap_close(struct nf_fs *fs, struct nf_snap *s);
void nf_handles_free(struct nf_fs *fs);
/* watch.c: files of the set that change while mounted (contract §5, issue
 * 11).  The family marks a changed file bad when a read (or files.json)
 * notices; inotify watches on the files' directories make it notice
 * without a read.  Then the kernel's cached pages of every view on that
 * file are dropped (fuse_lowlevel_notify_inval_inode), from a thread of
 * its own, so that a reader does not keep the old bytes.  nf_watch_init
 * before the fork (it resolves the directories), nf_watch_start after it
 * and the mount (the thread), nf_watch_stop before the session goes and
 * at exit (also when never started). */
struct fuse_session;
int nf_watch_init(struct nf_fs *fs);
int nf_watch_start(struct nf_fs *fs, struct fuse_session *se);
void nf_watch_stop(struct nf_fs *fs);
/* Does file node `idx` show bytes of a file that changed?  (op_open then
 * drops the inode's cached pages.) */
bool nf_node_touches_changed(struct nf_fs *fs, uint32_t idx);

/* files_doc.c: files.json, one shared copy per state of the files (not
 * one per open: issue 11 item 4's rule), rebuilt when a file's status
 * changed; every open first compares the files with their fingerprints.
 * nf_files_doc_open returns a reference (the text and its length), which
 * nf_files_doc_close drops; NULL on OOM. */
struct nf_files_doc;
int nf_files_doc_init(struct nf_fs *fs);
struct nf_files_doc *nf_files_doc_open(struct nf_fs *fs, const char **text, size_t *len);
void nf_files_doc_close(struct nf_fs *fs, struct nf_files_doc *d);
/* The text of an open reference (d may be NULL: ""). */
const char *nf_files_doc_text(const struct nf_files_doc *d, size_t *len);
void nf_files_doc_free_all(struct nf_fs *fs);

/* ops.c */
struct fuse_lowlevel_ops;
const struct fuse_lowlevel_ops *nf_ops(void);

#endif
