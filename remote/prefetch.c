/* remote/prefetch.c — sequential-read detection and fetch-ahead windows.
 *
 * Modelled on mountpoint-s3's prefetcher: each reader (a stream) keeps,
 * per file (with a path, per range of it), the furthest byte it read.  A
 * read near it (is_sequential: out-of-order arrivals of one reader's
 * readahead included) is sequential:
 * the stream then queues fetch-ahead windows so that the read itself and
 * a whole window beyond the furthest byte are covered; the first is
 * opts.prefetch_min bytes long and each next one twice the last up to
 * opts.prefetch_max, so a long sequential read soon runs on large
 * requests while a short one costs little.  Any other read drops the
 * file's windows (they are cancelled in flight) and starts over, except
 * after the first read of the file after the one a sequential read ran to
 * the end of: a split set's object goes on in the next part, at the
 * window size it had (struct nf_remote_stream, handoff).  A stream that
 * knows its reader's path (nf_remote_stream_path: an open object's file
 * ranges) does better: no window goes beyond the range it is in, and the
 * windows that reach a range's end go on at the next range, in its file
 * or further on or back in the same one, while the reader is still a
 * window behind (go_on), so that crossing a part boundary, or a jump of
 * the view's bytes inside a file, waits for nothing.
 *
 * The windows are fetched by PF_WORKERS background threads of the set (started on
 * first use, with its own multi handle, nf_rhttp_serve), in requests of at
 * most opts.max_request bytes (a window is cut into such chunks); a chunk
 * starts as soon as fewer than opts.max_inflight are in flight, whichever
 * stream queued it.  A reader that reaches a chunk still in flight waits only
 * for the bytes it needs (the chunk's filled count grows as the body
 * arrives) and copies them into its buffer, holding a reference to the
 * chunk but no stream lock, so the reads of one stream that FUSE runs on
 * several threads wait and copy side by side.  nf_remote_stream_read_ref
 * skips that copy: it hands the bytes out where they are and keeps the
 * chunk's reference on the thread until the caller, once its FUSE reply
 * is written from them, calls nf_remote_release (bench/README.md, issue
 * 14: the copy chunk -> reply was one of the two user-space copies of a
 * sequential read).  All windows of all streams
 * together hold at most opts.prefetch_mem bytes: a window that does not
 * fit is not queued and the reads go to the network directly.  A chunk
 * that failed is simply not used: the read falls back to a direct
 * request, which reports the error the usual way.
 *
 * With the block cache on, streams read through the cache instead (block
 * reads; no fetch-ahead). */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "remote/internal.h"

/* files a stream tracks at once (LRU): an object of a split set may span a
 * dozen parts, read by several threads at once */
#define STREAM_FILES 16
#define STREAM_CHUNKS 256    /* chunks queued ahead per file, at most */
/* The kernel's readahead and FUSE's threads deliver a sequential reader's
 * requests out of order: a read up to BACKTRACK behind the furthest one or
 * up to SEQ_SLACK beyond what was read or queued is still sequential
 * (position), and chunks up to BACKTRACK behind the furthest read are
 * kept for the late ones. */
#define BACKTRACK ((uint64_t)16 << 20)
#define SEQ_SLACK ((uint64_t)16 << 20)
#define LATE_MAX ((uint64_t)64 << 20)
#define PF_WORKERS 4         /* background fetch threads of a set */
#define HUGE ((uint64_t)2 << 20)   /* a transparent huge page */
#define READ_CHUNKS 8        /* chunks one read may take its bytes from */
/* A path's next range in the same file that starts inside the last one
 * or at most PATH_GAP after its end joins it: the gap's bytes are then
 * fetched with the rest.  A view of small objects (a model.safetensors or
 * decoded view of many small tensors, each aligned to 256 bytes) is
 * otherwise a range per object, and as no window goes beyond its range,
 * a request per object: 111,211 GETs for the 13.9 MB decoded
 * model.safetensors of a 70,000-object set, against 75 for a 1 GiB
 * object.  64 KiB takes less than one round trip to transfer on any link
 * this serves (20 ms at 26 Mbit/s). */
#define PATH_GAP ((uint64_t)64 << 10)
#define PATH_BACK 16         /* overlapping ranges path_range looks through */

enum { PF_QUEUED, PF_RUNNING, PF_DONE };

struct pfchunk {
	struct nf_rpf *pf;
	uint32_t file;
	uint64_t off, len;
	char *buf;
	uint64_t filled;         /* bytes from the start received (under pf->lock) */
	uint64_t need;           /* a reader waits until filled >= need (0: none) */
	pthread_cond_t cv;       /* its readers wait here: one chunk's bytes wake
				  * only the readers of that chunk */
	int waiters;
	int readers;             /* reads holding it (take_chunks): never cancelled */
	uint64_t cap;            /* size of buf */
	int state, result;
	bool cancelled;
	int refs;                /* the stream's and, while queued or running, the worker's */
	struct pfchunk *qnext;
	struct nf_rreq req;      /* the worker's request for it */
};

struct pfbuf {
	struct pfbuf *next;
	uint64_t cap;
};


struct nf_rpf {
	struct nf_remote *r;
	pthread_mutex_t lock;
	pthread_cond_t work;     /* the worker waits for chunks */
	uint64_t mem;            /* bytes of the chunks alive */
	uint64_t peak;           /* the most mem was */
	/* buffers of finished chunks, kept for the next ones (within
	 * opts.prefetch_mem with the live ones): a fresh 16 MiB buffer costs
	 * 4096 page faults, more than the copy into it */
	struct pfbuf *spare;
	uint64_t spare_bytes;
	struct pfchunk *qhead, *qtail;
	bool stop;
	bool dead;               /* the worker has ended: queue nothing more */
	/* the workers' handles, for curl_multi_wakeup (NULL: none there) */
	struct nf_remote_thread *wt[PF_WORKERS];
	pthread_t th[PF_WORKERS];
	unsigned nstarted, nlive;
};

/* One sequential read of a stream: of a file, or, with a path, of one
 * range of it (so a path that jumps inside one file, such as a
 * model.safetensors whose bindings are not in the order of their
 * objects, goes on at the next range as it does in another file). */
