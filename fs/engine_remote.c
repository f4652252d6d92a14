/* fs/engine_remote.c — the remote engine behind fs/engine.h: the segments
 * of one FUSE request fetched with HTTP range GETs by remote/ (issue 14).
 *
 * A thin adapter.  Each worker thread has its own nf_remote_thread (a curl
 * multi handle and its connections, as a ring per thread for io_uring);
 * each open file of a view read through the engine has its own
 * nf_remote_stream, the sequential-read detector whose fetch-ahead windows
 * grow from prefetch_min to prefetch_max (remote/prefetch.c), so that one
 * reader's sequential reads of a big object run on large requests ahead
 * of it while a random reader gets exactly the ranges it asks for.  All
 * segments of a request go to remote/ in one call (merged into runs,
 * several in flight).  A FUSE reply of a PIECES or FILE view is written
 * straight from the prefetched chunks that hold its bytes (read_ref:
 * readpath.c asks, remote/prefetch.c holds the chunks until release), so
 * a sequential read costs one user-space copy (curl's buffer -> chunk),
 * not two.
 *
 * The files' rules stay the family's: before a file is read the first
 * time, the set's verify checks it (for an NInfer part: its 32-byte
 * header, seed §3.2, one request), and every later read asks it again
 * (no request: a file found bad or changed fails at once); after a failed
 * read verify takes what the engine found (an ETag that changed: the file
 * becomes bad, FILE_CHANGED, contract §5, and the watch drops the kernel's
 * pages of the views on it).  A part that an open view's stream fetches
 * ahead into (its path: stream_path) is checked then, on the engine's
 * checker thread, so that the reader's first read there does not wait a
 * round trip for the header (struct checker).  The engine holds no
 * descriptor: acquire is never called. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/context.h"
#include "remote/remote.h"

/* A stream, linked so that what the kernel never released (a session
 * ended by a signal) is freed at close, before the set goes. */
struct rstream {
	struct rstream *prev, *next;
	struct nf_remote_stream *s;
};

/* Files to check ahead of their readers, and the one thread that does
 * it (started on first use, joined at close).  The set's verify is
 * thread-safe and checks a file once: a reader that gets there first
 * checks it itself, one that comes while the checker is at it waits for
 * that check.  A full queue drops the request (the reader then checks). */
#define CHECK_QUEUE 16

struct checker {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	pthread_t th;
	bool started, stop;
	uint32_t q[CHECK_QUEUE];
	unsigned head, n;
};

struct rengine {
	const struct nf_set *set;
	struct nf_remote *r;
	pthread_mutex_t lock;    /* streams */
	struct rstream *streams;
	struct checker ck;
};

struct rthread {
	struct rengine *e;
	struct nf_remote_thread *t;
	uint64_t reads, segments, stream_reads;
	uint64_t ref_bytes;         /* bytes read_ref left in prefetched chunks */
	uint64_t checks_ahead;      /* files this thread's reads queued for check_ahead */
	struct nf_remote_ref *rr;   /* read_ref's refs, as remote/ gives them */
	size_t rrcap;
};

static const char *const stat_names[] = {"remote_reads", "remote_segments", "stream_reads",
					 "ref_bytes", "checks_ahead"};

static int remote_thread_new(void *engine, void **out)
{
	struct rengine *e = engine;
	struct rthread *th = calloc(1, sizeof *th);
	int rc;

	if (th == NULL)
		return -ENOMEM;
	th->e = e;
	rc = nf_remote_thread_new(e->r, &th->t);
	if (rc < 0) {
		free(th);
		return rc;
	}
	*out = th;
	return 0;
}

static void remote_thread_free(void *p)
{
	struct rthread *th = p;

	if (th == NULL)
		return;
	nf_remote_thread_free(th->t);
	free(th->rr);
	free(th);
}

/* The file's verdict before a read: 0 when it may be read. */
static int ready(const struct nf_set *set, uint32_t f)
{
	return f < set->n ? set->ops->verify(set->arg, f) : -EBADF;
}

