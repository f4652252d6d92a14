/* ninfer-pack — write NInfer v3 artifact sets (see man/ninfer-pack.1).
 *
 *   ninfer-pack create --manifest M.json [--max-file-bytes N] OUT.ninfer
 *   ninfer-pack reshard IN.ninfer OUT.ninfer [--max-file-bytes N]
 *   ninfer-pack sample OUT.ninfer [--max-file-bytes N]
 *
 * Exit status: 0 written, 4 input invalid, 8 operational error, 16 usage. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nf_version.h"
#include "reader/artifact.h"
#include "reader/manifest.h"
#include "report/report.h"
#include "reader/writer.h"
#include "remote/remote.h"
#include "tools/progress.h"
#include "tools/sample.h"

#define EXIT_OK 0
#define EXIT_INPUT 4
#define EXIT_OPERATIONAL 8
#define EXIT_USAGE 16

static const char *prog = "ninfer-pack";

/* SIGINT/SIGTERM/SIGHUP ask the writer to stop and clean up.  The one
 * global: a signal handler has no other way to reach the writer. */
static volatile sig_atomic_t stop_requested;
static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: %s create --manifest M.json [--max-file-bytes N] OUT.ninfer\n"
		"       %s reshard IN.ninfer OUT.ninfer [--max-file-bytes N]\n"
		"       %s sample OUT.ninfer [--max-file-bytes N]\n"
		"       %s -h | --help | -V | --version\n"
		"\n"
		"Write an NInfer v3 artifact set: OUT.ninfer and, with --max-file-bytes,\n"
		"OUT.ninfer.part-0001, ...  Existing files are never replaced.\n"
		"\n"
		"options:\n"
		"  -m, --manifest M.json     the directory and object sources (create)\n"
		"  -s, --max-file-bytes N    split so that no file exceeds N bytes (suffix K, M, G\n"
		"                            for powers of 1024; 0 = one file; default: one file,\n"
		"                            except sample: about four files)\n"
		"  -q, --quiet               no progress bar\n"
		"  -h, --help                this help\n"
		"  -V, --version             the version\n"
		"\n"
		"exit status: 0 written, 4 input invalid, 8 operational error, 16 usage\n",
		prog, prog, prog, prog);
}

/* ------------------------------------------------------------------ */
/* reports */

static void print_findings(const struct nf_report *r)
{
	for (size_t i = 0; i < r->count; i++) {
		const struct nf_finding *f = &r->items[i];
		fprintf(stderr, "%s: %s %s: %s: %s\n", prog, nf_severity_name(f->severity), f->code,
			f->where ? f->where : "", f->evidence ? f->evidence : "");
	}
}

static int exit_for(int rc)
{
	if (rc == 0)
		return EXIT_OK;
	if (rc == -EINVAL || rc == -EOVERFLOW)
		return EXIT_INPUT;
	return EXIT_OPERATIONAL;
}

static int write_and_report(const char *out, json_t *dir, const struct nf_write_object *objs, size_t n,
			    uint64_t limit, bool allow_unknown, bool quiet)
{
	struct nf_bar pg;
	nf_bar_init(&pg, "", !quiet);
	struct nf_write_opts opts = {.max_file_bytes = limit, .allow_unknown = allow_unknown,
				     .progress = nf_bar_update, .progress_arg = &pg,
				     .cancel = &stop_requested};
	struct nf_report rep;
	nf_report_init(&rep);
	int rc = nf_write_artifact(out, dir, objs, n, &opts, &rep);
	nf_bar_finish(&pg, true);
	print_findings(&rep);
	nf_report_free(&rep);
	if (rc)
		fprintf(stderr, "%s: %s: not written (%s)\n", prog, out, strerror(-rc));
	return exit_for(rc);
}

/* ------------------------------------------------------------------ */
/* create */

/* Manifest findings keep the "PROG: MANIFEST: WHERE: EVIDENCE" shape (a JSON
 * syntax error: "PROG: MANIFEST:LINE:COLUMN: TEXT", as jansson words it). */
