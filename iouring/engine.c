/* iouring/engine.c — the read engine of engine.h.
 *
 * A ring belongs to one thread.  nf_ring_read() keeps every segment it can
 * in flight at once (at most `depth`), resubmits the rest of a short read,
 * turns EOF inside a segment into -EIO and records a result per segment.
 * Files are registered with the ring (fixed files; -1 slots are holes that
 * are never submitted).  When the kernel refuses the registration the ring
 * reads through the plain fds; when a submission fails hard the ring falls
 * back to pread(2) for good, so a read never hangs on a broken ring. */
#include "iouring/engine.h"

#include <errno.h>
#include <liburing.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One SQE reads at most this much; a longer segment is read in turns. */
#define NF_MAX_SQE_BYTES (1u << 30)

struct nf_ring {
	struct io_uring ring;
	unsigned depth;
	unsigned nfds;
	int *fds;          /* copy of the caller's fds (holes are -1) */
	bool registered;   /* fixed files in use */
	bool broken;       /* submission failed hard: use pread from now on */
	/* scratch for one nf_ring_read call, grown on demand */
	uint64_t *done;
	uint32_t *ready;
	size_t scratch_cap;
	struct nf_ring_stats st;
};

static int ring_init(struct nf_ring *r, unsigned depth)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof p);
	/* One thread submits and reaps: let the kernel run completions then. */
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	if (io_uring_queue_init_params(depth, &r->ring, &p) == 0)
		return 0;
	memset(&p, 0, sizeof p);
	return io_uring_queue_init_params(depth, &r->ring, &p);
}

int nf_ring_new(struct nf_ring **out, unsigned depth, const int *fds, unsigned nfds)
{
	struct nf_ring *r;
	int rc;

	*out = NULL;
	if (depth == 0 || depth > 4096 || (nfds > 0 && fds == NULL))
		return -EINVAL;
	r = calloc(1, sizeof *r);
	if (r == NULL)
		return -ENOMEM;
	r->fds = calloc(nfds ? nfds : 1, sizeof *r->fds);
	if (r->fds == NULL) {
		free(r);
		return -ENOMEM;
	}
	if (nfds)
		memcpy(r->fds, fds, nfds * sizeof *fds);
	r->nfds = nfds;
	r->depth = depth;
	rc = ring_init(r, depth);
	if (rc < 0) {
		free(r->fds);
		free(r);
		return rc;
	}
	/* -1 entries are sparse slots (kernel >= 5.5). */
	r->registered = nfds > 0 && io_uring_register_files(&r->ring, r->fds, nfds) == 0;
	*out = r;
	return 0;
}

int nf_ring_new_plain(struct nf_ring **out, unsigned depth, unsigned nfds)
{
	int *holes = calloc(nfds ? nfds : 1, sizeof *holes);
	int rc;

	*out = NULL;
	if (holes == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < nfds; i++)
		holes[i] = -1;
	rc = nf_ring_new(out, depth, holes, 0);   /* nfds 0: nothing registered */
	if (rc == 0) {
		free((*out)->fds);
		(*out)->fds = holes;
		(*out)->nfds = nfds;
		holes = NULL;
	}
	free(holes);
	return rc;
}

int nf_ring_set_fd(struct nf_ring *r, unsigned i, int fd)
{
	if (r == NULL || i >= r->nfds)
		return -EINVAL;
	if (r->registered && r->fds[i] != fd) {
		int rc = io_uring_register_files_update(&r->ring, i, &fd, 1);
		if (rc < 0)
			return rc;
	}
	r->fds[i] = fd;
	return 0;
}

void nf_ring_free(struct nf_ring *r)
{
	if (r == NULL)
		return;
	io_uring_queue_exit(&r->ring);
	free(r->done);
	free(r->ready);
	free(r->fds);
	free(r);
}

void nf_ring_stats(const struct nf_ring *r, struct nf_ring_stats *out)
{
	*out = r->st;
}

static int grow_scratch(struct nf_ring *r, size_t n)
{
	uint64_t *d;
	uint32_t *q;
	size_t cap = r->scratch_cap ? r->scratch_cap : 16;

	if (n <= r->scratch_cap)
		return 0;
	if (n > UINT32_MAX)
		return -EINVAL;
	while (cap < n)
		cap *= 2;
	d = realloc(r->done, cap * sizeof *d);
	if (d == NULL)
		return -ENOMEM;
	r->done = d;
	q = realloc(r->ready, cap * sizeof *q);
	if (q == NULL)
		return -ENOMEM;
	r->ready = q;
	r->scratch_cap = cap;
	return 0;
}

/* Checks a segment before any I/O; returns its final result when it needs
 * no read (0 for an empty one, -errno for a bad one), or 1. */
static int seg_precheck(const struct nf_ring *r, const struct nf_io *io)
{
	uint64_t end;

	if (io->file >= r->nfds || r->fds[io->file] < 0)
		return -EBADF;
	if (io->length == 0)
		return 0;
	if (io->dst == NULL || __builtin_add_overflow(io->offset, io->length, &end) ||
	    end > (uint64_t)INT64_MAX)
		return -EINVAL;
	return 1;
}

