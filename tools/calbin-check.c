/* tools/calbin-check.c — static acceptance of a Calculet NPU calbin
 * package (seed 004, Gates A–F; man/calbin-check.1).
 *
 * Thin: parse the arguments, open and check the package (calbin/), print
 * the report, exit with ninfer-check's statuses: 0 pass, 1 pass with
 * warnings, 4 fail, 8 could not read, 16 usage. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nf_version.h"
#include "calbin/calbin.h"
#include "report/report.h"
#include "tools/progress.h"

#define EXIT_USAGE 16

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: calbin-check DIR [--json] [--public] [--fast|--hash]\n"
		"Static acceptance of a Calculet NPU calbin package (Gates A-F).\n"
		"\n"
		"  --json         print the report as JSON (calculet-package-validation/v1)\n"
		"  --public       the sanitized report: no vaddr, no address, no absolute path\n"
		"  --fast         verify SHA256SUMS coverage and the digests of files up to\n"
		"                 64 MiB (the default)\n"
		"  --hash         compute and verify the SHA-256 of every file\n"
		"  -h, --help     show this help and exit\n"
		"  -V, --version  show the version and exit\n"
		"\n"
		"Exit status: 0 pass, 1 pass with warnings, 4 fail, 8 could not read,\n"
		"16 usage error.  See calbin-check(1) for every finding code.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"public", no_argument, NULL, 'p'},
		{"fast", no_argument, NULL, 'f'},
		{"hash", no_argument, NULL, 'H'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	bool json = false, pub = false, fast = false, hash = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'p': pub = true; break;
		case 'f': fast = true; break;
		case 'H': hash = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("calbin-check %s\n", NF_VERSION); return 0;
		default:
			fprintf(stderr, "calbin-check: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (fast && hash) {
		fprintf(stderr, "calbin-check: --fast and --hash exclude each other\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "calbin-check: %s\n",
			optind == argc ? "missing DIR" : "exactly one DIR is accepted");
		usage(stderr);
		return EXIT_USAGE;
	}
	struct nf_bar b;
	nf_bar_init(&b, "hashed", true);
	struct cb_options o = {.hash_all = hash};
	if (b.enabled) {
		o.progress = nf_bar_update;
		o.progress_arg = &b;
	}
	struct nf_report r;
	nf_report_init(&r);
	struct cb_package *p = NULL;
	if (cb_package_open(argv[optind], &o, &r, &p) < 0)
		r.oom = true;
	nf_bar_finish(&b, false);
	int status = nf_report_exit_status(&r);
	if (json) {
		char *doc = cb_report_json(p, &r, pub, "calbin-check", argc, argv);
		if (!doc) {
			fprintf(stderr, "calbin-check: out of memory writing the report\n");
			status = 8;
		} else {
			fputs(doc, stdout);
			free(doc);
		}
	} else {
		cb_report_print_text(stdout, p, &r, pub);
	}
	if (fflush(stdout) != 0 && status < 8)
		status = 8;
	cb_package_close(p);
	nf_report_free(&r);
	return status;
}
