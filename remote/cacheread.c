/* remote/cacheread.c — nf_remote_read() through the block cache.
 *
 * The segments are cut into aligned blocks.  Each block is looked up in
 * the cache (verified there); the blocks that miss are fetched (touching
 * missing blocks of one file in one range GET, at most opts.max_request),
 * stored, and copied out.  A file needs its validator first, so a file
 * not yet seen costs one HEAD; after that a fully cached read makes no
 * request at all.  A file with no ETag and no Last-Modified is read
 * around the cache: its blocks could never be told apart from a changed
 * object's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "remote/internal.h"

struct blk {
	uint32_t file;
	uint64_t block;
	uint64_t len;
	char *buf;
	int result;   /* 0 ready, -errno */
	bool hit;
};

struct blkrun {          /* sink over consecutive blocks of one file */
	struct blk *b;
	size_t n;
};

static int run_sink(void *ctx, uint64_t pos, const void *p, size_t n)
{
	struct blkrun *r = ctx;
	const char *src = p;
	while (n > 0) {
		size_t i = (size_t)(pos / NF_RCACHE_BLOCK);
		uint64_t in = pos % NF_RCACHE_BLOCK, k;
		if (i >= r->n)
			return -1;
		k = r->b[i].len - in;
		if (k > n)
			k = n;
		memcpy(r->b[i].buf + in, src, k);
		src += k;
		pos += k;
		n -= k;
	}
	return 0;
}

static int by_file_block(const void *a, const void *b)
{
	const struct blk *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->block < y->block ? -1 : x->block > y->block;
}

static struct blk *find(struct blk *bs, size_t n, uint32_t file, uint64_t block)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (bs[mid].file < file || (bs[mid].file == file && bs[mid].block < block))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && bs[lo].file == file && bs[lo].block == block ? &bs[lo] : NULL;
}

/* Fetches the missing blocks, consecutive ones of a file in one request. */
static void fetch_missing(struct nf_remote_thread *t, struct blk *bs, size_t n)
{
	struct nf_remote *r = t->r;
	size_t per = (size_t)(r->o.max_request / NF_RCACHE_BLOCK) ? (size_t)(r->o.max_request / NF_RCACHE_BLOCK) : 1;
	struct nf_rreq *reqs = calloc(n ? n : 1, sizeof *reqs);
	struct blkrun *runs = calloc(n ? n : 1, sizeof *runs);
	size_t nq = 0;

	if (reqs == NULL || runs == NULL) {
		for (size_t i = 0; i < n; i++)
			if (!bs[i].hit)
				bs[i].result = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n;) {
		if (bs[i].hit || bs[i].result < 0) {
			i++;
			continue;
		}
		size_t j = i + 1;
		uint64_t len = bs[i].len;
		while (j < n && j - i < per && !bs[j].hit && bs[j].result == 0 &&
		       bs[j].file == bs[i].file && bs[j].block == bs[j - 1].block + 1)
			len += bs[j++].len;
		runs[nq] = (struct blkrun){.b = &bs[i], .n = j - i};
		reqs[nq] = (struct nf_rreq){.file = bs[i].file, .off = bs[i].block * NF_RCACHE_BLOCK,
					    .len = len, .sink = run_sink, .ctx = &runs[nq]};
		nq++;
		i = j;
	}
	nf_rhttp_run(t, reqs, nq);
	for (size_t q = 0; q < nq; q++) {
		for (size_t k = 0; k < runs[q].n; k++) {
			struct blk *b = &runs[q].b[k];
			char etag[128];
			b->result = reqs[q].result;
			if (b->result < 0)
				continue;
			/* stored under the validator the response was checked against */
			nf_rfile_known(r, b->file, etag);
			if (etag[0])
				nf_rcache_put(r->cache, b->file, b->block, etag, b->buf, b->len);
		}
	}
out:
	free(reqs);
	free(runs);
}