/* Synchronous path: pread until done; EOF inside the span is -EIO. */
static void read_sync(struct nf_ring *r, struct nf_io *io, uint64_t done)
{
	while (done < io->length) {
		uint64_t want = io->length - done;
		ssize_t got;

		if (want > NF_MAX_SQE_BYTES)
			want = NF_MAX_SQE_BYTES;
		got = pread(r->fds[io->file], (char *)io->dst + done, want,
			    (off_t)(io->offset + done));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			io->result = got < 0 ? -errno : -EIO;
			r->st.errors++;
			return;
		}
		if ((uint64_t)got < want)
			r->st.short_reads++;
		r->st.bytes += (uint64_t)got;
		done += (uint64_t)got;
	}
	io->result = 0;
}

static void queue_one(struct nf_ring *r, struct io_uring_sqe *sqe, struct nf_io *io,
		      uint32_t idx, uint64_t done)
{
	uint64_t want = io->length - done;

	if (want > NF_MAX_SQE_BYTES)
		want = NF_MAX_SQE_BYTES;
	if (r->registered) {
		io_uring_prep_read(sqe, (int)io->file, (char *)io->dst + done, (unsigned)want,
				   io->offset + done);
		sqe->flags |= IOSQE_FIXED_FILE;
	} else {
		io_uring_prep_read(sqe, r->fds[io->file], (char *)io->dst + done, (unsigned)want,
				   io->offset + done);
	}
	io_uring_sqe_set_data64(sqe, idx);
	r->st.sqes++;
}

/* Handles one completion; returns true when the segment must be queued
 * again (short read or a retryable error). */
static bool complete_one(struct nf_ring *r, struct nf_io *io, uint64_t *done, int res)
{
	if (res == -EINTR || res == -EAGAIN)
		return true;
	if (res < 0) {
		io->result = res;
		r->st.errors++;
		return false;
	}
	if (res == 0) { /* EOF inside the span: the file is shorter than it must be */
		io->result = -EIO;
		r->st.errors++;
		return false;
	}
	r->st.bytes += (uint64_t)res;
	*done += (uint64_t)res;
	if (*done < io->length) {
		r->st.short_reads++;
		return true;
	}
	io->result = 0;
	return false;
}

/* Drains every completion available now; returns how many it reaped. */
static unsigned reap(struct nf_ring *r, struct nf_io *ios, size_t *nready)
{
	struct io_uring_cqe *cqe;
	unsigned head, count = 0;

	io_uring_for_each_cqe(&r->ring, head, cqe) {
		uint32_t idx = (uint32_t)io_uring_cqe_get_data64(cqe);

		if (complete_one(r, &ios[idx], &r->done[idx], cqe->res))
			r->ready[(*nready)++] = idx;
		count++;
	}
	io_uring_cq_advance(&r->ring, count);
	return count;
}

/* The ring failed: finish whatever is left synchronously. */
static void finish_sync(struct nf_ring *r, struct nf_io *ios, size_t nready)
{
	for (size_t i = 0; i < nready; i++)
		read_sync(r, &ios[r->ready[i]], r->done[r->ready[i]]);
}

static int run_ring(struct nf_ring *r, struct nf_io *ios, size_t nready)
{
	unsigned inflight = 0;

	while (nready > 0 || inflight > 0) {
		unsigned queued = 0;
		int rc;

		while (nready > 0 && inflight + queued < r->depth) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
			uint32_t idx;

			if (sqe == NULL)
				break;
			idx = r->ready[--nready];
			queue_one(r, sqe, &ios[idx], idx, r->done[idx]);
			queued++;
		}
		if (queued > 0)
			r->st.submissions++;
		do
			rc = io_uring_submit_and_wait(&r->ring, 1);
		while (rc == -EINTR);
		if (rc < 0 && rc != -EBUSY && rc != -EAGAIN) {
			/* Unrecoverable: the queued SQEs may or may not have
			 * gone; never use this ring again. */
			r->broken = true;
			return rc;
		}
		inflight += queued;
		inflight -= reap(r, ios, &nready);
	}
	return 0;
}

int nf_ring_read(struct nf_ring *r, struct nf_io *ios, size_t n)
{
	size_t nready = 0;
	int rc;

	rc = grow_scratch(r, n);
	if (rc < 0) {
		for (size_t i = 0; i < n; i++)
			ios[i].result = rc;
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		int pre = seg_precheck(r, &ios[i]);

		ios[i].result = pre > 0 ? -EINPROGRESS : pre;
		r->done[i] = 0;
		if (pre > 0)
			r->ready[nready++] = (uint32_t)i;
		else if (pre < 0)
			r->st.errors++;
	}
	if (r->broken)
		finish_sync(r, ios, nready);
	else if (run_ring(r, ios, nready) < 0) {
		/* Whatever is still unfinished is redone synchronously. */
		for (size_t i = 0; i < n; i++)
			if (ios[i].result == -EINPROGRESS)
				read_sync(r, &ios[i], 0);
	}
	for (size_t i = 0; i < n; i++)
		if (ios[i].result != 0)
			return ios[i].result;
	return 0;
}
