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
	struct nf_ring_stats last;
};

struct nf_fs {
	struct nf_options opt;
	struct nf_artifact *a;
	struct nf_report report;
	char *validation_json;
	char *files_json;
	uint64_t uses_bytes;            /* uses.json, when a->uses_json is NULL */
	struct nf_tree tree;
	struct nf_safetensors st;       /* decoded/model.safetensors */
	bool has_st;
	int *fds;                       /* per file: fd or -1 (missing/bad) */
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

/* xattr.c */
struct fuse_req;
int nf_xattr_get(struct nf_fs *fs, uint32_t node, const char *name, char **value, size_t *len);
int nf_xattr_list(struct nf_fs *fs, uint32_t node, char **list, size_t *len);

/* ops.c */
struct fuse_lowlevel_ops;
const struct fuse_lowlevel_ops *nf_ops(void);

#endif