int nf_rread_cached(struct nf_remote_thread *t, struct nf_io *ios, size_t n)
{
	struct nf_remote *r = t->r;
	struct blk *bs = NULL;
	size_t nb = 0, cap = 0;
	int rc = 0;

	/* every file touched needs its size and validator */
	for (size_t i = 0; i < n; i++) {
		struct nf_remote_stat st;
		ios[i].result = 0;
		if (ios[i].file >= r->nfiles) {
			ios[i].result = -EBADF;
			continue;
		}
		if (ios[i].length == 0)
			continue;
		uint64_t end;
		if (ios[i].dst == NULL || __builtin_add_overflow(ios[i].offset, ios[i].length, &end)) {
			ios[i].result = -EINVAL;
			continue;
		}
		int s = nf_remote_stat(t, ios[i].file, &st);
		if (s < 0) {
			ios[i].result = s;
			continue;
		}
		if (!st.etag[0] && !st.lastmod[0]) {
			ios[i].result = nf_rread_direct(t, &ios[i], 1);
			continue;
		}
		if (end > st.size) {
			ios[i].result = -EIO;
			nf_rfile_note(r, ios[i].file, "read past the end of the %lu-byte object",
				      (unsigned long)st.size);
			continue;
		}
		uint64_t b0 = ios[i].offset / NF_RCACHE_BLOCK, b1 = (end - 1) / NF_RCACHE_BLOCK;
		for (uint64_t b = b0; b <= b1; b++) {
			if (nb == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct blk *x = realloc(bs, nc * sizeof *bs);
				if (x == NULL) {
					rc = -ENOMEM;
					goto out;
				}
				bs = x;
				cap = nc;
			}
			uint64_t boff = b * NF_RCACHE_BLOCK;
			bs[nb++] = (struct blk){.file = ios[i].file, .block = b,
						.len = st.size - boff < NF_RCACHE_BLOCK ? st.size - boff
											 : NF_RCACHE_BLOCK};
		}
	}
	if (nb > 1)   /* bs is NULL when every segment failed its stat */
		qsort(bs, nb, sizeof *bs, by_file_block);
	size_t u = 0; /* drop duplicates */
	for (size_t i = 0; i < nb; i++)
		if (u == 0 || by_file_block(&bs[u - 1], &bs[i]) != 0)
			bs[u++] = bs[i];
	nb = u;
	for (size_t i = 0; i < nb; i++) {
		char etag[128];
		bs[i].buf = malloc(bs[i].len);
		if (bs[i].buf == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		nf_rfile_known(r, bs[i].file, etag);
		bs[i].hit = nf_rcache_get(r->cache, bs[i].file, bs[i].block, etag, bs[i].buf,
					  bs[i].len) == 0;
		pthread_mutex_lock(&r->lock);
		if (bs[i].hit)
			r->files[bs[i].file].st.cache_hits++;
		else
			r->files[bs[i].file].st.cache_misses++;
		pthread_mutex_unlock(&r->lock);
	}
	fetch_missing(t, bs, nb);
	for (size_t i = 0; i < n; i++) {
		struct nf_io *io = &ios[i];
		if (io->result < 0 || io->length == 0 || io->file >= r->nfiles)
			continue;
		struct blk *first = find(bs, nb, io->file, io->offset / NF_RCACHE_BLOCK);
		if (first == NULL) /* served around the cache */
			continue;
		uint64_t at = io->offset, end = io->offset + io->length;
		for (struct blk *b = first; at < end; b++) {
			uint64_t in = at - b->block * NF_RCACHE_BLOCK, k = b->len - in;
			if (b->result < 0) {
				io->result = b->result;
				break;
			}
			if (k > end - at)
				k = end - at;
			memcpy((char *)io->dst + (at - io->offset), b->buf + in, k);
			at += k;
		}
	}
out:
	for (size_t i = 0; i < nb; i++)
		free(bs[i].buf);
	free(bs);
	if (rc < 0) {
		for (size_t i = 0; i < n; i++)
			if (ios[i].result == 0)
				ios[i].result = rc;
		return rc;
	}
	for (size_t i = 0; i < n; i++)
		if (ios[i].result < 0)
			return ios[i].result;
	return 0;
}
