/* iouring/engine.h — the read engine: fetch lists of (file, offset, length,
 * buffer) segments with io_uring.
 *
 * One ring per thread (the caller keeps it; the engine holds no global
 * state).  Files are registered once; a read submits all its segments
 * together, resubmits short reads for the rest, and reports a result per
 * segment.  Depends on nothing else of ours. */
#ifndef NF_IOURING_ENGINE_H
#define NF_IOURING_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "io/io.h"   /* struct nf_io: file is an index into nf_ring_new's fds */

struct nf_ring;

/* Create a ring of `depth` entries and register `nfds` files (an fd of -1
 * is a hole: reads of it fail with -EBADF). */
int nf_ring_new(struct nf_ring **out, unsigned depth, const int *fds, unsigned nfds);
/* A ring for `nfds` files that are not registered: every slot starts as a
 * hole, and the caller puts a descriptor in a slot (nf_ring_set_fd) for as
 * long as it guarantees the descriptor stays open — for files a bounded
 * open-file cache may close between reads. */
int nf_ring_new_plain(struct nf_ring **out, unsigned depth, unsigned nfds);
/* Slot i now reads through `fd` (-1: a hole).  A registered ring updates
 * the kernel's table (io_uring_register_files_update, one system call);
 * a plain one only its own.  0 or -errno. */
int nf_ring_set_fd(struct nf_ring *r, unsigned i, int fd);
void nf_ring_free(struct nf_ring *r);

/* Read every segment fully.  Returns 0 when all succeeded, else the first
 * failing segment's -errno (every segment's own result is filled in). */
int nf_ring_read(struct nf_ring *r, struct nf_io *ios, size_t n);

/* Counters, for the stats file. */
struct nf_ring_stats {
	uint64_t submissions;  /* io_uring_submit calls */
	uint64_t sqes;         /* reads queued, short-read resubmissions included */
	uint64_t bytes;
	uint64_t short_reads;
	uint64_t errors;
};
void nf_ring_stats(const struct nf_ring *r, struct nf_ring_stats *out);

#endif
