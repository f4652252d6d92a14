/* The tools' progress bar: see progress.h. */
#include "progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void nf_bar_init(struct nf_bar *b, const char *what, bool wanted)
{
	*b = (struct nf_bar){.what = what, .enabled = wanted && isatty(STDERR_FILENO)};
	b->start = now();
}

void nf_bar_update(void *arg, uint64_t done, uint64_t total)
{
	struct nf_bar *b = arg;
	if (!b->enabled)
		return;
	double t = now();
	if (t - b->start < 1.0 || (t - b->last < 0.2 && done < total))
		return;
	b->last = t;
	b->shown = true;
	int pct = total ? (int)((double)done * 100.0 / (double)total) : 100;
	fprintf(stderr, "\r[%-25.*s] %3d%% %" PRIu64 " / %" PRIu64 " MiB%s%s", pct / 4,
		"#########################", pct, done >> 20, total >> 20, *b->what ? " " : "",
		b->what);
	fflush(stderr);
}

void nf_bar_finish(struct nf_bar *b, bool keep)
{
	if (b->shown)
		fputs(keep ? "\n" : "\r\033[K", stderr);
}
