/* tools/ninfer-check.c — validate an NInfer v3 artifact set without
 * mounting it (contract §1, §4; man/ninfer-check.1).
 *
 * Thin: parse the arguments, open the artifact (reader), check every file,
 * optionally read every payload byte (--deep), print the report, exit with
 * the fsck-style status: 0 clean, 1 warnings, 4 errors, 8 operational,
 * 16 usage. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nf_version.h"
#include "reader/artifact.h"
#include "report/report.h"

#define EXIT_USAGE 16

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ninfer-check ENTRY [--json] [--deep] [--max-json=BYTES]\n"
		"Validate an NInfer v3 artifact set (the entry and its parts).\n"
		"\n"
		"  --json         print the validation report as JSON (ninferfs-validation/v1)\n"
		"  --deep         also read every payload byte and check codec invariants\n"
		"  --max-json=BYTES  refuse a JSON directory larger than BYTES (suffix K, M,\n"
		"                 G, T: powers of 1024; default 4G)\n"
		"  -h, --help     show this help and exit\n"
		"  -V, --version  show the version and exit\n"
		"\n"
		"Exit status: 0 clean, 1 warnings only, 4 errors, 8 operational error,\n"
		"16 usage error.  See ninfer-check(1) for every finding code.\n");
}

struct bar {
	double last;     /* seconds of the last redraw */
	double start;
	bool shown;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A progress bar on stderr, only when it is a terminal and the work has
 * taken more than a second (short checks stay silent). */
static void progress(void *arg, uint64_t done, uint64_t total)
{
	struct bar *b = arg;
	double t = now();
	if (t - b->start < 1.0 || (t - b->last < 0.2 && done < total))
		return;
	b->last = t;
	b->shown = true;
	int pct = total ? (int)((double)done * 100.0 / (double)total) : 100;
	int fill = pct / 4;
	fprintf(stderr, "\r[%-25.*s] %3d%% %" PRIu64 " / %" PRIu64 " MiB", fill,
		"#########################", pct, done >> 20, total >> 20);
	fflush(stderr);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"deep", no_argument, NULL, 'd'},
		{"max-json", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	nf_guard_mapped_json(true);
	nf_raise_fd_limit();   /* sets with many parts (issue 11) */
	bool json = false, deep = false;
	struct nf_open_opts oo = {.max_json = NF_DEFAULT_MAX_JSON};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'd': deep = true; break;
		case 'm':
			if (nf_parse_size(optarg, &oo.max_json) != 0 || oo.max_json == 0) {
				fprintf(stderr, "ninfer-check: --max-json: \"%s\" is not a positive size\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("ninfer-check %s\n", NF_VERSION); return 0;
		default:
			fprintf(stderr, "ninfer-check: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "ninfer-check: %s\n",
			optind == argc ? "missing ENTRY" : "exactly one ENTRY is accepted");
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *entry = argv[optind];

	struct nf_report r;
	nf_report_init(&r);
	struct nf_artifact *a = NULL;
	if (nf_artifact_open_opts(entry, &oo, &r, &a) == 0) {
		nf_artifact_check_files(a, &r);
		if (deep) {
			struct bar b = {.start = now()};
			bool tty = isatty(STDERR_FILENO);
			nf_artifact_check_deep(a, &r, tty ? progress : NULL, &b);
			if (b.shown)
				fprintf(stderr, "\r\033[K");
		}
	}
	int status = nf_report_exit_status(&r);
	if (json) {
		char *doc = nf_report_to_json(&r, a, entry, "ninfer-check", argc, argv);
		if (!doc) {
			fprintf(stderr, "ninfer-check: out of memory writing the report\n");
			status = 8;
		} else {
			fputs(doc, stdout);
			free(doc);
		}
	} else {
		nf_report_print_text(stdout, &r, a, entry);
	}
	if (fflush(stdout) != 0 && status < 8)
		status = 8;
	nf_artifact_close(a);
	nf_report_free(&r);
	return status;
}