static void *checker_main(void *arg)
{
	struct rengine *e = arg;
	struct checker *ck = &e->ck;

	pthread_mutex_lock(&ck->lock);
	for (;;) {
		while (!ck->stop && ck->n == 0)
			pthread_cond_wait(&ck->cv, &ck->lock);
		if (ck->stop)
			break;
		uint32_t f = ck->q[ck->head];
		ck->head = (ck->head + 1) % CHECK_QUEUE;
		ck->n--;
		pthread_mutex_unlock(&ck->lock);
		(void)ready(e->set, f);   /* its verdict is the file's status */
		pthread_mutex_lock(&ck->lock);
	}
	pthread_mutex_unlock(&ck->lock);
	return NULL;
}

/* File f is to be read soon: checked on the checker thread.  True when
 * queued. */
static bool check_ahead(struct rengine *e, uint32_t f)
{
	struct checker *ck = &e->ck;
	bool queued = false;

	pthread_mutex_lock(&ck->lock);
	if (!ck->started && !ck->stop)
		ck->started = pthread_create(&ck->th, NULL, checker_main, e) == 0;
	if (ck->started && !ck->stop && ck->n < CHECK_QUEUE) {
		ck->q[(ck->head + ck->n) % CHECK_QUEUE] = f;
		ck->n++;
		pthread_cond_signal(&ck->cv);
		queued = true;
	}
	pthread_mutex_unlock(&ck->lock);
	return queued;
}

static void checker_stop(struct checker *ck)
{
	pthread_mutex_lock(&ck->lock);
	ck->stop = true;
	pthread_cond_signal(&ck->cv);
	pthread_mutex_unlock(&ck->lock);
	if (ck->started)
		pthread_join(ck->th, NULL);
	pthread_cond_destroy(&ck->cv);
	pthread_mutex_destroy(&ck->lock);
}

/* Room for cap refs in th->rr (remote.h's own type: remote/ knows
 * nothing of fs/); false when it cannot grow (the read then copies). */
static bool refs_room(struct rthread *th, size_t cap)
{
	struct nf_remote_ref *rr;

	if (cap <= th->rrcap)
		return true;
	if (cap > SIZE_MAX / sizeof *rr || (rr = realloc(th->rr, cap * sizeof *rr)) == NULL)
		return false;
	th->rr = rr;
	th->rrcap = cap;
	return true;
}

/* One FUSE request's read, copied into the ios' buffers or, with refs
 * (read_ref), partly left in the stream's prefetched chunks. */
static int read_some(struct rthread *th, struct rstream *rs, struct nf_io *ios, size_t n,
		     struct nf_engine_ref *refs, size_t cap, size_t *nrefs)
{
	const struct nf_set *set = th->e->set;
	int rc = 0;

	/* every file of the request checked first (segments come sorted by
	 * the map, so a file's segments are adjacent: one verify each) */
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && ios[i].file == ios[i - 1].file) {
			ios[i].result = ios[i - 1].result;
			continue;
		}
		ios[i].result = ready(set, ios[i].file);
		if (ios[i].result < 0 && rc == 0)
			rc = ios[i].result;
	}
	if (rc < 0) {
		for (size_t i = 0; i < n; i++)
			if (ios[i].result == 0)
				ios[i].result = -ECANCELED;
		return rc;
	}
	th->reads++;
	th->segments += n;
	if (rs && refs && refs_room(th, cap)) {
		th->stream_reads++;
		rc = nf_remote_stream_read_ref(th->t, rs->s, ios, n, th->rr, cap, nrefs);
		for (size_t i = 0; i < *nrefs; i++) {
			refs[i] = (struct nf_engine_ref){.dst = th->rr[i].dst, .src = th->rr[i].src,
							 .len = th->rr[i].len};
			th->ref_bytes += th->rr[i].len;
		}
	} else if (rs) {
		th->stream_reads++;
		rc = nf_remote_stream_read(th->t, rs->s, ios, n);
	} else {
		rc = nf_remote_read(th->t, ios, n);
	}
	for (uint32_t f; rs && (f = nf_remote_stream_reached(rs->s)) != UINT32_MAX;)
		if (check_ahead(th->e, f))
			th->checks_ahead++;
	if (rc == 0)
		return 0;
	/* what the engine found goes into the file's status (a changed
	 * object is bad from now on: later reads fail without a request) */
	for (size_t i = 0; i < n; i++)
		if (ios[i].result < 0 && ios[i].result != -ECANCELED &&
		    (i == 0 || ios[i].file != ios[i - 1].file))
			(void)ready(set, ios[i].file);
	return rc;
}

