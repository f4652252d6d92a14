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
 * counted on its file, in the thread's own counters (counters.c), and a
 * file's first failure logged (set.c).
 *
 * An engine with read_ref (remote: its prefetched chunks) may leave bytes
 * of a PIECES or FILE read where it already holds them; the reply is then
 * sent as iovecs over the reply buffer and those bytes (nf_read_reply),
 * and the engine's memory given back once it is sent (nf_read_release).
 * A family's reads (decoded views) keep their bytes in its buffers: it
 * decodes them.
 *
 * Each worker thread has a work area in huge pages that holds the reply
 * (nf_thread_reply) and, after it, the request's scratch (nf_rd_scratch:
 * a family's source bytes to decode and its plan); it grows to what one
 * request needed and is kept, so that a read allocates nothing.  The
 * engine seam (fs/engine.h) is not changed by this: it still gets one
 * segment list per request, whatever memory the segments land in. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fs/context.h"

/* The work area and big scratch blocks are made of whole huge pages
 * (2 MiB on x86-64; MADV_HUGEPAGE asks for them even when transparent huge
 * pages are madvise-only).  Measured on the 2-core VM of bench/README.md
 * (issue 15): a 1 MiB copy from the page cache into 4 KiB pages costs
 * 0.59 CPU-s/GiB, into one huge page 0.12, the same read(2), pread or
 * io_uring read; every copy of a read goes through this memory three
 * times (the engine's read of the source into it, the decode out of it,
 * the kernel's copy of the reply out of it, whose page pinning walks one
 * entry instead of 256). */
#define NF_HUGE ((size_t)2 << 20)
/* A request asking for more than this (a read over thousands of tiny
 * tensors) gets side blocks every time instead of a bigger area. */
#define NF_WORK_MAX ((size_t)16 << 20)

struct nf_side {
	struct nf_side *next;
	size_t size;
};

static size_t align64(size_t n)
{
	return n > SIZE_MAX - 63 ? 0 : (n + 63) & ~(size_t)63;
}

/* `n` bytes (rounded up to whole huge pages) aligned to a huge page. */
static void *huge_alloc(size_t n, size_t *cap)
{
	size_t c;
	void *p;

	if (n > SIZE_MAX - NF_HUGE)
		return NULL;
	c = (n + NF_HUGE - 1) & ~(NF_HUGE - 1);
	p = aligned_alloc(NF_HUGE, c);
	if (p == NULL)
		return NULL;
	(void)madvise(p, c, MADV_HUGEPAGE);   /* advice only: 4 KiB pages still work */
	*cap = c;
	return p;
}

struct nf_thread *nf_thread_get(struct nf_fs *fs)
{
	struct nf_thread *th = pthread_getspecific(fs->thread_key);
	size_t size = (sizeof *th + 63) & ~(size_t)63;

	if (th)
		return th;
	/* on cache lines of its own: its counters are written on every read */
	th = aligned_alloc(64, size);
	if (th == NULL)
		return NULL;
	memset(th, 0, sizeof *th);
	th->fs = fs;
	th->engine = &fs->engine;
	if (fs->engine.ops->thread_new(fs->engine.state, &th->eng) < 0) {
		free(th);
		return NULL;
	}
	if (nf_counters_join(fs, th) < 0 || pthread_setspecific(fs->thread_key, th) != 0) {
		nf_thread_free(th);
		return NULL;
	}
	return th;
}

static void free_side(struct nf_thread *th)
{
	while (th->side) {
		struct nf_side *s = th->side;
		th->side = s->next;
		free(s);
	}
}

void nf_thread_free(void *p)
{
	struct nf_thread *th = p;

	if (th == NULL)
		return;
	nf_counters_leave(th->fs, th);
	nf_read_release(th);
	th->engine->ops->thread_free(th->eng);
	free_side(th);
	free(th->work);
	free(th->segs);
	free(th->ios);
	free(th);
}

