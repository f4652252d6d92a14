/* The tools' progress bar on stderr (ninfer-check --deep, ninfer-pack,
 * calbin-check --hash): drawn only when stderr is a terminal and the work
 * has taken more than a second, so short jobs and pipes stay silent. */
#ifndef NF_TOOLS_PROGRESS_H
#define NF_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct nf_bar {
	const char *what;   /* said after the MiB counts, "" for nothing */
	bool enabled;       /* wanted and stderr is a terminal */
	bool shown;         /* drawn at least once */
	double start;       /* seconds (monotonic) at nf_bar_init() */
	double last;        /* seconds of the last redraw */
};

/* Start the clock; the bar is drawn only if wanted and stderr is a tty. */
void nf_bar_init(struct nf_bar *b, const char *what, bool wanted);

/* The libraries' progress callback (arg is the struct nf_bar): redraws at
 * most five times a second, and always at done == total. */
void nf_bar_update(void *arg, uint64_t done, uint64_t total);

/* After the work: keep the last line (end it) or erase it. */
void nf_bar_finish(struct nf_bar *b, bool keep);

#endif
