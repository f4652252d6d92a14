/* fs/engine_uring.c — the io_uring engine behind fs/engine.h, over the
 * set's descriptors (iouring/engine.h does the ring).
 *
 * Every file a read needs is acquired from the family first (issue 11):
 * that checks it is still the file first opened (contract §5: a part
 * changed or removed fails the reads that need it) and, when the set has
 * more files than the family's open-file cache holds, keeps its descriptor
 * open until the read is done.  When the cache holds every file, all are
 * acquired at mount and held until unmount, so their descriptors never
 * change and each ring registers them once (fixed files); otherwise the
 * rings are plain and each read puts the descriptors it holds in its
 * ring's slots for its own I/O.  When every descriptor the process may
 * have is held (EMFILE with files of this read held), the segments queued
 * so far are read first and their files let go.  Without io_uring (the
 * kernel refuses a ring) a thread reads with pread, by the same rules. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "fs/context.h"
#include "iouring/engine.h"

struct uring {
	struct nf_fs *fs;
	const struct nf_set *set;
	unsigned depth;
	bool fixed;
	int *fds;                /* fixed: the held descriptors (-1: missing or bad) */
};

/* A file a read holds until its ios are done. */
struct held {
	uint32_t file;
	int fd;
};

struct uring_thread {
	struct uring *e;
	struct nf_ring *ring;    /* NULL: pread */
	struct held *held;       /* the files the current read holds */
	size_t nheld, heldcap;
};

static const char *const stat_names[] = {"uring_submissions", "uring_sqes", "short_reads"};

static int uring_thread_new(void *engine, void **out)
{
	struct uring *e = engine;
	struct uring_thread *th = calloc(1, sizeof *th);
	int rc;

	if (th == NULL)
		return -ENOMEM;
	th->e = e;
	rc = e->fixed ? nf_ring_new(&th->ring, e->depth, e->fds, e->set->n)
		      : nf_ring_new_plain(&th->ring, e->depth, e->set->n);
	if (rc < 0) {
		nf_log(e->fs, LOG_WARNING, "io_uring unavailable (%s): reading with pread",
		       strerror(-rc));
		th->ring = NULL;
	}
	*out = th;
	return 0;
}

static void uring_thread_free(void *p)
{
	struct uring_thread *th = p;

	if (th == NULL)
		return;
	nf_ring_free(th->ring);
	free(th->held);
	free(th);
}

/* The descriptor of a file this read holds, or -1. */
static int held_fd(const struct uring_thread *th, uint32_t f)
{
	for (size_t k = 0; k < th->nheld; k++)
		if (th->held[k].file == f)
			return th->held[k].fd;
	return -1;
}

/* Acquire file f for this read (once per read): its fd, or -errno. */
static int hold(struct uring_thread *th, uint32_t f)
{
	const struct nf_set *set = th->e->set;
	int fd = held_fd(th, f);

	if (fd >= 0)
		return fd;
	if (th->nheld == th->heldcap) {
		size_t cap = th->heldcap ? 2 * th->heldcap : 16;
		struct held *h = realloc(th->held, cap * sizeof *h);
		if (h == NULL)
			return -ENOMEM;
		th->held = h;
		th->heldcap = cap;
	}
	fd = set->ops->acquire(set->arg, f);
	if (fd < 0)
		return fd;
	if (!th->e->fixed && th->ring)
		nf_ring_set_fd(th->ring, f, fd);   /* a plain ring: no system call */
	th->held[th->nheld++] = (struct held){f, fd};
	return fd;
}

static void release_held(struct uring_thread *th)
{
	const struct nf_set *set = th->e->set;

	for (size_t k = 0; k < th->nheld; k++) {
		if (!th->e->fixed && th->ring)
			nf_ring_set_fd(th->ring, th->held[k].file, -1);
		set->ops->release(set->arg, th->held[k].file);
	}
	th->nheld = 0;
}

