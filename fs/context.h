/* fs/context.h — all state of one ninferfs daemon, in one struct.
 *
 * Everything but the counters and the per-thread rings is immutable once
 * the session loop runs: the tree, the artifact model, the documents. */
#ifndef NF_FS_CONTEXT_H
#define NF_FS_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "codecs/codec.h"
#include "fs/safetensors.h"
#include "fs/tree.h"
#include "iouring/engine.h"
#include "reader/artifact.h"
#include "report/report.h"

/* Exit statuses of ninferfs (man ninferfs.1, EXIT STATUS). */
enum {
	NF_EXIT_OK = 0,
	NF_EXIT_DIRECTORY = 4,   /* directory errors: mount refused */
	NF_EXIT_ENTRY = 8,       /* the entry could not be read */
	NF_EXIT_USAGE = 16,
	NF_EXIT_MOUNT = 32,      /* FUSE session or mount failed */
};

#define NF_DEFAULT_URING_DEPTH 64
#define NF_DEFAULT_THREADS 16
#define NF_TIMEOUT 86400.0      /* the tree never changes */
#define NF_READ_AHEAD_KB 16384

struct nf_options {
	char *entry;
	char *mountpoint;
	char *decoded_dtype;
	enum nf_dtype dtype;
	char *max_json;          /* -o max_json=BYTES (issue 11) */
	uint64_t max_json_bytes;
	int lenient;
	unsigned uring_depth;
	unsigned threads;
	unsigned uid, gid, umask;
	int has_uid, has_gid, has_umask;
	int show_help, show_version;
	int has_fsname, has_subtype;
	int mount_helper;        /* invoked as mount.fuse.ninferfs */
	int fake;                /* mount(8) -f */
};

struct nf_file_counters {
	atomic_uint_fast64_t reads, bytes, errors;
	atomic_bool logged;      /* the first error on this file was logged */
	atomic_bool changed;     /* found changed while mounted (watch.c) */
	atomic_bool inval_due;   /* ... and the kernel's pages of the views on it
				    are still to be dropped */
};

/* A file a read holds (nf_file_acquire) until its ios are done. */
struct nf_held {
	uint32_t file;
	int fd;
};

/* Per-thread read state (pthread key), created on the first read. */
struct nf_thread {
	struct nf_ring *ring;
	char *buf;
	size_t bufcap;
	struct nf_segment *segs;
	size_t segcap;
	struct nf_io *ios;
	uint32_t *io_piece;      /* which request each io belongs to (unused: 0) */
	size_t iocap;
	struct nf_held *held;    /* the files the current read holds */
	size_t nheld, heldcap;
	struct nf_ring_stats last;
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
	struct nf_options opt;
	struct nf_artifact *a;
	struct nf_report report;
	char *validation_json;
	uint64_t uses_bytes;            /* uses.json, when a->uses_json is NULL */
	struct nf_tree tree;
	struct nf_safetensors st;       /* decoded/model.safetensors */
	bool has_st;
	/* Descriptors (issue 11).  When every part fits the reader's open-file
	 * cache, all files are acquired at mount and held until unmount, and
	 * the rings register them once (fixed files: fds[i], or -1 when missing
	 * or bad).  Otherwise fds[] is all -1 and the rings are plain: each read
	 * acquires the files it needs and sets their slots for its own I/O. */
	int *fds;
	bool fixed_files;
	struct nf_watch *watch;         /* changed files: inotify and page-cache drops */
	struct nf_files_docs *files_docs; /* files.json, rebuilt when a status changes */
	atomic_bool limit_logged;       /* a descriptor limit hit by a read was logged */
	atomic_uint nchanged;           /* files found changed while mounted */
	struct nf_file_counters *files;
	struct timespec mtime;          /* the entry's mtime: every node's times */
	uint64_t set_bytes;             /* sum of the files' lengths (statfs) */
	uid_t uid;
	gid_t gid;
	mode_t umask;
	bool foreground;
	bool no_opendir;                /* set at INIT: opendir answers ENOSYS */
	pthread_key_t thread_key;
	bool key_made;
	atomic_uint_fast64_t reads, bytes, errors, submissions, sqes, short_reads;
	/* the open state of generated files (fs/handles.c) */
	pthread_mutex_t uses_lock, snap_lock;
	bool handles_made;
	char *uses_doc;                 /* uses.json, shared while uses_refs > 0 */
	size_t uses_refs;
	struct nf_snap *snaps;          /* stats snapshots not yet released */
	size_t snap_bytes;
};

