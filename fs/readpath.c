/* fs/readpath.c — view -> logical payload spans -> range map -> ring.
 *
 * A read of a PIECES view turns the requested file range into the pieces
 * it touches; zero pieces are filled in memory, payload pieces go through
 * nf_range_map() (the only code that knows how files join) and every
 * resulting segment is read by the thread's ring straight into the reply
 * buffer, all segments submitted together.
 *
 * Every file a read needs is acquired from the reader first (issue 11):
 * that checks it is still the file first opened (contract §5: a part
 * changed or removed fails the reads that need it) and, when the set has
 * more parts than the open-file cache holds, keeps its descriptor open
 * until the read is done. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/context.h"
#include "fs/ninfer/decoded.h"

struct nf_thread *nf_thread_get(struct nf_fs *fs)
{
	struct nf_thread *th = pthread_getspecific(fs->thread_key);
	int rc;

	if (th)
		return th;
	th = calloc(1, sizeof *th);
	if (th == NULL)
		return NULL;
	/* fixed files when every part stays open (fs->fds); otherwise each read
	 * sets the slots of the files it holds (see run_ios) */
	rc = fs->fixed_files ? nf_ring_new(&th->ring, fs->opt.uring_depth, fs->fds, fs->a->nfiles)
			     : nf_ring_new_plain(&th->ring, fs->opt.uring_depth, fs->a->nfiles);
	if (rc < 0) {
		nf_log(fs, LOG_WARNING, "io_uring unavailable (%s): reading with pread", strerror(-rc));
		th->ring = NULL;
	}
	if (pthread_setspecific(fs->thread_key, th) != 0) {
		nf_thread_free(th);
		return NULL;
	}
	return th;
}

void nf_thread_free(void *p)
{
	struct nf_thread *th = p;

	if (th == NULL)
		return;
	nf_ring_free(th->ring);
	free(th->buf);
	free(th->segs);
	free(th->ios);
	free(th->held);
	free(th);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 64;
	void *n;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		c *= 2;
	}
	n = realloc(*p, c * elem);
	if (n == NULL)
		return -ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

