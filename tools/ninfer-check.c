/* tools/ninfer-check.c — validate an NInfer v3 artifact set without
 * mounting it (contract §1, §4; man/ninfer-check.1).
 *
 * Thin: parse the arguments, open the artifact (reader; a URL is a remote
 * set, with the -o options of remote/remote.h), check every file,
 * optionally read every payload byte (--deep), print the report, exit with
 * the fsck-style status: 0 clean, 1 warnings, 4 errors, 8 operational,
 * 16 usage.  Every URL it prints, also in tool.argv of the JSON report,
 * is redacted (no user:password@, no query string). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nf_version.h"
#include "reader/artifact.h"
#include "remote/remote.h"
#include "report/report.h"
#include "tools/progress.h"

#define EXIT_USAGE 16

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ninfer-check ENTRY|URL [--json] [--deep] [--max-json=BYTES]\n"
		"                   [-o KEY=VALUE[,KEY=VALUE]...]...\n"
		"Validate an NInfer v3 artifact set (the entry and its parts), a local\n"
		"file or an http://, https:// or s3://BUCKET/KEY URL (parts beside it).\n"
		"\n"
		"  --json         print the validation report as JSON (ninferfs-validation/v1)\n"
		"  --deep         also read every payload byte and check codec invariants\n"
		"  --max-json=BYTES  refuse a JSON directory larger than BYTES (suffix K, M,\n"
		"                 G, T: powers of 1024; default 4G)\n"
		"  -o, --remote-opt KEY=VALUE[,...]  an option of a URL's remote set\n"
		"                 (endpoint, region, profile, cafile, tries, retry_ms, ...)\n"
		"  -h, --help     show this help and exit\n"
		"  -V, --version  show the version and exit\n"
		"\n"
		"Exit status: 0 clean, 1 warnings only, 4 errors, 8 operational error,\n"
		"16 usage error.  See ninfer-check(1) for every finding code.\n");
}

/* -o KEY=VALUE[,KEY=VALUE]...: each item into the remote options.  The
 * list is copied (and kept in *keep): the options point into it. */
static int remote_opts(struct nf_remote_opts *ro, const char *arg, char ***keep, size_t *nkeep)
{
	char *copy = strdup(arg);
	char **grown = copy ? realloc(*keep, (*nkeep + 1) * sizeof **keep) : NULL;
	if (!grown) {
		free(copy);
		fprintf(stderr, "ninfer-check: out of memory\n");
		return -ENOMEM;
	}
	*keep = grown;
	(*keep)[(*nkeep)++] = copy;
	for (char *save = NULL, *item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *err = NULL;
		int rc = nf_remote_opts_set(ro, item, &err);
		if (rc == -ENOENT) {
			char *eq = strchr(item, '=');
			fprintf(stderr, "ninfer-check: -o: unknown option \"%.*s\" (ninfer-check(1), "
				"REMOTE SETS)\n", eq ? (int)(eq - item) : (int)strlen(item), item);
			return rc;
		}
		if (rc < 0) {
			fprintf(stderr, "ninfer-check: -o: %s\n", err ? err : "bad option");
			free(err);
			return rc;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"deep", no_argument, NULL, 'd'},
		{"max-json", required_argument, NULL, 'm'},
		{"remote-opt", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	nf_guard_mapped_json(true);
	nf_raise_fd_limit();   /* sets with many parts (issue 11) */
	bool json = false, deep = false;
	struct nf_remote_opts ro;
	nf_remote_opts_init(&ro);
	struct nf_open_opts oo = {.max_json = NF_DEFAULT_MAX_JSON, .remote = &ro};
	char **keep = NULL;
	size_t nkeep = 0, nremote = 0;
	int c, status = EXIT_USAGE;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hVo:", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'd': deep = true; break;
		case 'o':
			nremote++;
			if (remote_opts(&ro, optarg, &keep, &nkeep) < 0)
				goto out;
			break;
		case 'm':
			if (nf_parse_size(optarg, &oo.max_json) != 0 || oo.max_json == 0) {
				fprintf(stderr, "ninfer-check: --max-json: \"%s\" is not a positive size\n",
					optarg);
				goto out;
			}
			break;
		case 'h': usage(stdout); status = 0; goto out;
		case 'V': printf("ninfer-check %s\n", NF_VERSION); status = 0; goto out;
		default:
			if (optopt == 'o')
				fprintf(stderr, "ninfer-check: -o needs KEY=VALUE\n");
			else
				fprintf(stderr, "ninfer-check: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			goto out;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "ninfer-check: %s\n",
			optind == argc ? "missing ENTRY" : "exactly one ENTRY is accepted");
		usage(stderr);
		goto out;
	}
	const char *entry = argv[optind];
	bool remote = nf_remote_is_url(entry);
	if (nremote && !remote) {
		fprintf(stderr, "ninfer-check: -o: remote options, but %s is a local path, not an "
			"http://, https:// or s3:// URL\n", entry);
		goto out;
	}
	char *why = NULL;
	if (remote && nf_remote_opts_check(&ro, &why) < 0) {
		fprintf(stderr, "ninfer-check: -o: %s\n", why ? why : "bad options");
		free(why);
		goto out;
	}
	if (remote)
		oo.flags |= NF_OPEN_REMOTE;
	/* What the report may show: no credentials in a URL, anywhere. */
	char **shown = calloc((size_t)argc + 1, sizeof *shown);
	for (int i = 0; shown && i < argc; i++)
		if (!(shown[i] = nf_remote_redact_arg(argv[i]))) {
			for (int k = 0; k < i; k++)
				free(shown[k]);
			free(shown);
			shown = NULL;
		}
	if (!shown) {
		fprintf(stderr, "ninfer-check: out of memory\n");
		status = 8;
		goto out;
	}
	const char *shown_entry = shown[optind];

	struct nf_report r;
	nf_report_init(&r);
	struct nf_artifact *a = NULL;
	if (nf_artifact_open_opts(entry, &oo, &r, &a) == 0) {
		nf_artifact_check_files(a, &r);
		if (deep) {
			struct nf_bar b;
			nf_bar_init(&b, "", true);
			nf_artifact_check_deep(a, &r, b.enabled ? nf_bar_update : NULL, &b);
			nf_bar_finish(&b, false);
		}
	}
	status = nf_report_exit_status(&r);
	if (json) {
		char *doc = nf_report_to_json(&r, a, shown_entry, "ninfer-check", argc, shown);
		if (!doc) {
			fprintf(stderr, "ninfer-check: out of memory writing the report\n");
			status = 8;
		} else {
			fputs(doc, stdout);
			free(doc);
		}
	} else {
		nf_report_print_text(stdout, &r, a, shown_entry);
	}
	if (fflush(stdout) != 0 && status < 8)
		status = 8;
	nf_artifact_close(a);
	nf_report_free(&r);
	for (int i = 0; i < argc; i++)
		free(shown[i]);
	free(shown);
out:
	for (size_t i = 0; i < nkeep; i++)
		free(keep[i]);
	free(keep);
	return status;
}