#define NO_RANGE UINT32_MAX
struct pffile {
	bool used;
	uint32_t file;
	uint32_t range;          /* its index in the path, or NO_RANGE */
	uint64_t next;           /* where the last read ended */
	uint64_t base;           /* the lowest byte this run read or queued (fill_behind) */
	uint64_t ahead;          /* end of the last chunk queued */
	uint64_t win;            /* size of the next window */
	uint64_t last;           /* size of the last window queued (0: none since the reset) */
	bool carried;            /* win came from the file before (handoff): kept at the first read */
	uint64_t tick;           /* LRU */
	struct pfchunk *c[STREAM_CHUNKS];   /* ordered by offset */
	size_t nc;
};

/* A range of a stream's path: where in its file, and where in the view's
 * bytes it starts (pos: the view bytes of the ranges before it) and how
 * many of them it holds (vlen: with ranges joined across gaps, fewer than
 * length; with an object read twice, more). */
struct pfrange {
	uint32_t file;
	uint64_t offset, length;
	uint64_t pos, vlen;
};

struct nf_remote_stream {
	struct nf_remote *r;
	pthread_mutex_t lock;    /* the state below; FUSE may read one handle from two threads */
	struct pffile f[STREAM_FILES];
	uint64_t tick;
	/* The file a sequential read last ran to the end of, and its window
	 * then.  An object of a split set goes on in the next file (the next
	 * part): that file's first read is still fetched as asked (it may be
	 * all the object has there), but the windows after it start at this
	 * size, not at prefetch_min again, which cost a round trip per
	 * doubling at every part boundary (bench/README.md, issue 14). */
	bool handoff;
	uint32_t handoff_file;
	uint64_t handoff_win;
	/* where the reader goes (nf_remote_stream_path): set before the first
	 * read, read-only after but for the two positions */
	struct pfrange *path;
	size_t npath;
	uint32_t *sorted;        /* the path's indices by (file, offset): path_range */
	size_t at;               /* the range the last read was in (path_range) */
	size_t done;             /* ranges before it are finished (drop_finished) */
	uint64_t far;            /* the furthest position read on the path, in the view's bytes */
	/* files go_on went into, not yet taken by nf_remote_stream_reached
	 * (one read may go on into two: a short range between them); the
	 * flag saves the reads a lock when there are none */
	uint32_t reached[4];
	unsigned nreached;
	atomic_bool any_reached;
};

/* ---- chunks --------------------------------------------------------------- */

/* a buffer of at least n bytes, a spare one when there is one; lock held */
static char *buf_get(struct nf_rpf *pf, uint64_t n, uint64_t *cap)
{
	for (struct pfbuf **p = &pf->spare; *p; p = &(*p)->next) {
		if ((*p)->cap >= n) {
			struct pfbuf *b = *p;
			*p = b->next;
			pf->spare_bytes -= b->cap;
			*cap = b->cap;
			return (char *)b;
		}
	}
	if (n < HUGE) {
		*cap = n < sizeof(struct pfbuf) ? sizeof(struct pfbuf) : n;
		return malloc(*cap);
	}
	/* whole huge pages: a 16 MiB chunk is then 8 page faults, not 4096
	 * (a fresh mount's first windows were 10% of its sequential read) */
	if (n > UINT64_MAX - HUGE)
		return NULL;
	*cap = (n + HUGE - 1) & ~(HUGE - 1);
	char *p = aligned_alloc(HUGE, *cap);
	if (p)
		(void)madvise(p, *cap, MADV_HUGEPAGE);   /* advice only */
	return p;
}

static void buf_put(struct nf_rpf *pf, char *buf, uint64_t cap)
{
	/* spares and live chunks together stay within the budget: a steady
	 * sequential read then runs on the same buffers, no page faults */
	if (pf->spare_bytes + cap + pf->mem > pf->r->o.prefetch_mem || pf->stop) {
		free(buf);
		return;
	}
	struct pfbuf *b = (struct pfbuf *)(void *)buf;
	b->cap = cap;
	b->next = pf->spare;
	pf->spare = b;
	pf->spare_bytes += cap;
}

static void chunk_wake(struct pfchunk *c)  /* pf->lock held */
{
	if (c->waiters > 0)
		pthread_cond_broadcast(&c->cv);
}

static void chunk_put(struct pfchunk *c)   /* pf->lock held */
{
	if (--c->refs > 0)
		return;
	c->pf->mem -= c->len;
	buf_put(c->pf, c->buf, c->cap);
	pthread_cond_destroy(&c->cv);
	free(c);
}

static int chunk_sink(void *ctx, uint64_t pos, const void *p, size_t n)
{
	struct pfchunk *c = ctx;
	struct nf_rpf *pf = c->pf;
	bool stop;

	pthread_mutex_lock(&pf->lock);
	stop = c->cancelled;
	pthread_mutex_unlock(&pf->lock);
	if (stop)
		return -1;
	nf_rcopy_cold(c->buf + pos, p, n);   /* pos + n <= len: http.c bounds the body */
	pthread_mutex_lock(&pf->lock);
	c->filled = pos + n;
	if (c->need && c->filled >= c->need) { /* wake readers only when they can go on */
		c->need = 0;
		chunk_wake(c);
	}
	pthread_mutex_unlock(&pf->lock);
	return 0;
}

/* The worker's request source: the queue of chunks (pf->lock). */
static struct nf_rreq *worker_next(void *ctx, bool idle)
{
	struct nf_rpf *pf = ctx;
	struct nf_rreq *q = NULL;

	pthread_mutex_lock(&pf->lock);
	for (;;) {
		while (idle && !pf->stop && pf->qhead == NULL)
			pthread_cond_wait(&pf->work, &pf->lock);
		if (pf->stop || pf->qhead == NULL)
			break;
		struct pfchunk *c = pf->qhead;
		pf->qhead = c->qnext;
		if (pf->qhead == NULL)
			pf->qtail = NULL;
		if (c->cancelled) {
			c->state = PF_DONE;
			c->result = -ECANCELED;
			chunk_wake(c);
			chunk_put(c);
			continue;
		}
		c->state = PF_RUNNING;
		c->req = (struct nf_rreq){.file = c->file, .off = c->off, .len = c->len,
					  .sink = chunk_sink, .ctx = c};
		q = &c->req;
		break;
	}
	pthread_mutex_unlock(&pf->lock);
	return q;
}