char *nf_thread_reply(struct nf_thread *th, size_t len)
{
	size_t want = th->high > len ? th->high : len;

	nf_read_release(th);   /* the last reply's engine memory, if not yet */
	free_side(th);
	/* the area grows to what a request asked (reply and scratch), once:
	 * from then on a request allocates nothing */
	if (want > th->workcap && want <= NF_WORK_MAX) {
		size_t cap;
		char *w = huge_alloc(want, &cap);
		if (w == NULL && len > th->workcap)
			return NULL;
		if (w) {
			free(th->work);
			th->work = w;
			th->workcap = cap;
		}
	} else if (len > th->workcap) {
		size_t cap;
		char *w = huge_alloc(len, &cap);
		if (w == NULL)
			return NULL;
		free(th->work);
		th->work = w;
		th->workcap = cap;
	}
	th->used = th->total = align64(len);
	return th->work;
}

void *nf_rd_scratch(struct nf_rd *rd, size_t n)
{
	struct nf_thread *th = rd->th;
	size_t n64 = align64(n ? n : 1);
	struct nf_side *s;

	if (n64 == 0 || th->total > SIZE_MAX - n64)
		return NULL;
	th->total += n64;
	if (th->total > th->high)
		th->high = th->total;
	if (n64 <= th->workcap - th->used) {
		void *p = th->work + th->used;
		th->used += n64;
		return p;
	}
	/* does not fit this time: a block of its own until the next request */
	if (n64 > SIZE_MAX - 64 - sizeof *s)
		return NULL;
	s = aligned_alloc(64, align64(sizeof *s) + n64);
	if (s == NULL)
		return NULL;
	s->next = th->side;
	s->size = n64;
	th->side = s;
	return (char *)s + align64(sizeof *s);
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

/* This thread's engine totals, into its counters for the stats. */
static void add_engine_stats(struct nf_fs *fs, struct nf_thread *th)
{
	const struct nf_engine_ops *ops = fs->engine.ops;
	uint64_t now[NF_ENGINE_STATS_MAX];

	if (ops->nstats == 0)
		return;
	ops->stats(th->eng, now);
	for (unsigned k = 0; k < ops->nstats; k++)
		atomic_store_explicit(&th->c.engine[k], now[k], memory_order_relaxed);
}

/* Read the ios queued in th->ios: the one place reads are issued, counted
 * and logged.  Contract §5: a file truncated, overwritten, touched or
 * removed while mounted fails the reads that touch it (the engine acquires
 * every file through the family, which compares it with what it first
 * opened).  Returns 0 or -EIO. */
static int run_ios(struct nf_fs *fs, struct nf_thread *th, void *stream, size_t nios,
		   bool by_ref)
{
	const struct nf_engine_ops *ops = fs->engine.ops;
	int rc;

	if (nios == 0)
		return 0;
	if (by_ref && ops->read_ref) {
		th->held = true;
		rc = ops->read_ref(th->eng, stream, th->ios, nios, th->refs, NF_REPLY_REFS,
				   &th->nrefs);
		if (rc < 0)
			nf_read_release(th);
	} else {
		rc = ops->read(th->eng, stream, th->ios, nios);
	}
	add_engine_stats(fs, th);
	nf_set_account(fs, &th->c, th->ios, nios);
	return rc < 0 ? -EIO : 0;
}

/* The file ranges of logical spans pc[0, count) (zero pieces skipped), in
 * order: their count, the array malloc'd into *out (NULL and 0: none, or
 * no memory; a path is only where to fetch ahead).  A span the extent
 * table cannot map ends the list (a read there fails: nothing to fetch
 * ahead), and so does a count past SIZE_MAX (none is that long). */
static size_t spans_ranges(struct nf_fs *fs, const struct nf_piece *pc, size_t count,
			   struct nf_io **out)
{
	struct nf_segment *segs;
	size_t n = 0, m = 0, i;

	*out = NULL;
	for (i = 0; i < count; i++) {
		if (pc[i].logical == NF_PIECE_ZERO)
			continue;
		ssize_t k = nf_extents_map(&fs->set.extents, pc[i].logical, pc[i].length, NULL, 0);
		if (k < 0 || __builtin_add_overflow(n, (size_t)k, &n))
			break;
	}
	count = i;   /* the spans counted */
	if (n == 0)
		return 0;
	segs = calloc(n, sizeof *segs);
	*out = calloc(n, sizeof **out);
	if (segs == NULL || *out == NULL) {
		free(segs);
		free(*out);
		*out = NULL;
		return 0;
	}
	for (i = 0; i < count && m < n; i++) {
		if (pc[i].logical == NF_PIECE_ZERO)
			continue;
		ssize_t k = nf_extents_map(&fs->set.extents, pc[i].logical, pc[i].length, segs + m,
					   n - m);
		m += (size_t)k < n - m ? (size_t)k : n - m;   /* k >= 0: counted above */
	}
	for (i = 0; i < m; i++)
		(*out)[i] = (struct nf_io){.file = segs[i].file, .offset = segs[i].file_offset,
					   .length = segs[i].length};
	free(segs);
	return m;
}

void nf_read_path(struct nf_fs *fs, void *stream, uint32_t node, const struct nf_view *v)
{
	const struct nf_engine_ops *ops = fs->engine.ops;
	const struct nf_family *fam = fs->family;
	const struct nf_piece *pc = NULL;
	struct nf_piece *spans = NULL;
	struct nf_io *ranges;
	size_t count = 0, n;

	if (ops->stream_path == NULL || stream == NULL)
		return;
	if (v->kind == NF_VIEW_PIECES) {
		pc = v->pieces + v->first;
		count = v->count;
	} else if (v->kind >= NF_VIEW_FAMILY && fam->view_spans) {
		count = fam->view_spans(fs->fam, node, v, NULL, 0);
		if (count > 0 && (spans = calloc(count, sizeof *spans)) != NULL)
			fam->view_spans(fs->fam, node, v, spans, count);
		else
			count = 0;
		pc = spans;
	}
	n = spans_ranges(fs, pc, count, &ranges);
	if (n > 0)
		ops->stream_path(fs->engine.state, stream, ranges, n);
	free(ranges);
	free(spans);
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
		rc = run_ios(fs, th, stream, nios, true);
	if (rc < 0) {
		nf_count(&th->c.errors, 1);
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
		nf_count(&th->c.errors, 1);
		return -EIO;
	}
	th->ios[0] = (struct nf_io){.file = v->file, .offset = at, .length = len, .dst = out};
	if (run_ios(fs, th, stream, 1, true) < 0) {
		nf_count(&th->c.errors, 1);
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
	/* a family decodes the bytes: they must be in its buffers */
	return run_ios(rd->fs, rd->th, rd->stream, n, false);
}

void nf_rd_failed(struct nf_rd *rd)
{
	nf_count(&rd->th->c.errors, 1);
}

/* The reply of a PIECES or FILE read whose engine left bytes in its own
 * memory (read_ref: the remote engine's prefetched chunks): out[0, len)
 * with those ranges taken from where they are, so that the kernel copies
 * them into the reader's pages straight from there (fuse_reply_iov)
 * instead of after a copy into out.  Refs out of order or outside out
 * (not what an engine may give) are copied in, as a plain read would. */
size_t nf_read_reply(struct nf_thread *th, char *out, size_t len, const struct iovec **iov)
{
	const char *at = out;
	size_t n = 0;

	for (size_t i = 0; i < th->nrefs; i++) {
		const char *d = th->refs[i].dst;
		if (d < at || d > out + len || th->refs[i].len > (size_t)(out + len - d)) {
			for (size_t k = 0; k < th->nrefs; k++)
				memcpy(th->refs[k].dst, th->refs[k].src, th->refs[k].len);
			th->nrefs = 0;
			return 0;
		}
		at = d + th->refs[i].len;
	}
	at = out;
	for (size_t i = 0; i < th->nrefs; i++) {
		const struct nf_engine_ref *r = &th->refs[i];
		if ((const char *)r->dst > at)
			th->iov[n++] = (struct iovec){.iov_base = (void *)at,
						      .iov_len = (size_t)((const char *)r->dst - at)};
		if (n > 0 && (const char *)th->iov[n - 1].iov_base + th->iov[n - 1].iov_len ==
				     (const char *)r->src)
			th->iov[n - 1].iov_len += r->len;   /* the next bytes of one chunk */
		else
			th->iov[n++] = (struct iovec){.iov_base = (void *)r->src, .iov_len = r->len};
		at = (const char *)r->dst + r->len;
	}
	if (n > 0 && at < out + len)
		th->iov[n++] = (struct iovec){.iov_base = (void *)at,
					      .iov_len = (size_t)(out + len - at)};
	*iov = th->iov;
	return n;
}

void nf_read_release(struct nf_thread *th)
{
	if (!th->held)
		return;
	th->engine->ops->release(th->eng);
	th->held = false;
	th->nrefs = 0;
}
