/* fs/family.h — what a family of artifacts gives the FUSE adapter, and
 * what the adapter gives a family (fs/README.md says how to plug one in).
 *
 * A family (NInfer sets in fs/ninfer/; calbin packages next, in fs/calbin/)
 * turns a mount's source into: a report summary, the backing files (a
 * struct nf_set of fs/set.h), and a tree of views (fs/tree.h) it builds
 * itself with the builder API.  The adapter (the files directly in fs/) serves that tree with
 * FUSE and reads its generic views (fs/view.h) through the extent map and
 * the engine; it includes no header of the family's library (test
 * fs-neutral), and the family includes no FUSE header.
 *
 * Lifetime: option, check and detect run while the command line is
 * parsed; open, then build, run once, before the mount, on the main thread;
 * the other ops run on any FUSE worker thread at once, and on the watch
 * thread (touches), until close, after the session and every worker are
 * gone.  The family state and the tree are immutable while the session
 * runs, except what the family guards itself (NInfer: the open state of
 * uses.json, the reader's files). */
#ifndef NF_FS_FAMILY_H
#define NF_FS_FAMILY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "fs/set.h"
#include "fs/tree.h"
#include "fs/view.h"

/* Exit statuses of ninferfs (man ninferfs.1, EXIT STATUS). */
enum {
	NF_EXIT_OK = 0,
	NF_EXIT_DIRECTORY = 4,   /* directory errors: mount refused */
	NF_EXIT_ENTRY = 8,       /* the source could not be read */
	NF_EXIT_USAGE = 16,
	NF_EXIT_MOUNT = 32,      /* FUSE session or mount failed */
};

struct nf_fs;
struct nf_remote_opts;

/* What the adapter tells a family's open. */
struct nf_mount {
	struct nf_fs *fs;        /* the daemon: for nf_log and nf_rd_* */
	const char *source;      /* as given on the command line */
	const char *shown;       /* the same fit to print (a URL redacted) */
	/* a URL source: the remote engine's options (-o endpoint=, cache=,
	 * ...), and the family opens it as a remote set; NULL: a local one */
	const struct nf_remote_opts *remote;
	bool lenient;            /* -o lenient */
	int argc;                /* the command line, for the report's "tool" record,
				    every URL in it redacted */
	char **argv;
};

/* What a family's open gives back. */
struct nf_opened {
	void *state;             /* the family's, passed to every op */
	size_t errors, warnings; /* the report's counts: "mounted with N errors" */
	struct nf_set set;       /* the backing files */
	struct timespec mtime;   /* every node's times */
};

struct nf_rd;

struct nf_family {
	const char *name;        /* -o format=NAME */
	const char *help;        /* its lines of ninferfs -h ("    -o key=V   ...\n") */
	size_t opts_size;        /* its options block, zeroed by the adapter */
	/* One -o option (an element of a comma list, "key=value" or "key"):
	 * 1 when it is the family's (kept in opts), 0 when not. */
	int (*option)(void *opts, const char *arg);
	void (*opts_free)(void *opts);   /* what option kept (not the block) */
	/* The options are complete: check values, fill defaults; 0, or -1
	 * after a message naming the option (exit 16). */
	int (*check)(void *opts, const char *prog);
	/* Whether `source` is of this family (no -o format=); NULL: the
	 * family is the fallback (the first of the table, main.c). */
	bool (*detect)(const char *source);
	/* Open and validate the source; print the findings (stderr).  Returns
	 * an exit status: NF_EXIT_OK with *out filled, or why not. */
	int (*open)(const struct nf_mount *m, void *opts, struct nf_opened *out);
	/* Build the tree (zeroed) with fs/tree.h's builder.  0; -EEXIST when
	 * two records would get one path (exit 4); -errno (exit 8); the
	 * family prints why. */
	int (*build)(void *state, struct nf_tree *t);
	/* Family view kinds (>= NF_VIEW_FAMILY): */
	/* An open of file node `node`: 1 when it is read with `read`; 0 when
	 * it is a document made now, *text its exact `size` bytes, served
	 * until release_doc; -errno to fail the open. */
	int (*open_doc)(void *state, uint32_t node, const struct nf_view *v, const char **text);
	void (*release_doc)(void *state, uint32_t node, const char *text);
	/* Bytes [off, off + len) of the view (clipped to its size by the
	 * adapter, len > 0) into out; payload through nf_rd_queue/nf_rd_run.
	 * 0 or -errno; a failure that belongs in the stats' "errors" is
	 * counted with nf_rd_failed. */
	int (*read)(void *state, struct nf_rd *rd, uint32_t node, const struct nf_view *v,
		    uint64_t off, size_t len, char *out);
	/* Whether the view shows bytes of file `file` (the watch drops the
	 * kernel's pages of such nodes when the file changes). */
	bool (*touches)(void *state, uint32_t node, const struct nf_view *v, uint32_t file);
	/* Optional (NULL: none).  The logical spans the reads of a view the
	 * family reads fetch, in the order a sequential reader of the view
	 * meets them (pieces' logical and length; out unused): the count
	 * returned (0: none to tell), only the first cap written (cap 0 and
	 * spans NULL: count them).  The engine's stream
	 * of an open of it then fetches ahead across them (engine.h
	 * stream_path). */
	size_t (*view_spans)(void *state, uint32_t node, const struct nf_view *v,
			     struct nf_piece *spans, size_t cap);
	/* Every node: the value of attribute `name` (a "user." name; -ENODATA
	 * when the node has none), malloc'd, at most NF_XATTR_VALUE_MAX
	 * (fs/attrs.h) bytes; and the list of names the node has ("a\0b\0"). */
	int (*xattr_get)(void *state, uint32_t node, const char *name, char **value, size_t *len);
	int (*xattr_list)(void *state, uint32_t node, char **list, size_t *len);
	/* Free the state: the files are let go (the engine released its holds
	 * first). */
	void (*close)(void *state);
};

/* The families this daemon mounts (main.c's table, the fallback first). */
extern const struct nf_family nf_family_ninfer;
extern const struct nf_family nf_family_calbin;

/* ---- what the adapter gives a family ---------------------------------- */

/* log.c: stderr in the foreground, syslog once daemonized. */
void nf_log(const struct nf_fs *fs, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One read request's fetches (readpath.c), given to the family's read:
 * queue logical spans (the extent map cuts them into segments into the
 * thread's list), then run them all in one engine read.  Not shared
 * between threads. */
struct nf_rd {
	struct nf_fs *fs;
	struct nf_thread *th;
	void *stream;            /* the open file's engine stream (the adapter's) */
	size_t nios;             /* segments queued */
};
/* Queue the logical span [logical, logical + length) to land in dst.
 * 0, -ERANGE (not inside the set's space) or -ENOMEM. */
int nf_rd_queue(struct nf_rd *rd, uint64_t logical, uint64_t length, void *dst);
/* Read everything queued (and empty the queue): 0 or -EIO (counted per
 * file, the first error on a file logged). */
int nf_rd_run(struct nf_rd *rd);
/* Count this request in the stats' "errors". */
void nf_rd_failed(struct nf_rd *rd);
/* `n` bytes of scratch memory for this request (source bytes to decode,
 * a plan), 64-byte aligned, valid and never moved until the family's read
 * returns; NULL on ENOMEM.  From the thread's work area: once it has grown
 * to what a request needs, no allocation happens on a read (issue 15). */
void *nf_rd_scratch(struct nf_rd *rd, size_t n);

#endif