static void print_manifest_findings(const char *manifest, const struct nf_report *r)
{
	for (size_t i = 0; i < r->count; i++) {
		const struct nf_finding *f = &r->items[i];
		const char *where = f->where ? f->where : "", *ev = f->evidence ? f->evidence : "";
		if (strcmp(f->code, "MANIFEST_JSON") == 0)
			fprintf(stderr, "%s: %s:%s: %s\n", prog, manifest, where, ev);
		else if (*where)
			fprintf(stderr, "%s: %s: %s: %s\n", prog, manifest, where, ev);
		else
			fprintf(stderr, "%s: %s: %s\n", prog, manifest, ev);
	}
}

/* The whole manifest file into memory; -errno. */
static int read_file(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		errno = 0;
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	int e = ferror(f) ? (errno ? -errno : -EIO) : 0;
	fclose(f);
	if (e) {
		free(buf);
		return e;
	}
	*text = buf;
	*len = n;
	return 0;
}

static int cmd_create(const char *manifest, const char *out, uint64_t limit, bool quiet)
{
	char *text = NULL;
	size_t len = 0;
	int rc = read_file(manifest, &text, &len);
	if (rc) {
		/* the words json_load_file used before the parsing moved to reader/manifest.c */
		fprintf(stderr, "%s: %s:-1:-1: unable to open %s: %s\n", prog, manifest, manifest,
			strerror(-rc));
		return EXIT_OPERATIONAL;
	}
	char *mcopy = strdup(manifest);
	if (!mcopy) {
		free(text);
		return EXIT_OPERATIONAL;
	}
	struct nf_manifest m;
	struct nf_report rep;
	nf_report_init(&rep);
	rc = nf_manifest_parse(text, len, dirname(mcopy), &m, &rep);
	if (rc == 0)
		rc = nf_manifest_stat_sources(&m, &rep);
	print_manifest_findings(manifest, &rep);
	int status;
	if (rc == 0)
		status = write_and_report(out, m.directory, m.objects, m.nobjects, limit, false, quiet);
	else
		status = rc == -EINVAL ? EXIT_INPUT : EXIT_OPERATIONAL;
	nf_report_free(&rep);
	nf_manifest_free(&m);
	free(mcopy);
	free(text);
	return status;
}

/* ------------------------------------------------------------------ */
/* reshard */

static int cmd_reshard(const char *in, const char *out, uint64_t limit, bool quiet)
{
	struct nf_report rep;
	struct nf_artifact *a = NULL;
	nf_report_init(&rep);
	int rc = nf_artifact_open(in, &rep, &a);
	if (rc == 0 && a)
		nf_artifact_check_files(a, &rep);
	if (rc < 0 || !a || nf_report_count(&rep, NF_SEV_ERROR, -1) > 0 ||
	    nf_report_count(&rep, NF_SEV_WARNING, NF_SCOPE_FILE) > 0) {
		print_findings(&rep);
		fprintf(stderr, "%s: %s: cannot be resharded as it is\n", prog, in);
		/* a damaged directory or object is bad input; a missing or
		 * unreadable file is an operational failure */
		int st = (nf_report_count(&rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY) ||
			  nf_report_count(&rep, NF_SEV_ERROR, NF_SCOPE_OBJECT))
				 ? EXIT_INPUT
				 : EXIT_OPERATIONAL;
		nf_report_free(&rep);
		if (a)
			nf_artifact_close(a);
		return st;
	}
	nf_report_free(&rep);

	int status = EXIT_INPUT;
	json_error_t err;
	json_t *root = json_loadb(a->json_text, (size_t)a->json_bytes, 0, &err);
	json_t *dir = json_object();
	struct nf_write_object *objs = NULL;
	json_t *arr = root ? json_object_get(root, "objects") : NULL;
	size_t n = arr ? json_array_size(arr) : 0;
	if (!root || !dir || n != a->nobjects) {
		fprintf(stderr, "%s: %s: cannot re-read the directory: %s\n", prog, in,
			root ? "object count differs" : err.text);
		goto out;
	}
	static const char *const keep[] = {"components", "bindings", "uses", "metadata", "provenance", NULL};
	for (size_t k = 0; keep[k]; k++) {
		json_t *v = json_object_get(root, keep[k]);
		if (v)
			json_object_set(dir, keep[k], v);
	}
	objs = calloc(n, sizeof *objs);
	if (!objs) {
		status = EXIT_OPERATIONAL;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *rec = json_array_get(arr, i);
		json_object_del(rec, "offset");
		json_object_del(rec, "bytes");
		objs[i].record = rec;
		objs[i].source = NF_SRC_ARTIFACT;
		objs[i].artifact = a;
		objs[i].src_offset = a->objects[i].offset;
		objs[i].bytes = a->objects[i].bytes;
	}
	/* unknown formats are copied as they are */
	status = write_and_report(out, dir, objs, n, limit, true, quiet);
out:
	free(objs);
	json_decref(dir);
	json_decref(root);
	nf_artifact_close(a);
	return status;
}

