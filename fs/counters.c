/* fs/counters.c — the read counters of the stats document, kept per worker
 * thread (issue 15: no lock or shared cache line between worker threads on
 * the read path).
 *
 * Every worker thread counts into its own struct nf_counts (part of its
 * struct nf_thread, allocated on its own cache lines), written by that
 * thread only, with relaxed atomic loads and stores: no locked
 * instruction, no line that another worker writes.  The stats document
 * sums them: the live threads, found on fs->threads, plus what the threads
 * that have ended counted (folded into fs->gone when they end).  The list
 * and fs->gone are guarded by fs->threads_lock, which a worker takes only
 * when it starts and ends, never on a read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/context.h"

/* The bucket of a request of `size` bytes: 0 for <= 4 KiB, k for
 * (2^(11+k), 2^(12+k)], the last for anything above 1 MiB. */
unsigned nf_size_bucket(size_t size)
{
	unsigned b = 0;

	while (b + 1 < NF_SIZE_BUCKETS && size > ((size_t)4096 << b))
		b++;
	return b;
}

static void add_counts(struct nf_counts *to, const struct nf_counts *from, uint32_t nfiles)
{
	nf_count(&to->reads, atomic_load_explicit(&from->reads, memory_order_relaxed));
	nf_count(&to->bytes, atomic_load_explicit(&from->bytes, memory_order_relaxed));
	nf_count(&to->errors, atomic_load_explicit(&from->errors, memory_order_relaxed));
	for (unsigned k = 0; k < NF_ENGINE_STATS_MAX; k++)
		nf_count(&to->engine[k],
			 atomic_load_explicit(&from->engine[k], memory_order_relaxed));
	for (unsigned k = 0; k < NF_SIZE_BUCKETS; k++)
		nf_count(&to->sizes[k], atomic_load_explicit(&from->sizes[k], memory_order_relaxed));
	for (uint32_t f = 0; to->files && from->files && f < nfiles; f++) {
		nf_count(&to->files[f].reads,
			 atomic_load_explicit(&from->files[f].reads, memory_order_relaxed));
		nf_count(&to->files[f].bytes,
			 atomic_load_explicit(&from->files[f].bytes, memory_order_relaxed));
		nf_count(&to->files[f].errors,
			 atomic_load_explicit(&from->files[f].errors, memory_order_relaxed));
	}
}

int nf_counters_init(struct nf_fs *fs)
{
	fs->gone.files = calloc(fs->set.n ? fs->set.n : 1, sizeof *fs->gone.files);
	if (fs->gone.files == NULL)
		return -ENOMEM;
	if (pthread_mutex_init(&fs->threads_lock, NULL) != 0) {
		free(fs->gone.files);
		fs->gone.files = NULL;
		return -ENOMEM;
	}
	fs->counters_made = true;
	return 0;
}

void nf_counters_free(struct nf_fs *fs)
{
	if (!fs->counters_made)
		return;
	pthread_mutex_destroy(&fs->threads_lock);
	free(fs->gone.files);
	fs->gone.files = NULL;
	fs->counters_made = false;
}

int nf_counters_join(struct nf_fs *fs, struct nf_thread *th)
{
	th->c.files = calloc(fs->set.n ? fs->set.n : 1, sizeof *th->c.files);
	if (th->c.files == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&fs->threads_lock);
	th->next = fs->threads;
	th->prev = NULL;
	if (fs->threads)
		fs->threads->prev = th;
	fs->threads = th;
	pthread_mutex_unlock(&fs->threads_lock);
	th->joined = true;
	return 0;
}

void nf_counters_leave(struct nf_fs *fs, struct nf_thread *th)
{
	if (th->joined) {
		pthread_mutex_lock(&fs->threads_lock);
		add_counts(&fs->gone, &th->c, fs->set.n);
		if (th->prev)
			th->prev->next = th->next;
		else
			fs->threads = th->next;
		if (th->next)
			th->next->prev = th->prev;
		pthread_mutex_unlock(&fs->threads_lock);
		th->joined = false;
	}
	free(th->c.files);
	th->c.files = NULL;
}

int nf_counters_sum(struct nf_fs *fs, struct nf_counts *out)
{
	memset(out, 0, sizeof *out);
	out->files = calloc(fs->set.n ? fs->set.n : 1, sizeof *out->files);
	if (out->files == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&fs->threads_lock);
	add_counts(out, &fs->gone, fs->set.n);
	for (const struct nf_thread *th = fs->threads; th; th = th->next)
		add_counts(out, &th->c, fs->set.n);
	pthread_mutex_unlock(&fs->threads_lock);
	return 0;
}