/* Without a ring (io_uring refused): plain pread, same rules. */
static int read_sync(struct uring_thread *th, struct nf_io *ios, size_t n)
{
	int first = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t done = 0;
		int fd = held_fd(th, ios[i].file);

		ios[i].result = fd < 0 ? -EBADF : 0;
		while (fd >= 0 && done < ios[i].length) {
			ssize_t got = pread(fd, (char *)ios[i].dst + done, ios[i].length - done,
					    (off_t)(ios[i].offset + done));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				ios[i].result = got < 0 ? -errno : -EIO;
				break;
			}
			done += (uint64_t)got;
		}
		if (ios[i].result && !first)
			first = ios[i].result;
	}
	return first;
}

/* Read ios [0, n) with their files held, then let the files go. */
static int batch(struct uring_thread *th, struct nf_io *ios, size_t n)
{
	int rc = n == 0 ? 0 : th->ring ? nf_ring_read(th->ring, ios, n) : read_sync(th, ios, n);

	release_held(th);
	return rc;
}

static void cancel(struct nf_io *ios, size_t from, size_t to)
{
	for (size_t k = from; k < to; k++)
		ios[k].result = -ECANCELED;
}

static int uring_read(void *p, void *stream, struct nf_io *ios, size_t n)
{
	struct uring_thread *th = p;
	size_t from = 0;

	(void)stream;   /* local files need no per-open state */
	for (size_t i = 0; i < n; i++) {
		int fd = hold(th, ios[i].file);

		if ((fd == -EMFILE || fd == -ENFILE) && th->nheld > 0) {
			int rc = batch(th, ios + from, i - from);
			if (rc < 0) {
				cancel(ios, i, n);
				return rc;
			}
			from = i;
			fd = hold(th, ios[i].file);
		}
		if (fd < 0) {
			cancel(ios, from, n);
			ios[i].result = fd;
			release_held(th);
			return fd;
		}
	}
	return batch(th, ios + from, n - from);
}

static void uring_stats(const void *p, uint64_t *out)
{
	const struct uring_thread *th = p;
	struct nf_ring_stats s = {0};

	if (th->ring)
		nf_ring_stats(th->ring, &s);
	out[0] = s.submissions;
	out[1] = s.sqes;
	out[2] = s.short_reads;
}

static void uring_close(void *engine)
{
	struct uring *e = engine;

	for (uint32_t i = 0; e->fixed && i < e->set->n; i++)
		if (e->fds[i] >= 0)
			e->set->ops->release(e->set->arg, i);
	free(e->fds);
	free(e);
}

static const struct nf_engine_ops uring_ops = {
	.name = "io_uring",
	.nstats = 3,
	.stat_names = stat_names,
	.thread_new = uring_thread_new,
	.thread_free = uring_thread_free,
	.read = uring_read,
	.stats = uring_stats,
	.close = uring_close,
};

int nf_engine_uring_open(struct nf_engine *out, struct nf_fs *fs)
{
	const struct nf_set *set = &fs->set;
	struct uring *e = calloc(1, sizeof *e);
	struct nf_set_stats st;

	if (e == NULL || (e->fds = calloc(set->n ? set->n : 1, sizeof *e->fds)) == NULL) {
		free(e);
		return -ENOMEM;
	}
	e->fs = fs;
	e->set = set;
	e->depth = fs->opt.uring_depth;
	/* fixed files when the family's open-file cache holds every file
	 * (the entry stays open besides) */
	set->ops->stats(set->arg, &st);
	e->fixed = set->n <= 1 || set->n - 1 <= st.open_max;
	for (uint32_t i = 0; i < set->n; i++) {
		int fd = e->fixed ? set->ops->acquire(set->arg, i) : -1;
		if (fd == -EMFILE || fd == -ENFILE)
			e->fixed = false;   /* let go of them all below */
		e->fds[i] = fd >= 0 ? fd : -1;
	}
	for (uint32_t i = 0; !e->fixed && i < set->n; i++) {
		if (e->fds[i] >= 0)
			set->ops->release(set->arg, i);
		e->fds[i] = -1;
	}
	*out = (struct nf_engine){.ops = &uring_ops, .state = e, .fixed_files = e->fixed};
	return 0;
}