/* ------------------------------------------------------------------ */

static int cmd_sample(const char *out, uint64_t limit, bool limit_given, bool quiet)
{
	struct nf_sample s;
	int rc = nf_sample_build(&s);
	if (rc) {
		fprintf(stderr, "%s: cannot build the sample: %s\n", prog, strerror(-rc));
		return EXIT_OPERATIONAL;
	}
	int status = write_and_report(out, s.directory, s.objects, s.nobjects,
				      limit_given ? limit : s.default_max_file_bytes, false, quiet);
	nf_sample_free(&s);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"manifest", required_argument, NULL, 'm'},
		{"max-file-bytes", required_argument, NULL, 's'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	/* sets with many parts: the whole hard limit of descriptors for the
	 * reader's open-file cache (issue 11) */
	nf_raise_fd_limit();
	nf_guard_mapped_json(true);   /* reshard parses its input's mapped JSON */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	const char *manifest = NULL;
	uint64_t limit = 0;
	bool limit_given = false, quiet = false;
	int c;
	/* permute so options may follow the operands */
	while ((c = getopt_long(argc, argv, "m:s:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			manifest = optarg;
			break;
		case 's':
			if (nf_parse_size(optarg, &limit)) {
				fprintf(stderr, "%s: --max-file-bytes: \"%s\" is not a size\n", prog, optarg);
				return EXIT_USAGE;
			}
			limit_given = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("ninfer-pack %s\n", NF_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	int nargs = argc - optind;
	char **args = argv + optind;
	if (nargs < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	/* Local files only: a set on a server is checked with ninfer-check
	 * URL, and fetched before it is resharded. */
	for (int i = 1; i <= nargs; i++) {
		const char *arg = i < nargs ? args[i] : manifest;
		if (arg && nf_remote_is_url(arg)) {
			char *shown = nf_remote_redact(arg);
			fprintf(stderr, "%s: %s: a URL; ninfer-pack reads and writes local files only "
				"(ninfer-pack(1)): fetch the set first (ninfer-check checks a URL)\n",
				prog, shown ? shown : "URL");
			free(shown);
			return EXIT_USAGE;
		}
	}
	const char *cmd = args[0];
	if (strcmp(cmd, "create") == 0) {
		if (nargs != 2 || !manifest) {
			fprintf(stderr, "%s: create needs --manifest M.json and one OUT.ninfer\n", prog);
			return EXIT_USAGE;
		}
		return cmd_create(manifest, args[1], limit, quiet);
	}
	if (manifest) {
		fprintf(stderr, "%s: --manifest belongs to create\n", prog);
		return EXIT_USAGE;
	}
	if (strcmp(cmd, "reshard") == 0) {
		if (nargs != 3) {
			fprintf(stderr, "%s: reshard needs IN.ninfer and OUT.ninfer\n", prog);
			return EXIT_USAGE;
		}
		return cmd_reshard(args[1], args[2], limit, quiet);
	}
	if (strcmp(cmd, "sample") == 0) {
		if (nargs != 2) {
			fprintf(stderr, "%s: sample needs one OUT.ninfer\n", prog);
			return EXIT_USAGE;
		}
		return cmd_sample(args[1], limit, limit_given, quiet);
	}
	fprintf(stderr, "%s: unknown command \"%s\"\n", prog, cmd);
	usage(stderr);
	return EXIT_USAGE;
}