static void worker_done(void *ctx, struct nf_rreq *q)
{
	struct nf_rpf *pf = ctx;
	struct pfchunk *c = q->ctx;
	struct nf_remote *r = pf->r;

	if (q->result == 0) {
		pthread_mutex_lock(&r->lock);
		r->files[c->file].st.prefetch_bytes += c->len;
		pthread_mutex_unlock(&r->lock);
	}
	pthread_mutex_lock(&pf->lock);
	c->state = PF_DONE;
	c->result = q->result;
	chunk_wake(c);
	chunk_put(c);
	pthread_mutex_unlock(&pf->lock);
}

static bool worker_abandon(void *ctx, const struct nf_rreq *q)
{
	struct nf_rpf *pf = ctx;
	const struct pfchunk *c = q->ctx;
	bool gone;
	pthread_mutex_lock(&pf->lock);
	gone = c->cancelled || pf->stop;
	pthread_mutex_unlock(&pf->lock);
	return gone;
}

/* wakes every worker busy in curl_multi_poll; lock held */
static void wake_workers(struct nf_rpf *pf)
{
	for (unsigned i = 0; i < PF_WORKERS; i++)
		if (pf->wt[i])
			curl_multi_wakeup(pf->wt[i]->multi);
}

/* A background fetcher: PF_WORKERS threads, each with its own multi
 * handle, take chunks from the one queue as soon as they have room (not in
 * batches), so a window queued while others are in flight goes out at
 * once, and a chunk no longer wanted is dropped even when its server
 * stalls.  Several threads, because one did all of the prefetch's receive
 * and copy work: on a busy machine one thread's share of the CPU bounded a
 * sequential read that the FUSE threads alone spread over many.  Each
 * takes at most its share of opts.max_inflight, so that the four together
 * keep as many in flight as one reading thread may: with the whole of it
 * each, a 1 GiB read at 20 ms RTT opened 19-21 connections, not 15-16,
 * and ran 3% slower (bench/README.md, issue 14, eighth pass; that the
 * extra connections' handshakes are the cause is likely, not measured). */
static void *worker(void *arg)
{
	struct nf_rpf *pf = arg;
	struct nf_remote_thread *t = NULL;
	unsigned share = pf->r->o.max_inflight / PF_WORKERS;
	struct nf_rsource src = {.next = worker_next, .done = worker_done,
				 .abandon = worker_abandon, .ctx = pf,
				 .max_active = share ? share : 1};
	unsigned slot = PF_WORKERS;

	if (nf_remote_thread_new(pf->r, &t) == 0) {
		pthread_mutex_lock(&pf->lock);
		for (slot = 0; slot < PF_WORKERS && pf->wt[slot]; slot++)
			;
		if (slot < PF_WORKERS)
			pf->wt[slot] = t;
		pthread_mutex_unlock(&pf->lock);
		if (slot < PF_WORKERS)
			nf_rhttp_serve(t, &src);  /* returns once stopped */
		pthread_mutex_lock(&pf->lock);
		if (slot < PF_WORKERS)
			pf->wt[slot] = NULL;
		pthread_mutex_unlock(&pf->lock);
	}
	/* the last one (without a handle, or once stopped) fails what is queued */
	pthread_mutex_lock(&pf->lock);
	if (--pf->nlive == 0) {
		pf->dead = true;
		while (pf->qhead) {
			struct pfchunk *c = pf->qhead;
			pf->qhead = c->qnext;
			c->state = PF_DONE;
			c->result = -ECANCELED;
			chunk_wake(c);
			chunk_put(c);
		}
		pf->qtail = NULL;
	}
	pthread_mutex_unlock(&pf->lock);
	nf_remote_thread_free(t);
	return NULL;
}

int nf_rpf_new(struct nf_remote *r, struct nf_rpf **out)
{
	struct nf_rpf *pf = calloc(1, sizeof *pf);
	*out = NULL;
	if (pf == NULL)
		return -ENOMEM;
	pf->r = r;
	pthread_mutex_init(&pf->lock, NULL);
	pthread_cond_init(&pf->work, NULL);
	*out = pf;
	return 0;
}

void nf_rpf_free(struct nf_rpf *pf)
{
	if (pf == NULL)
		return;
	pthread_mutex_lock(&pf->lock);
	pf->stop = true;
	for (struct pfchunk *c = pf->qhead; c; c = c->qnext)
		c->cancelled = true;
	pthread_cond_broadcast(&pf->work);
	wake_workers(pf);
	pthread_mutex_unlock(&pf->lock);
	for (unsigned i = 0; i < pf->nstarted; i++)
		pthread_join(pf->th[i], NULL);
	while (pf->qhead) {
		struct pfchunk *c = pf->qhead;
		pf->qhead = c->qnext;
		chunk_put(c);
	}
	while (pf->spare) {
		struct pfbuf *b = pf->spare;
		pf->spare = b->next;
		free(b);
	}
	pthread_mutex_destroy(&pf->lock);
	pthread_cond_destroy(&pf->work);
	free(pf);
}

/* Queues [off, off+len) of `file` as chunks; lock held.  Returns the bytes
 * queued (0 when the budget or the stream's slots are full). */