/* log.c: stderr in the foreground, syslog once daemonized. */
void nf_log(const struct nf_fs *fs, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* readpath.c */
struct nf_thread *nf_thread_get(struct nf_fs *fs);
void nf_thread_free(void *th);
/* Fill out[0, len) with file bytes [off, off+len) of a PIECES view.
 * Returns 0 or -EIO (the failing files are logged once each). */
int nf_read_pieces(struct nf_fs *fs, struct nf_thread *th, const struct nf_view *v, uint64_t off,
		   size_t len, char *out);

/* The fetcher of fs/decoded.h for this thread: object-relative spans ->
 * range map -> ring.  `arg` is a struct nf_fetch_arg. */
struct nf_fetch_arg {
	struct nf_fs *fs;
	struct nf_thread *th;
};
int nf_fetch_spans(void *arg, uint32_t object, const struct nf_span *spans, unsigned n,
		   uint8_t *const *bufs);
/* Reads of DECODED and SAFETENSORS views; 0 or -errno. */
int nf_read_decoded(struct nf_fs *fs, struct nf_thread *th, const struct nf_view *v, uint64_t off,
		    size_t len, char *out);
/* ENTRY views: entry file bytes [file_offset + off, + len).  0 or -EIO. */
int nf_read_entry_bytes(struct nf_fs *fs, struct nf_thread *th, const struct nf_view *v,
			uint64_t off, size_t len, char *out);
int nf_read_safetensors(struct nf_fs *fs, struct nf_thread *th, uint64_t off, size_t len,
			char *out);

/* stats.c: the stats document, malloc'd. */
char *nf_stats_json(struct nf_fs *fs);

/* handles.c: uses.json, one copy shared by every open (made at the first,
 * freed at the last release; `size` is its size counted at mount), and
 * stats snapshots, one per open; nf_handles_free() frees what the kernel
 * never released (a session ended by a signal).  0 or -errno. */
int nf_handles_init(struct nf_fs *fs);
int nf_uses_acquire(struct nf_fs *fs, uint64_t size, const char **doc);
void nf_uses_release(struct nf_fs *fs);
int nf_snap_open(struct nf_fs *fs, struct nf_snap **out);
void nf_snap_close(struct nf_fs *fs, struct nf_snap *s);
void nf_handles_free(struct nf_fs *fs);
/* watch.c: files of the set that change while mounted (contract §5, issue
 * 11).  The reader marks a changed file bad when a read (or files.json)
 * notices; an inotify watch on the entry's directory makes it notice
 * without a read.  Then the kernel's cached pages of every view on that
 * file are dropped (fuse_lowlevel_notify_inval_inode), from a thread of
 * its own, so that a reader does not keep the old bytes.  nf_watch_init
 * before the fork (it resolves the entry's directory), nf_watch_start after
 * it and the mount (the thread), nf_watch_stop before the session goes and
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

/* xattr.c */
struct fuse_req;
int nf_xattr_get(struct nf_fs *fs, uint32_t node, const char *name, char **value, size_t *len);
int nf_xattr_list(struct nf_fs *fs, uint32_t node, char **list, size_t *len);

/* ops.c */
struct fuse_lowlevel_ops;
const struct fuse_lowlevel_ops *nf_ops(void);

#endif