static int remote_read(void *p, void *stream, struct nf_io *ios, size_t n)
{
	return read_some(p, stream, ios, n, NULL, 0, NULL);
}

static int remote_read_ref(void *p, void *stream, struct nf_io *ios, size_t n,
			   struct nf_engine_ref *refs, size_t cap, size_t *nrefs)
{
	*nrefs = 0;
	return read_some(p, stream, ios, n, refs, cap, nrefs);
}

static void remote_release(void *p)
{
	struct rthread *th = p;

	nf_remote_release(th->t);
}

static void remote_stats(const void *p, uint64_t *out)
{
	const struct rthread *th = p;

	out[0] = th->reads;
	out[1] = th->segments;
	out[2] = th->stream_reads;
	out[3] = th->ref_bytes;
	out[4] = th->checks_ahead;
}

static int remote_stream_new(void *engine, void **out)
{
	struct rengine *e = engine;
	struct rstream *rs = calloc(1, sizeof *rs);
	int rc;

	if (rs == NULL)
		return -ENOMEM;
	rc = nf_remote_stream_new(e->r, &rs->s);
	if (rc < 0) {
		free(rs);
		return rc;
	}
	pthread_mutex_lock(&e->lock);
	rs->next = e->streams;
	if (e->streams)
		e->streams->prev = rs;
	e->streams = rs;
	pthread_mutex_unlock(&e->lock);
	*out = rs;
	return 0;
}

static void remote_stream_free(void *engine, void *stream)
{
	struct rengine *e = engine;
	struct rstream *rs = stream;

	if (rs == NULL)
		return;
	pthread_mutex_lock(&e->lock);
	if (rs->prev)
		rs->prev->next = rs->next;
	else
		e->streams = rs->next;
	if (rs->next)
		rs->next->prev = rs->prev;
	pthread_mutex_unlock(&e->lock);
	nf_remote_stream_free(rs->s);
	free(rs);
}

static void remote_stream_path(void *engine, void *stream, const struct nf_io *ranges, size_t n)
{
	struct rstream *rs = stream;

	(void)engine;
	nf_remote_stream_path(rs->s, ranges, n);
}

static int remote_file_stats(void *engine, uint32_t i, struct nf_engine_file_stats *out)
{
	struct rengine *e = engine;
	struct nf_remote_file_stats st;
	int rc = nf_remote_file_stats(e->r, i, &st);

	if (rc < 0)
		return rc;
	memset(out, 0, sizeof *out);
	out->url = st.url;
	out->status = nf_remote_status_name(st.status);
	out->http_status = st.http_status;
	snprintf(out->buf, sizeof out->buf, "%s", st.reason);
	out->reason = out->buf;
	out->bytes_fetched = st.bytes_fetched;
	out->requests = st.requests;
	out->retries = st.retries;
	out->cache_hits = st.cache_hits;
	out->cache_misses = st.cache_misses;
	out->prefetch_hits = st.prefetch_hits;
	out->prefetch_bytes = st.prefetch_bytes;
	return 0;
}

static void remote_close(void *engine)
{
	struct rengine *e = engine;

	checker_stop(&e->ck);
	while (e->streams)
		remote_stream_free(e, e->streams);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

static const struct nf_engine_ops remote_ops = {
	.name = "remote",
	.nstats = 5,
	.stat_names = stat_names,
	.thread_new = remote_thread_new,
	.thread_free = remote_thread_free,
	.read = remote_read,
	.stats = remote_stats,
	.close = remote_close,
	.stream_new = remote_stream_new,
	.stream_free = remote_stream_free,
	.stream_path = remote_stream_path,
	.read_ref = remote_read_ref,
	.release = remote_release,
	.file_stats = remote_file_stats,
};

int nf_engine_remote_open(struct nf_engine *out, struct nf_fs *fs)
{
	struct rengine *e;

	if (fs->set.remote == NULL)
		return -EINVAL;
	e = calloc(1, sizeof *e);
	if (e == NULL)
		return -ENOMEM;
	e->set = &fs->set;
	e->r = fs->set.remote;
	pthread_mutex_init(&e->lock, NULL);
	pthread_mutex_init(&e->ck.lock, NULL);
	pthread_cond_init(&e->ck.cv, NULL);
	*out = (struct nf_engine){.ops = &remote_ops, .state = e, .fixed_files = false};
	return 0;
}