static uint64_t queue_window(struct nf_rpf *pf, struct pffile *pfi, uint64_t off, uint64_t len)
{
	struct nf_remote *r = pf->r;
	uint64_t done = 0;

	if (pf->dead || pf->stop)
		return 0;
	while (pf->nstarted < PF_WORKERS) {
		if (pthread_create(&pf->th[pf->nstarted], NULL, worker, pf) != 0)
			break;
		pf->nstarted++;
		pf->nlive++;
	}
	if (pf->nlive == 0)
		return 0;
	while (done < len && pfi->nc < STREAM_CHUNKS) {
		uint64_t n = len - done < r->o.max_request ? len - done : r->o.max_request;
		if (pf->mem + n > r->o.prefetch_mem)
			break;
		struct pfchunk *c = calloc(1, sizeof *c);
		uint64_t cap = 0;
		char *buf = c ? buf_get(pf, n, &cap) : NULL;
		if (buf == NULL) {
			free(c);
			break;
		}
		*c = (struct pfchunk){.pf = pf, .file = pfi->file, .off = off + done, .len = n,
				      .buf = buf, .cap = cap, .state = PF_QUEUED, .refs = 2};
		pthread_cond_init(&c->cv, NULL);
		pf->mem += n;
		if (pf->mem > pf->peak)
			pf->peak = pf->mem;
		if (pf->qtail)
			pf->qtail->qnext = c;
		else
			pf->qhead = c;
		pf->qtail = c;
		pfi->c[pfi->nc++] = c;
		done += n;
	}
	if (done) {
		pthread_cond_signal(&pf->work);          /* an idle worker */
		wake_workers(pf);                        /* busy ones */
	}
	return done;
}

/* ---- streams ------------------------------------------------------------ */

int nf_remote_stream_new(struct nf_remote *r, struct nf_remote_stream **out)
{
	struct nf_remote_stream *s = calloc(1, sizeof *s);
	*out = s;
	if (s == NULL)
		return -ENOMEM;
	s->r = r;
	pthread_mutex_init(&s->lock, NULL);
	atomic_init(&s->any_reached, false);
	return 0;
}

/* Does a range of `file` at `off` join path range `last` (PATH_GAP)? */
static bool joins(const struct pfrange *last, uint32_t file, uint64_t off)
{
	uint64_t lend = last->offset + last->length;   /* no wrap: checked when added */

	return last->file == file && off >= last->offset && (off <= lend || off - lend <= PATH_GAP);
}

