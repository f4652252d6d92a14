/* calbin/jobs.c — the work that reads whole files: command dumps (§7.2)
 * and SHA-256 digests (§9 Gate A).
 *
 * These are the package's big reads (444,610-command dumps, 9 GB parameter
 * blocks), independent of one another, so they run on opt->threads workers
 * (2 by default: the machine's cores), the largest first so the two
 * parameter blocks are hashed at once.  A dump that must also be hashed is
 * hashed in the same pass.  Each job reports into its own list; the lists
 * are merged in file order afterwards. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calbin/internal.h"

struct job {
	size_t file;
	struct cb_commands *cmd;  /* a dump to parse, or NULL */
	bool hash;
	uint64_t cost;
	struct nf_report r;
	char sha256[65];
	int rc;
};

struct pool {
	const struct cb_package *p;
	const struct cb_options *opt;
	struct job *jobs;
	size_t njobs;
	atomic_size_t next;
	pthread_mutex_t lock;
	uint64_t done, total;
};

static void tick(void *arg, uint64_t n)
{
	struct pool *pl = arg;
	if (!pl->opt || !pl->opt->progress)
		return;
	pthread_mutex_lock(&pl->lock);
	pl->done += n;
	pl->opt->progress(pl->opt->progress_arg, pl->done, pl->total);
	pthread_mutex_unlock(&pl->lock);
}

static void run_job(struct pool *pl, struct job *j)
{
	const struct cb_file *f = &pl->p->files[j->file];
	if (j->cmd) {
		struct cb_sha256 *h = j->hash ? cb_sha256_new() : NULL;
		uint64_t bytes = 0;
		if (j->hash && !h) {
			j->r.oom = true;
			return;
		}
		cb_commands_parse(pl->p, j->cmd, &j->r, h, &bytes);
		if (h) {
			if (bytes == f->size && cb_sha256_final(h, j->sha256))
				j->rc = 0;
			else
				j->rc = -EIO, j->sha256[0] = '\0';
			if (bytes != f->size)
				cb_sha256_free(h);
			tick(pl, bytes);
		}
		return;
	}
	int fd = cb_open_index(pl->p, j->file);
	if (fd < 0) {
		j->rc = fd;
		return;
	}
	j->rc = cb_hash_fd(fd, j->sha256, tick, pl);
	close(fd);
}

static void *worker(void *arg)
{
	struct pool *pl = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&pl->next, 1);
		if (i >= pl->njobs)
			return NULL;
		run_job(pl, &pl->jobs[i]);
	}
}

static int by_cost(const void *a, const void *b)
{
	const struct job *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

static int by_file(const void *a, const void *b)
{
	const struct job *x = a, *y = b;
	return x->file < y->file ? -1 : x->file > y->file;
}

/* Does files[i] need a digest this run? */
static bool wants_hash(const struct cb_package *p, size_t i)
{
	const struct cb_file *f = &p->files[i];
	if (!S_ISREG(f->type) || f->escapes || (int)i == p->sums_index)
		return false;
	if (p->hash_all)
		return true;
	if (f->size > CB_FAST_HASH_LIMIT)
		return false;
	return f->sums_line || f->kind == CB_KIND_ONNX;
}

void cb_run_jobs(struct cb_build *b)
{
	struct cb_package *p = b->p;
	size_t n = 0;
	for (size_t s = 0; s < p->nsubmodels; s++)
		n += p->submodels[s].ncommands;
	for (size_t i = 0; i < p->nfiles; i++)
		if (wants_hash(p, i) && p->files[i].kind != CB_KIND_CMD_TEXT)
			n++;
	if (!n)
		return;
	struct pool pl = {.p = p, .opt = b->opt, .jobs = calloc(n, sizeof *pl.jobs)};
	if (!pl.jobs) {
		b->r->oom = true;
		return;
	}
	for (size_t s = 0; s < p->nsubmodels; s++)
		for (size_t c = 0; c < p->submodels[s].ncommands; c++) {
			struct cb_commands *cmd = &p->submodels[s].commands[c];
			struct job *j = &pl.jobs[pl.njobs++];
			j->file = (size_t)cmd->file_index;
			j->cmd = cmd;
			j->hash = wants_hash(p, j->file);
			j->cost = p->files[j->file].size;
		}
	for (size_t i = 0; i < p->nfiles; i++)
		if (wants_hash(p, i) && p->files[i].kind != CB_KIND_CMD_TEXT)
			pl.jobs[pl.njobs++] = (struct job){.file = i, .hash = true,
							   .cost = p->files[i].size};
	for (size_t i = 0; i < pl.njobs; i++) {
		nf_report_init(&pl.jobs[i].r);
		if (pl.jobs[i].hash)
			pl.total += p->files[pl.jobs[i].file].size;
	}
	qsort(pl.jobs, pl.njobs, sizeof *pl.jobs, by_cost);
	pthread_mutex_init(&pl.lock, NULL);
	int threads = b->opt && b->opt->threads > 0 ? b->opt->threads : 2;
	if ((size_t)threads > pl.njobs)
		threads = (int)pl.njobs;
	pthread_t tid[16];
	int started = 0;
	for (int t = 1; t < threads && t < 16; t++)
		if (pthread_create(&tid[started], NULL, worker, &pl) == 0)
			started++;
	worker(&pl);
	for (int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	pthread_mutex_destroy(&pl.lock);

	qsort(pl.jobs, pl.njobs, sizeof *pl.jobs, by_file);
	for (size_t i = 0; i < pl.njobs; i++) {
		struct job *j = &pl.jobs[i];
		struct cb_file *f = &p->files[j->file];
		nf_report_append(b->r, &j->r);
		if (!j->hash)
			continue;
		if (j->rc == 0) {
			memcpy(f->sha256, j->sha256, sizeof f->sha256);
			f->hash = CB_HASH_COMPUTED;
			p->hashed_bytes += f->size;
		} else if (j->rc != -EIO || !j->cmd) {
			f->hash = CB_HASH_FAILED;
			cb_find_op(b->r, 'A', "FILE_UNREADABLE", f->path, "hashing: %s",
				   strerror(-j->rc));
		} else {
			f->hash = CB_HASH_FAILED;   /* the dump's read error was reported */
		}
	}
	free(pl.jobs);
}