/* Last piece whose start is <= off. */
static uint32_t piece_at(const struct nf_piece *pc, uint32_t count, uint64_t off)
{
	uint32_t lo = 0, hi = count;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (pc[mid].out <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Map one payload span to ios appended at th->ios[*nios...]. */
static int queue_span(struct nf_fs *fs, struct nf_thread *th, uint64_t logical, uint64_t length,
		      char *dst, size_t *nios)
{
	ssize_t n = nf_range_map(fs->a, logical, length, th->segs, th->segcap);

	if (n > (ssize_t)th->segcap) {
		size_t cap = th->segcap;
		if (grow((void **)&th->segs, &cap, (size_t)n, sizeof *th->segs) < 0)
			return -ENOMEM;
		th->segcap = cap;
		n = nf_range_map(fs->a, logical, length, th->segs, th->segcap);
	}
	if (n < 0)
		return (int)n;
	if (grow((void **)&th->ios, &th->iocap, *nios + (size_t)n, sizeof *th->ios) < 0)
		return -ENOMEM;
	for (ssize_t i = 0; i < n; i++) {
		const struct nf_segment *s = &th->segs[i];
		th->ios[(*nios)++] = (struct nf_io){.file = s->file, .offset = s->file_offset,
						    .length = s->length, .dst = dst + s->dest_offset};
	}
	return 0;
}

/* The descriptor of a file this read holds, or -1. */
static int held_fd(const struct nf_thread *th, uint32_t f)
{
	for (size_t k = 0; k < th->nheld; k++)
		if (th->held[k].file == f)
			return th->held[k].fd;
	return -1;
}

/* Acquire file f for this read (once per read): its fd, or -errno. */
static int hold(struct nf_fs *fs, struct nf_thread *th, uint32_t f)
{
	int fd = held_fd(th, f);

	if (fd >= 0)
		return fd;
	if (grow((void **)&th->held, &th->heldcap, th->nheld + 1, sizeof *th->held) < 0)
		return -ENOMEM;
	fd = nf_file_acquire(fs->a, f);
	if (fd < 0)
		return fd;
	if (!fs->fixed_files && th->ring)
		nf_ring_set_fd(th->ring, f, fd);   /* a plain ring: no system call */
	th->held[th->nheld++] = (struct nf_held){f, fd};
	return fd;
}

static void release_held(struct nf_fs *fs, struct nf_thread *th)
{
	for (size_t k = 0; k < th->nheld; k++) {
		if (!fs->fixed_files && th->ring)
			nf_ring_set_fd(th->ring, th->held[k].file, -1);
		nf_file_release(fs->a, th->held[k].file);
	}
	th->nheld = 0;
}

/* Without a ring (io_uring refused): plain pread, same rules. */
static int read_sync(struct nf_thread *th, struct nf_io *ios, size_t n)
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

static void add_ring_stats(struct nf_fs *fs, struct nf_thread *th)
{
	struct nf_ring_stats now;

	if (th->ring == NULL)
		return;
	nf_ring_stats(th->ring, &now);
	atomic_fetch_add(&fs->submissions, now.submissions - th->last.submissions);
	atomic_fetch_add(&fs->sqes, now.sqes - th->last.sqes);
	atomic_fetch_add(&fs->short_reads, now.short_reads - th->last.short_reads);
	th->last = now;
}

/* Per-file counters; the first error on a file is logged, later ones not. */
static void account(struct nf_fs *fs, const struct nf_io *ios, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t f = ios[i].file;
		struct nf_file_counters *c;

		if (f >= fs->a->nfiles)
			continue;
		c = &fs->files[f];
		atomic_fetch_add(&c->reads, 1);
		if (ios[i].result == 0) {
			atomic_fetch_add(&c->bytes, ios[i].length);
			continue;
		}
		atomic_fetch_add(&c->errors, 1);
		const char *path = fs->a->files[f].path ? fs->a->files[f].path : fs->a->entry_name;
		if (ios[i].result == -EMFILE || ios[i].result == -ENFILE) {
			/* a limit of this run, not of the file: logged once a mount */
			if (!atomic_exchange(&fs->limit_logged, true))
				nf_log(fs, LOG_ERR, "cannot open %s (files[%u]) now: %s, every descriptor "
				       "is held by reads in flight; that read fails with EIO (raise "
				       "ulimit -n)", path, f, strerror(-ios[i].result));
			continue;
		}
		if (!atomic_exchange(&c->logged, true)) {
			const char *reason = NULL;
			if (nf_file_status(fs->a, f, &reason) == NF_FILE_BAD && reason)
				nf_log(fs, LOG_ERR, "cannot read files[%u]: %s; reads touching it fail "
				       "with EIO", f, reason);
			else
				nf_log(fs, LOG_ERR, "cannot read %s (files[%u]): %s; reads touching it "
				       "fail with EIO", path, f,
				       ios[i].result == -EBADF || ios[i].result == -ENOENT
					       ? "file missing or bad" : strerror(-ios[i].result));
		}
	}
}

/* Issue ios [from, to) with the files held, count and log them, and let
 * the files go.  0 or -EIO. */
static int run_batch(struct nf_fs *fs, struct nf_thread *th, size_t from, size_t to)
{
	struct nf_io *ios = th->ios + from;
	size_t n = to - from;
	int rc = n == 0 ? 0 : th->ring ? nf_ring_read(th->ring, ios, n) : read_sync(th, ios, n);

	add_ring_stats(fs, th);
	account(fs, ios, n);
	release_held(fs, th);
	return rc < 0 ? -EIO : 0;
}

/* Run the ios queued in th->ios: the one place reads are issued, counted
 * and logged.  Contract §5: a file truncated, overwritten, touched or
 * removed while mounted fails the reads that touch it: nf_file_acquire
 * compares it with the identity it had when first opened (a removal would
 * not show otherwise: the descriptor keeps the old inode alive).  When
 * every descriptor the process may have is held (EMFILE with files of this
 * read held), the ios queued so far are done first.  Returns 0 or -EIO. */
static int run_ios(struct nf_fs *fs, struct nf_thread *th, size_t nios)
{
	size_t from = 0;

	for (size_t i = 0; i < nios; i++) {
		int fd = hold(fs, th, th->ios[i].file);

		if ((fd == -EMFILE || fd == -ENFILE) && th->nheld > 0) {
			if (run_batch(fs, th, from, i) < 0)
				return -EIO;
			from = i;
			fd = hold(fs, th, th->ios[i].file);
		}
		if (fd < 0) {
			th->ios[i].result = fd;
			account(fs, &th->ios[i], 1);
			release_held(fs, th);
			return -EIO;
		}
	}
	return run_batch(fs, th, from, nios);
}

int nf_read_pieces(struct nf_fs *fs, struct nf_thread *th, const struct nf_view *v, uint64_t off,
		   size_t len, char *out)
{
	const struct nf_piece *pc = v->pieces + v->first;
	uint64_t end = off + len;   /* off + len <= v->size: checked by the caller */
	size_t nios = 0;
	int rc = 0;

	if (len == 0 || v->count == 0)
		return 0;
	for (uint32_t i = piece_at(pc, v->count, off); i < v->count && pc[i].out < end; i++) {
		uint64_t lo = off > pc[i].out ? off : pc[i].out;
		uint64_t hi = pc[i].out + pc[i].length < end ? pc[i].out + pc[i].length : end;

		if (hi <= lo)
			continue;
		if (pc[i].logical == NF_PIECE_ZERO)
			memset(out + (lo - off), 0, hi - lo);
		else if ((rc = queue_span(fs, th, pc[i].logical + (lo - pc[i].out), hi - lo,
					  out + (lo - off), &nios)) < 0)
			break;
	}
	if (rc == 0)
		rc = run_ios(fs, th, nios);
	if (rc < 0) {
		atomic_fetch_add(&fs->errors, 1);
		return -EIO;
	}
	return 0;
}

int nf_read_entry_bytes(struct nf_fs *fs, struct nf_thread *th, const struct nf_view *v,
			uint64_t off, size_t len, char *out)
{
	if (len == 0)
		return 0;
	if (grow((void **)&th->ios, &th->iocap, 1, sizeof *th->ios) < 0)
		return -ENOMEM;
	th->ios[0] = (struct nf_io){.file = 0, .offset = v->file_offset + off, .length = len,
				    .dst = out};
	if (run_ios(fs, th, 1) < 0) {
		atomic_fetch_add(&fs->errors, 1);
		return -EIO;
	}
	return 0;
}

int nf_fetch_spans(void *arg, uint32_t object, const struct nf_span *spans, unsigned n,
		   uint8_t *const *bufs)
{
	struct nf_fetch_arg *fa = arg;
	const struct nf_object *o;
	size_t nios = 0;
	int rc;

	if (object >= fa->fs->a->nobjects)
		return -EINVAL;
	o = &fa->fs->a->objects[object];
	for (unsigned i = 0; i < n; i++) {
		uint64_t lo;

		if (spans[i].offset > o->bytes || spans[i].length > o->bytes - spans[i].offset ||
		    __builtin_add_overflow(o->offset, spans[i].offset, &lo))
			return -EINVAL;
		rc = queue_span(fa->fs, fa->th, lo, spans[i].length, (char *)bufs[i], &nios);
		if (rc < 0)
			return rc;
	}
	return run_ios(fa->fs, fa->th, nios);
}

static int check_read(ssize_t got, size_t len)
{
	if (got < 0)
		return (int)got;
	return (size_t)got == len ? 0 : -EIO;
}

int nf_read_decoded(struct nf_fs *fs, struct nf_thread *th, const struct nf_view *v, uint64_t off,
		    size_t len, char *out)
{
	struct nf_fetch_arg fa = {fs, th};
	struct nf_fetcher f = {nf_fetch_spans, &fa};
	int rc;

	if (v->error)
		return v->error;
	rc = check_read(nf_decoded_read(fs->a, v->parts, v->nparts, v->dtype, &f, off, len,
					(uint8_t *)out), len);
	if (rc < 0)
		atomic_fetch_add(&fs->errors, 1);
	return rc;
}

int nf_read_safetensors(struct nf_fs *fs, struct nf_thread *th, uint64_t off, size_t len,
			char *out)
{
	struct nf_fetch_arg fa = {fs, th};
	struct nf_fetcher f = {nf_fetch_spans, &fa};
	int rc = check_read(nf_safetensors_read(&fs->st, fs->a, &f, off, len, (uint8_t *)out), len);

	if (rc < 0)
		atomic_fetch_add(&fs->errors, 1);
	return rc;
}