/* qsort_r: path indices by (file, offset), then by index */
static int by_place(const void *pa, const void *pb, void *arg)
{
	const struct pfrange *path = arg;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	const struct pfrange *x = &path[ia], *y = &path[ib];

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

void nf_remote_stream_path(struct nf_remote_stream *s, const struct nf_io *ranges, size_t n)
{
	/* n > NF_REMOTE_PATH_MAX: sorted cannot index them (and no memory
	 * holds as many): no path, as without memory */
	size_t cap = n <= NF_REMOTE_PATH_MAX ? n : 0, k = 0;
	struct pfrange *path = cap ? calloc(cap, sizeof *path) : NULL;
	uint32_t *sorted = cap ? calloc(cap, sizeof *sorted) : NULL;
	uint64_t pos = 0;

	if (path == NULL || sorted == NULL)
		n = 0;   /* (no memory: no path; it is only where to fetch ahead) */
	for (size_t i = 0; i < n; i++) {
		const struct nf_io *x = &ranges[i];
		struct pfrange *last = k ? &path[k - 1] : NULL;
		uint64_t end, next;
		if (x->length == 0 || __builtin_add_overflow(x->offset, x->length, &end) ||
		    __builtin_add_overflow(pos, x->length, &next))
			continue;
		if (last && joins(last, x->file, x->offset)) {
			/* the range grows to x's end (if x ends beyond it);
			 * its view bytes by x's (the sum is next - last->pos) */
			uint64_t lend = last->offset + last->length;
			if (end > lend)
				last->length = end - last->offset;
			last->vlen += x->length;
			pos = next;
			continue;
		}
		if (k == cap)
			break;
		sorted[k] = (uint32_t)k;
		path[k++] = (struct pfrange){.file = x->file, .offset = x->offset,
					     .length = x->length, .pos = pos, .vlen = x->length};
		pos = next;
	}
	if (k == 0) {
		free(path);
		free(sorted);
		path = NULL;
		sorted = NULL;
	}
	if (k > 1)
		qsort_r(sorted, k, sizeof *sorted, by_place, path);
	pthread_mutex_lock(&s->lock);
	free(s->path);
	free(s->sorted);
	s->path = path;
	s->sorted = sorted;
	s->npath = k;
	s->at = s->done = 0;
	s->far = 0;
	pthread_mutex_unlock(&s->lock);
}

uint32_t nf_remote_stream_reached(struct nf_remote_stream *s)
{
	uint32_t f = UINT32_MAX;

	if (!atomic_load_explicit(&s->any_reached, memory_order_relaxed))
		return f;
	pthread_mutex_lock(&s->lock);
	if (s->nreached > 0) {
		f = s->reached[0];
		memmove(s->reached, s->reached + 1, --s->nreached * sizeof *s->reached);
	}
	atomic_store_explicit(&s->any_reached, s->nreached > 0, memory_order_relaxed);
	pthread_mutex_unlock(&s->lock);
	return f;
}

static bool in_range(const struct pfrange *x, uint32_t file, uint64_t off)
{
	return x->file == file && off >= x->offset && off - x->offset < x->length;
}

/* The range of the path that holds byte `off` of `file`, or NULL.  A
 * sequential reader stays in one range or goes on to the next: those two
 * are tried first, so a read costs no search; any other read, a binary
 * search of the ranges by place, then back from the last to start at or
 * before `off` over at most PATH_BACK ranges of the file to one that
 * holds it.  Ranges overlap where a view reads an object twice: the
 * joined range of a model.safetensors' first file and, after the last
 * file's, its last binding's object at the same start (a 70,000-object
 * set).  Trying only the last to start there, reads in the big one found
 * none and were fetched as asked, a request each.  (A range missed only
 * costs its fetch-ahead.)  s->lock held. */
static const struct pfrange *path_range(struct nf_remote_stream *s, uint32_t file, uint64_t off)
{
	size_t lo = 0, hi = s->npath;

	for (size_t k = 0; k < 2 && s->at + k < s->npath; k++)
		if (in_range(&s->path[s->at + k], file, off))
			return &s->path[s->at += k];
	while (lo < hi) {   /* the first range placed after (file, off) */
		size_t mid = lo + (hi - lo) / 2;
		const struct pfrange *x = &s->path[s->sorted[mid]];
		if (x->file < file || (x->file == file && x->offset <= off))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the ranges placed before it, back to the first that holds off
	 * (overlapping ranges: one placed later may end sooner) */
	for (size_t j = lo, steps = 0; j > 0 && steps < PATH_BACK; j--, steps++) {
		const struct pfrange *x = &s->path[s->sorted[j - 1]];
		if (x->file != file)
			break;
		if (in_range(x, file, off))
			return &s->path[s->at = s->sorted[j - 1]];
	}
	return NULL;
}

static void drop_chunks(struct nf_rpf *pf, struct pffile *pfi, size_t keep_from)
{
	/* lock held; drops chunks [0, keep_from) and shifts the rest down;
	 * the worker drops the ones still in flight (worker_abandon) */
	bool running = false;
	for (size_t i = 0; i < keep_from; i++) {
		struct pfchunk *c = pfi->c[i];
		/* one a read is taking its bytes from goes on (else that read
		 * asked for them again: a byte fetched twice) */
		if (c->readers == 0) {
			running |= c->state == PF_RUNNING;
			c->cancelled = true;
			chunk_wake(c);
		}
		chunk_put(c);
	}
	if (running)
		wake_workers(pf);
	memmove(pfi->c, pfi->c + keep_from, (pfi->nc - keep_from) * sizeof *pfi->c);
	pfi->nc -= keep_from;
}

void nf_remote_stream_free(struct nf_remote_stream *s)
{
	if (s == NULL)
		return;
	struct nf_rpf *pf = s->r->pf;
	pthread_mutex_lock(&pf->lock);
	for (int i = 0; i < STREAM_FILES; i++)
		if (s->f[i].used)
			drop_chunks(pf, &s->f[i], s->f[i].nc);
	pthread_mutex_unlock(&pf->lock);
	pthread_mutex_destroy(&s->lock);
	free(s->path);
	free(s->sorted);
	free(s);
}

/* The state of the stream's reads of `file` in path range `range` (or
 * NO_RANGE), a fresh one in the least recently used slot when there is
 * none.  s->lock held. */
static struct pffile *file_state(struct nf_remote_stream *s, uint32_t file, uint32_t range)
{
	struct pffile *lru = &s->f[0];
	for (int i = 0; i < STREAM_FILES; i++) {
		if (s->f[i].used && s->f[i].file == file && s->f[i].range == range) {
			s->f[i].tick = ++s->tick;
			return &s->f[i];
		}
		if (!s->f[i].used || s->f[i].tick < lru->tick)
			lru = &s->f[i];
	}
	if (lru->used) {
		pthread_mutex_lock(&s->r->pf->lock);
		drop_chunks(s->r->pf, lru, lru->nc);
		pthread_mutex_unlock(&s->r->pf->lock);
	}
	*lru = (struct pffile){.used = true, .file = file, .range = range, .next = UINT64_MAX,
			       .win = s->r->o.prefetch_min, .tick = ++s->tick};
	if (s->handoff && s->handoff_file < UINT32_MAX && file == s->handoff_file + 1) {
		lru->win = s->handoff_win;   /* the continuation */
		lru->carried = true;
		s->handoff = false;
	}
	return lru;
}

/* Where a read of [off, ...) stands to the stream's sequential read.  The
 * kernel's readahead hands one reader's requests (1 MiB each, up to 16 MiB
 * ahead) to several FUSE threads at once, so they arrive out of order, and
 * on a busy machine one of them may be held up while the others go on:
 *   SEQ    from BACKTRACK behind the furthest read (or the first chunk still
 *          held) to SEQ_SLACK (or a window, when larger) beyond what was
 *          read or queued: fetched ahead;
 *   LATE   further behind, but less than LATE_MAX: a straggler of the same
 *          reader, read without touching the windows;
 *   OTHER  anything else, and the file's first read (a random reader must
 *          get exactly what it asks for): the windows are dropped. */
enum pfpos { PF_SEQ, PF_LATE, PF_OTHER };

static enum pfpos position(const struct pffile *pfi, uint64_t off, uint64_t win)
{
	uint64_t lo, reach, hi;

	if (pfi->next == UINT64_MAX)
		return PF_OTHER;
	lo = pfi->next > BACKTRACK ? pfi->next - BACKTRACK : 0;
	if (pfi->nc > 0 && pfi->c[0]->off < lo)
		lo = pfi->c[0]->off;
	reach = pfi->ahead > pfi->next ? pfi->ahead : pfi->next;
	if (__builtin_add_overflow(reach, win > SEQ_SLACK ? win : SEQ_SLACK, &hi))
		hi = UINT64_MAX;
	if (off >= lo && off < hi)
		return PF_SEQ;
	if (off < lo && pfi->next - off < LATE_MAX)
		return PF_LATE;
	return PF_OTHER;
}

/* A sequential read at `at`, before the first byte its run read or
 * queued (pfi->base): the run began further on, where another FUSE
 * thread's read of the kernel's readahead arrived first (in a view of
 * small objects, decoded 4-8 times larger, 16 MiB of readahead reach
 * over a part boundary, and the first read there may land megabytes
 * past the range's start).  Those bytes were never asked for: they are
 * queued as one window before the others (chunks stay ordered by
 * offset), not read as asked, a request each (8,675 GETs for the
 * decoded model.safetensors of a 20,000-object set of 2 parts).  What
 * does not fit the budget is read as asked.  Both locks held. */
static void fill_behind(struct nf_rpf *pf, struct pffile *pfi, uint64_t at)
{
	struct pfchunk *tmp[STREAM_CHUNKS];
	size_t nc0 = pfi->nc, added;

	queue_window(pf, pfi, at, pfi->base - at);
	added = pfi->nc - nc0;
	memcpy(tmp, pfi->c + nc0, added * sizeof *tmp);
	memmove(pfi->c + added, pfi->c, nc0 * sizeof *pfi->c);
	memcpy(pfi->c, tmp, added * sizeof *tmp);
	pfi->base = at;
}

/* n rounded up to whole requests of opts.max_request (UINT64_MAX when
 * that does not fit). */
static uint64_t whole_requests(const struct nf_remote *r, uint64_t n)
{
	uint64_t m = r->o.max_request, k = n / m + (n % m != 0);
	return k > UINT64_MAX / m ? UINT64_MAX : k * m;
}

/* Chunks wholly behind the reader (less BACKTRACK, for the reads that
 * arrive late) are done with; then windows are queued until [pos, end)
 * is covered (a read that runs ahead of the windows waits for its chunk
 * rather than asking the server itself) and a window more is queued
 * beyond `pos`, the furthest byte read, the window size doubling up to
 * the cap; at the cap, only the whole requests that bring the lead back to
 * one window are queued, so the lead stays near one window rather than
 * swinging between one and two (the peak of one reader's chunks went
 * from 239 to 128 MiB over the 1 GiB bench read, with the drop of a
 * finished range's chunks in stream_read: fewer fresh pages to fault
 * in).  A whole window, not half: a window's chunks are fetched side
 * by side, sharing the link, so the first of them, the one the reader
 * needs next, arrives at a fraction of its speed; with half a window of
 * lead a reader at 20 ms RTT waited for it at every window.  With this
 * and the handoff, a 1 GiB object of a 4-part set, -o direct_io, 20 ms
 * RTT: 624 -> 731 MiB/s (curl 1143), loopback 1173 -> 1414 (curl 1525);
 * buffered 616 -> 652 at 20 ms but 976 -> 913 on loopback, where the
 * larger lead's memory costs CPU (bench/README.md, issue 14).  `size` is
 * the file's (UINT64_MAX: not known yet).  A read beyond the last chunk
 * queued leaves a gap that is not fetched ahead (a reader may skip
 * forward), but in a path range (`in_path`) it is: the view's bytes are
 * all the range's, and one further on arrives first when the kernel's
 * readahead is on several FUSE threads (a gap of 1.2 MB in a part of the
 * decoded model.safetensors of 70,000 small objects, then read as asked,
 * a request per object: 4,630 GETs).  Both locks held. */
static void keep_ahead(struct nf_remote_stream *s, struct pffile *pfi, uint64_t at, uint64_t end,
		       uint64_t size, bool in_path)
{
	struct nf_remote *r = s->r;
	struct nf_rpf *pf = r->pf;
	uint64_t pos = pfi->next, keep = pos > BACKTRACK ? pos - BACKTRACK : 0;
	size_t behind = 0;

	while (behind < pfi->nc && pfi->c[behind]->off + pfi->c[behind]->len <= keep)
		behind++;
	drop_chunks(pf, pfi, behind);
	if (pfi->nc == 0 || (pfi->ahead < at && !in_path))
		pfi->ahead = pfi->ahead > at ? pfi->ahead : at;   /* a gap: start at the read */
	/* (the lead is the last window's size, not the next one's: that one
	 * doubles with each window queued, and the loop would chase it to
	 * the cap at once) */
	while (pfi->ahead < size && (pfi->ahead < end || pfi->ahead - pos < pfi->last)) {
		uint64_t len = pfi->win;
		/* at the cap, only what brings the lead back to a window,
		 * in whole requests: the lead then stays near one window
		 * instead of swinging between one and two */
		if (pfi->last == r->o.prefetch_max && len == pfi->last && pfi->ahead >= end &&
		    pfi->ahead - pos < pfi->last) {
			uint64_t need = whole_requests(r, pfi->last - (pfi->ahead - pos));
			if (need < len)
				len = need;
		}
		if (size != UINT64_MAX && len > size - pfi->ahead)
			len = size - pfi->ahead;
		/* a file whose size no response has told yet: one small window,
		 * which brings it */
		if (size == UINT64_MAX && len > r->o.prefetch_min)
			len = r->o.prefetch_min;
		uint64_t q = queue_window(pf, pfi, pfi->ahead, len);
		if (q == 0)
			break;
		pfi->ahead += q;
		if (len > pfi->last || pfi->last != r->o.prefetch_max)
			pfi->last = len;
		if (pfi->win < r->o.prefetch_max)
			pfi->win = pfi->win * 2 < r->o.prefetch_max ? pfi->win * 2 : r->o.prefetch_max;
		if (q < len)
			break;
	}
}

/* The windows of pfi have reached the end of its path range `x`, and the
 * reader is less than a window (pfi->last) from there: the next range
 * of the path, when in another file, gets its first chunks now (what
 * brings the lead, counted across the boundary, back to one window, in
 * whole requests, at most the window size reached), instead of once the
 * reader is there (which cost
 * the part's first read, at prefetch_min, plus a round trip per window
 * doubling; bench/README.md, issue 14).  Its position is the range's
 * start, so that the reader's first read there is sequential.  s->lock
 * held, not the set's pf->lock. */
static void go_on(struct nf_remote_stream *s, struct pffile *pfi, const struct pfrange *x)
{
	struct nf_remote *r = s->r;
	const struct pfrange *nx = x + 1;
	uint64_t xend = x->offset + x->length;   /* no wrap: nf_remote_stream_path */

	if (nx >= s->path + s->npath || pfi->ahead < xend || pfi->next > xend ||
	    xend - pfi->next >= pfi->last)
		return;
	/* (pfi is the most recent state: file_state evicts another) */
	struct pffile *g = file_state(s, nx->file, (uint32_t)(nx - s->path));
	if (g->next == UINT64_MAX && g->nc == 0) {
		g->next = g->ahead = g->base = nx->offset;
		g->win = pfi->win;
		g->last = pfi->last;
		g->carried = false;
		if (nx->file != pfi->file && s->nreached < sizeof s->reached / sizeof *s->reached) {
			s->reached[s->nreached++] = nx->file;   /* (full: the reader checks it) */
			atomic_store_explicit(&s->any_reached, true, memory_order_relaxed);
		}
	} else if (g->next != nx->offset) {
		return;   /* the reader is there already: its reads keep it fed */
	}
	/* the lead, counted across the boundary, back to one window: what
	 * is left of x beyond the reader, and what g has queued */
	uint64_t lead = xend - pfi->next + (g->ahead - nx->offset);
	if (lead >= pfi->last)
		return;
	uint64_t want = whole_requests(r, pfi->last - lead), size = nf_rfile_known(r, nx->file, NULL);
	if (want > g->win)
		want = g->win;
	if (nx->offset + nx->length < size)
		size = nx->offset + nx->length;
	if (g->ahead >= size)
		return;
	if (want > size - g->ahead)
		want = size - g->ahead;
	pthread_mutex_lock(&r->pf->lock);
	g->ahead += queue_window(r->pf, g, g->ahead, want);
	pthread_mutex_unlock(&r->pf->lock);
}

/* How far into x's view bytes byte `off` of its file is.  In a range
 * joined across gaps, the file distance scaled to its view bytes: the
 * distances along the path are then view bytes, as the kernel's
 * readahead (BACKTRACK) is.  Counted with the gaps, a reader of the
 * decoded model.safetensors of 70,000 objects 256-byte aligned (half
 * their file bytes are gaps) at the view's end seemed more than
 * BACKTRACK past the first range, whose chunks went while the
 * readahead's other threads still read there: 4,600-28,000 GETs. */
static uint64_t view_at(const struct pfrange *x, uint64_t off)
{
	uint64_t d = off - x->offset;   /* off is in x */

	if (x->vlen >= x->length)
		return d;
	return (uint64_t)((unsigned __int128)d * x->vlen / x->length);
}

/* A read at `off` of path range x: the ranges the reader is more than
 * BACKTRACK past, on the path, have no late reads left to come, so
 * their chunks go (they stayed until the stream ended or the file's
 * state was evicted: 16 MiB per part boundary, part of a reader's 239 MiB
 * peak; with parts smaller than BACKTRACK, up to STREAM_FILES parts).
 * (x's own chunks behind the reader are keep_ahead's.)  s->done, the
 * first range not yet let go of, moves on as the reader does.  A
 * sequential read in a range before it, more than LATE_MAX behind the
 * furthest byte read on the path (s->far), is a reader that went back
 * (a second pass over the path on the same open file, or a jump; the
 * kernel's late reads are within its 16 MiB readahead).  What the stream
 * holds for the ranges after x is then of the run before, and goes at
 * once (it stayed until its file's state was evicted: two passes over
 * 2 MiB parts peaked at 33.5 MiB, one at 21); the ranges the reader
 * passes from there are let go of again.  Both locks held. */
static void drop_finished(struct nf_remote_stream *s, const struct pfrange *x, uint64_t off)
{
	uint64_t p = x->pos + view_at(x, off);   /* <= the path's length: no wrap */
	size_t xi = (size_t)(x - s->path);

	if (p > s->far)
		s->far = p;
	if (xi < s->done && s->far - p > LATE_MAX) {
		s->far = p;
		for (int j = 0; j < STREAM_FILES; j++) {
			struct pffile *f = &s->f[j];
			if (f->used && f->range != NO_RANGE && f->range > xi) {
				drop_chunks(s->r->pf, f, f->nc);
				f->used = false;
			}
		}
		s->done = xi;
	}
	for (; s->done < xi; s->done++) {
		const struct pfrange *d = &s->path[s->done];
		uint64_t past = p - d->pos;   /* d is before x: d->pos <= p */
		if (past <= d->vlen || past - d->vlen <= BACKTRACK)
			break;
		for (int j = 0; j < STREAM_FILES; j++)
			if (s->f[j].used && s->f[j].range == s->done)
				drop_chunks(s->r->pf, &s->f[j], s->f[j].nc);
	}
}

/* The chunks that hold [at, end), in order, each with a reference taken
 * (at most max; they are contiguous from `at`); pf->lock held. */
static size_t take_chunks(struct pffile *pfi, uint64_t at, uint64_t end, struct pfchunk **out,
			  size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < pfi->nc && at < end && k < max; i++) {
		struct pfchunk *c = pfi->c[i];
		if (c->off + c->len <= at)
			continue;
		if (c->off > at)
			break;
		c->refs++;
		c->readers++;
		out[k++] = c;
		at = c->off + c->len;
	}
	return k;
}

/* Where a read's bytes from chunks go: copied into the io's buffer, or,
 * with refs (nf_remote_stream_read_ref), left in the chunk and named by a
 * ref, the chunk then held by the thread (t->held) until
 * nf_remote_release. */
struct pfout {
	struct nf_remote_thread *t;
	struct nf_remote_ref *refs;   /* NULL: copy everything */
	size_t cap, n;
};

/* Holds c for out->t (its reference moves there) and names
 * [dst, dst + len) as c's bytes at src; false (nothing done) when there
 * is no room: the bytes are then copied.  pf->lock held. */
static bool hand_out(struct pfout *out, struct pfchunk *c, char *dst, const char *src,
		     uint64_t len)
{
	struct nf_remote_thread *t = out->t;

	if (out->refs == NULL || out->n >= out->cap)
		return false;
	if (t->nheld == t->heldcap) {
		size_t cap = t->heldcap ? t->heldcap * 2 : 16;
		struct pfchunk **h = cap <= SIZE_MAX / sizeof *h ? realloc(t->held, cap * sizeof *h) : NULL;
		if (h == NULL)
			return false;
		t->held = h;
		t->heldcap = cap;
	}
	t->held[t->nheld++] = c;
	out->refs[out->n++] = (struct nf_remote_ref){.dst = dst, .src = src, .len = (size_t)len};
	return true;
}

/* Takes what the chunks hold of [at, end) for dst (copied, or handed out
 * by reference: struct pfout), waiting for bytes still on their way (the
 * worker's requests are bounded in time, so is this wait), and drops the
 * references not handed out; returns the bytes taken from `at` on (a
 * prefix: stops at the first failed chunk).  No stream lock is held:
 * other reads of the stream go on meanwhile. */
static uint64_t take_from_chunks(struct nf_rpf *pf, struct pfchunk **cs, size_t k, uint64_t at,
				 uint64_t end, char *dst, struct pfout *out)
{
	uint64_t start = at;
	bool ok = true;

	pthread_mutex_lock(&pf->lock);
	for (size_t i = 0; i < k; i++) {
		struct pfchunk *c = cs[i];
		bool held = false;
		if (ok && at < end && c->off <= at) {
			uint64_t in = at - c->off, want = c->len - in;
			if (want > end - at)
				want = end - at;
			while (c->state != PF_DONE && c->filled < in + want && !c->cancelled) {
				if (c->need == 0 || c->need > in + want)
					c->need = in + want;
				c->waiters++;
				pthread_cond_wait(&c->cv, &pf->lock);
				c->waiters--;
			}
			if (c->filled < in + want) {
				ok = false;   /* failed or cancelled: the rest goes direct */
			} else {
				/* those bytes are in and stay (we hold a reference;
				 * the worker only writes beyond `filled`) */
				held = hand_out(out, c, dst, c->buf + in, want);
				if (!held) {
					pthread_mutex_unlock(&pf->lock);
					memcpy(dst, c->buf + in, want);
					pthread_mutex_lock(&pf->lock);
				}
				dst += want;
				at += want;
			}
		}
		c->readers--;
		if (!held)
			chunk_put(c);
	}
	pthread_mutex_unlock(&pf->lock);
	return at - start;
}

uint64_t nf_remote_prefetch_peak(struct nf_remote *r)
{
	uint64_t peak;

	pthread_mutex_lock(&r->pf->lock);
	peak = r->pf->peak;
	pthread_mutex_unlock(&r->pf->lock);
	return peak;
}

void nf_remote_release(struct nf_remote_thread *t)
{
	struct nf_rpf *pf = t->r->pf;

	if (t->nheld == 0)
		return;
	pthread_mutex_lock(&pf->lock);
	while (t->nheld > 0)
		chunk_put(t->held[--t->nheld]);
	pthread_mutex_unlock(&pf->lock);
}

static int stream_read(struct nf_remote_thread *t, struct nf_remote_stream *s, struct nf_io *ios,
		       size_t n, struct pfout *out)
{
	struct nf_remote *r = t->r;
	struct nf_io *rest;
	size_t *from, nrest = 0;
	int rc = 0;

	if (r->cache || r->o.prefetch_mem == 0)
		return nf_remote_read(t, ios, n);
	rest = calloc(n ? n : 1, sizeof *rest);
	from = calloc(n ? n : 1, sizeof *from);
	if (rest == NULL || from == NULL) {
		free(rest);
		free(from);
		return nf_remote_read(t, ios, n);
	}
	for (size_t i = 0; i < n; i++) {
		struct nf_io *io = &ios[i];
		struct pfchunk *cs[READ_CHUNKS];
		uint64_t end, got = 0;
		size_t k = 0;
		io->result = 0;
		if (io->file >= r->nfiles || io->length == 0 || io->dst == NULL ||
		    __builtin_add_overflow(io->offset, io->length, &end)) {
			from[nrest] = i;
			rest[nrest++] = *io;   /* nf_remote_read gives the verdict */
			continue;
		}
		pthread_mutex_lock(&s->lock);
		const struct pfrange *in = path_range(s, io->file, io->offset), *x = NULL;
		struct pffile *pfi = file_state(s, io->file, in ? (uint32_t)(in - s->path) : NO_RANGE);
		pthread_mutex_lock(&r->pf->lock);
		enum pfpos where = position(pfi, io->offset, pfi->win);
		if (where == PF_LATE) {
			k = take_chunks(pfi, io->offset, end, cs, READ_CHUNKS);
		} else if (where == PF_OTHER) {
			/* not sequential: forget the windows, start small again
			 * (or, the first read of a continuation, at the size
			 * carried over) */
			drop_chunks(r->pf, pfi, pfi->nc);
			if (!pfi->carried)
				pfi->win = r->o.prefetch_min;
			pfi->carried = false;
			pfi->last = 0;
			pfi->ahead = end;
			pfi->next = end;
			pfi->base = io->offset;
		} else {
			if (end > pfi->next)
				pfi->next = end;
			uint64_t size = nf_rfile_known(r, io->file, NULL);
			/* with a path, no window goes beyond the range the read
			 * is in (the view's bytes end there, in this file) */
			if ((x = in) != NULL) {
				if (x->offset + x->length < size)
					size = x->offset + x->length;
			} else if (size != UINT64_MAX && end >= size) {
				s->handoff = true;
				s->handoff_file = io->file;
				s->handoff_win = pfi->win;
			}
			if (io->offset < pfi->base)
				fill_behind(r->pf, pfi, io->offset);
			keep_ahead(s, pfi, io->offset, end, size, x != NULL);
			k = take_chunks(pfi, io->offset, end, cs, READ_CHUNKS);
		}
		if (x)
			drop_finished(s, x, io->offset);
		pthread_mutex_unlock(&r->pf->lock);
		if (x)
			go_on(s, pfi, x);
		pthread_mutex_unlock(&s->lock);
		if (k > 0) {
			got = take_from_chunks(r->pf, cs, k, io->offset, end, io->dst, out);
			if (got) {
				pthread_mutex_lock(&r->lock);
				r->files[io->file].st.prefetch_hits += got;
				pthread_mutex_unlock(&r->lock);
			}
		}
		if (got < io->length) {
			from[nrest] = i;
			rest[nrest++] = (struct nf_io){.file = io->file, .offset = io->offset + got,
						       .length = io->length - got,
						       .dst = (char *)io->dst + got};
		}
	}
	if (nrest)
		nf_remote_read(t, rest, nrest);
	for (size_t k = 0; k < nrest; k++)
		ios[from[k]].result = rest[k].result;
	for (size_t i = 0; i < n; i++)
		if (ios[i].result < 0 && rc == 0)
			rc = ios[i].result;
	free(rest);
	free(from);
	return rc;
}

int nf_remote_stream_read(struct nf_remote_thread *t, struct nf_remote_stream *s,
			  struct nf_io *ios, size_t n)
{
	struct pfout out = {.t = t};

	return stream_read(t, s, ios, n, &out);
}

int nf_remote_stream_read_ref(struct nf_remote_thread *t, struct nf_remote_stream *s,
			      struct nf_io *ios, size_t n, struct nf_remote_ref *refs, size_t cap,
			      size_t *nrefs)
{
	struct pfout out = {.t = t, .refs = refs, .cap = cap};
	int rc = stream_read(t, s, ios, n, &out);

	*nrefs = out.n;
	return rc;
}
