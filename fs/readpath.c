/* fs/readpath.c — views -> logical spans -> extent map -> the engine.
 *
 * A read of a PIECES view turns the requested file range into the pieces
 * it touches; zero pieces are filled in memory, the others are spans of
 * the set's logical space, cut into file segments by the extent map the
 * family gave (io/extent.h: the only code that knows how files join), and
 * every segment is read by this thread's engine state straight into the
 * reply buffer, all of one request in one engine read.  A FILE view is one
 * segment of its file.  A family's read queues its spans the same way
 * (nf_rd_queue) and runs them at once (nf_rd_run).  Every segment read is
 * counted on its file, and a file's first failure logged (set.c). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fs/context.h"

struct nf_thread *nf_thread_get(struct nf_fs *fs)
{
	struct nf_thread *th = pthread_getspecific(fs->thread_key);

	if (th)
		return th;
	th = calloc(1, sizeof *th);
	if (th == NULL)
		return NULL;
	th->engine = &fs->engine;
	if (fs->engine.ops->thread_new(fs->engine.state, &th->eng) < 0) {
		free(th);
		return NULL;
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
	th->engine->ops->thread_free(th->eng);
	free(th->buf);
	free(th->segs);
	free(th->ios);
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

/* Map one logical span to ios appended at th->ios[*nios...]. */
static int queue_span(struct nf_fs *fs, struct nf_thread *th, uint64_t logical, uint64_t length,
		      char *dst, size_t *nios)
{
	ssize_t n = nf_extents_map(&fs->set.extents, logical, length, th->segs, th->segcap);

	if (n > (ssize_t)th->segcap) {
		size_t cap = th->segcap;
		if (grow((void **)&th->segs, &cap, (size_t)n, sizeof *th->segs) < 0)
			return -ENOMEM;
		th->segcap = cap;
		n = nf_extents_map(&fs->set.extents, logical, length, th->segs, th->segcap);
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

/* What this thread's engine counted since its last read, into the stats. */
static void add_engine_stats(struct nf_fs *fs, struct nf_thread *th)
{
	const struct nf_engine_ops *ops = fs->engine.ops;
	uint64_t now[NF_ENGINE_STATS_MAX];

	if (ops->nstats == 0)
		return;
	ops->stats(th->eng, now);
	for (unsigned k = 0; k < ops->nstats; k++) {
		atomic_fetch_add(&fs->engine_stats[k], now[k] - th->last[k]);
		th->last[k] = now[k];
	}
}

/* Read the ios queued in th->ios: the one place reads are issued, counted
 * and logged.  Contract §5: a file truncated, overwritten, touched or
 * removed while mounted fails the reads that touch it (the engine acquires
 * every file through the family, which compares it with what it first
 * opened).  Returns 0 or -EIO. */
static int run_ios(struct nf_fs *fs, struct nf_thread *th, void *stream, size_t nios)
{
	int rc;

	if (nios == 0)
		return 0;
	rc = fs->engine.ops->read(th->eng, stream, th->ios, nios);
	add_engine_stats(fs, th);
	nf_set_account(fs, th->ios, nios);
	return rc < 0 ? -EIO : 0;
}

int nf_read_pieces(struct nf_fs *fs, struct nf_thread *th, void *stream, const struct nf_view *v,
		   uint64_t off, size_t len, char *out)
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
		rc = run_ios(fs, th, stream, nios);
	if (rc < 0) {
		atomic_fetch_add(&fs->errors, 1);
		return -EIO;
	}
	return 0;
}

int nf_read_file(struct nf_fs *fs, struct nf_thread *th, void *stream, const struct nf_view *v,
		 uint64_t off, size_t len, char *out)
{
	uint64_t at;

	if (len == 0)
		return 0;
	if (grow((void **)&th->ios, &th->iocap, 1, sizeof *th->ios) < 0)
		return -ENOMEM;
	if (v->file >= fs->set.n || __builtin_add_overflow(v->file_offset, off, &at)) {
		atomic_fetch_add(&fs->errors, 1);
		return -EIO;
	}
	th->ios[0] = (struct nf_io){.file = v->file, .offset = at, .length = len, .dst = out};
	if (run_ios(fs, th, stream, 1) < 0) {
		atomic_fetch_add(&fs->errors, 1);
		return -EIO;
	}
	return 0;
}

int nf_rd_queue(struct nf_rd *rd, uint64_t logical, uint64_t length, void *dst)
{
	return queue_span(rd->fs, rd->th, logical, length, dst, &rd->nios);
}

int nf_rd_run(struct nf_rd *rd)
{
	size_t n = rd->nios;

	rd->nios = 0;
	return run_ios(rd->fs, rd->th, rd->stream, n);
}

void nf_rd_failed(struct nf_rd *rd)
{
	atomic_fetch_add(&rd->fs->errors, 1);
}
