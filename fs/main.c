/* fs/main.c — ninferfs: options, the family and the engine, mount,
 * daemonize, serve.
 *
 *   ninferfs SOURCE MOUNTPOINT [-o opt,...] [-f] [-d] [-s]
 *
 * The family (fs/family.h) is -o format=NAME's, else the first of the
 * table below whose detect() takes the source, else the first (NInfer);
 * it opens and validates the source before anything is mounted and builds
 * the tree once; the engine (fs/engine.h) is io_uring over the family's
 * files, or, when the source is a URL (http://, https://, s3://), the
 * remote engine with the -o options of remote/remote.h (issue 14); only
 * then is the mount made.  Without -f the process
 * forks after the mount and the parent waits on a pipe until the child has
 * answered a stat of the mountpoint, so the shell's exit status says
 * whether the tree is there (see man ninferfs.1, EXIT STATUS). */
#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <unistd.h>

#include "fs/context.h"
#include "nf_version.h"

enum { KEY_HELP, KEY_VERSION, KEY_FSNAME, KEY_SUBTYPE, KEY_NUMBER };

#define NF_OPT(t, f, v) {t, offsetof(struct nf_options, f), v}

/* The families, the fallback first (fs/family.h). */
static const struct nf_family *const families[] = {&nf_family_ninfer, &nf_family_calbin};
#define NFAMILIES (sizeof families / sizeof families[0])
_Static_assert(NFAMILIES <= NF_FAMILIES_MAX, "NF_FAMILIES_MAX (fs/context.h)");

static const struct fuse_opt opt_spec[] = {
	NF_OPT("format=%s", format, 0),
	NF_OPT("lenient", lenient, 1),
	NF_OPT("direct_io", direct_io, 1),
	/* numbers are parsed by number_opt(), not by fuse_opt's %u/%o, which
	 * wrap silently (uid=4294967296 was uid 0) and take 0o22 as 0 */
	FUSE_OPT_KEY("uring_depth=", KEY_NUMBER),
	FUSE_OPT_KEY("threads=", KEY_NUMBER),
	FUSE_OPT_KEY("uid=", KEY_NUMBER),
	FUSE_OPT_KEY("gid=", KEY_NUMBER),
	FUSE_OPT_KEY("umask=", KEY_NUMBER),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_KEY("fsname=", KEY_FSNAME),
	FUSE_OPT_KEY("subtype=", KEY_SUBTYPE),
	/* mount(8)/fstab words that are not mount options */
	FUSE_OPT_KEY("defaults", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("auto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("noauto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("user", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("users", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nouser", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("_netdev", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nofail", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_END,
};


static void usage(FILE *out, const char *prog)
{
	fprintf(out,
		"usage: %s SOURCE MOUNTPOINT [-o opt,...] [-f] [-d] [-s]\n"
		"Mount SOURCE read-only: an NInfer v3 artifact set (SOURCE is its entry file,\n"
		"or the entry's URL: http://, https://, s3://BUCKET/KEY) or a calbin package\n"
		"(SOURCE is its directory).\n\n"
		"ninferfs options:\n"
		"    -o format=NAME         what SOURCE is: ",
		prog);
	for (size_t i = 0; i < NFAMILIES; i++)
		fprintf(out, "%s%s", i ? "|" : "", families[i]->name);
	fprintf(out, " (detected)\n");
	for (size_t i = 0; i < NFAMILIES; i++)
		fputs(families[i]->help, out);
	fprintf(out,
		"    -o lenient             mount even with directory errors\n"
		"    -o direct_io           reads bypass the page cache (mmap still maps)\n"
		"    -o uring_depth=N       io_uring entries per worker thread, 1-4096 (%u)\n"
		"    -o threads=N           FUSE worker threads, 1-1024 (%u)\n"
		"    -o uid=N,gid=N         owner of every file, 0-4294967294 (the caller's)\n"
		"    -o umask=M             octal mask applied to 0444/0555, 0-0777 (0)\n"
		"remote options (SOURCE a URL: http://, https://, s3://BUCKET/KEY; see\n"
		"ninferfs-remote(7)):\n"
		"    -o endpoint=URL,region=R,profile=P   S3 endpoint, region, credentials profile\n"
		"    -o cafile=PEM          CA bundle instead of the system store\n"
		"    -o redirects=none|same-host|any   follow redirects (none)\n"
		"    -o tries=N,retry_ms=MS,backoff_ms=MS   retries of a request (5, 30000, 100)\n"
		"    -o connect_ms=MS,low_speed_bytes=B,low_speed_secs=S   timeouts (10000, 1, 15)\n"
		"    -o inflight=N,max_request=BYTES   requests at once per thread (16), size (16M)\n"
		"    -o prefetch_mem=BYTES,prefetch_min=BYTES,prefetch_max=BYTES   (256M, 1M, 64M)\n"
		"    -o cache=DIR,cache_size=BYTES,cache_fsync=0|1   local block cache (none, 1G)\n"
		"    -o offline             with cache=: no request at all, every byte from the cache\n"
		"    -h, --help             this help\n"
		"    -V, --version          version\n\n"
		"exit status: 0 mounted, 4 directory errors (refused), 8 cannot read the\n"
		"source, 16 usage error, 32 mount failed.  See ninferfs(1), ninferfs(5).\n",
		NF_DEFAULT_URING_DEPTH, NF_DEFAULT_THREADS);
}

/* The numeric -o options, their ranges (man ninferfs.1) and bases: uid and
 * gid stop below (uid_t)-1, which chown(2) reads as "no change". */
struct number_opt {
	const char *name;
	int base;                 /* 10, or 8: octal digits only */
	unsigned long long min, max;
	size_t field, has;        /* offsets in struct nf_options */
};

#define NF_NUM(n, b, lo, hi, f, h) {n, b, lo, hi, offsetof(struct nf_options, f), h}
static const struct number_opt number_opts[] = {
	NF_NUM("uring_depth", 10, 1, 4096, uring_depth, 0),
	NF_NUM("threads", 10, 1, 1024, threads, 0),
	NF_NUM("uid", 10, 0, UINT32_MAX - 1, uid, offsetof(struct nf_options, has_uid)),
	NF_NUM("gid", 10, 0, UINT32_MAX - 1, gid, offsetof(struct nf_options, has_gid)),
	NF_NUM("umask", 8, 0, 0777, umask, offsetof(struct nf_options, has_umask)),
};

/* "NAME=VALUE" of number_opts: digits of the base only (no sign, space,
 * prefix or suffix), no overflow, within the range.  0, or -1 after a
 * message naming the option. */
static int number_opt(struct nf_options *o, const char *arg)
{
	const char *eq = strchr(arg, '=');

	for (size_t i = 0; eq && i < sizeof number_opts / sizeof number_opts[0]; i++) {
		const struct number_opt *n = &number_opts[i];
		const char *v = eq + 1, *digits = n->base == 8 ? "01234567" : "0123456789";
		unsigned long long x;
		char *end;

		if (strlen(n->name) != (size_t)(eq - arg) || strncmp(arg, n->name, strlen(n->name)))
			continue;
		errno = 0;
		x = strtoull(v, &end, n->base);
		if (*v == '\0' || strspn(v, digits) != strlen(v) || *end != '\0' || errno == ERANGE ||
		    x < n->min || x > n->max) {
			if (n->base == 8)
				fprintf(stderr, "ninferfs: -o %s: %s must be octal digits, 0 to 0%llo\n",
					arg, n->name, n->max);
			else
				fprintf(stderr, "ninferfs: -o %s: %s must be a decimal number, %llu to "
						"%llu\n", arg, n->name, n->min, n->max);
			return -1;
		}
		*(unsigned *)((char *)o + n->field) = (unsigned)x;
		if (n->has)
			*(int *)((char *)o + n->has) = 1;
		return 0;
	}
	return -1; /* cannot happen: opt_spec has no other KEY_NUMBER */
}

/* An option of the remote engine's (remote/remote.h, the same names as
 * ninfer-check -o): kept, its strings in a copy.  1 when not one, 0 taken,
 * -1 after a message (a bad value: exit 16). */
static int remote_opt(struct nf_fs *fs, const char *arg)
{
	char *kv = strdup(arg), *err = NULL;
	char **grown;
	int rc;

	if (kv == NULL)
		return -1;
	rc = nf_remote_opts_set(&fs->remote_opts, kv, &err);
	if (rc == -ENOENT) {
		free(kv);
		return 1;
	}
	if (rc < 0) {
		char *shown = nf_remote_redact_arg(arg);
		fprintf(stderr, "ninferfs: -o %s: %s\n", shown ? shown : "?", err ? err : "bad value");
		free(shown);
		free(err);
		free(kv);
		return -1;
	}
	grown = realloc(fs->remote_kv, (fs->nremote_kv + 1) * sizeof *grown);
	if (grown == NULL) {
		free(kv);
		return -1;
	}
	fs->remote_kv = grown;
	fs->remote_kv[fs->nremote_kv++] = kv;
	if (fs->remote_first == NULL && (fs->remote_first = nf_remote_redact_arg(arg)) == NULL)
		return -1;
	return 0;
}

/* An option of a family's: kept in that family's block (the first each
 * family took is remembered, to refuse it when another family mounts).
 * 1 when no family takes it (libfuse's then), 0 taken, -1 on ENOMEM. */
static int family_opt(struct nf_fs *fs, const char *arg)
{
	for (size_t i = 0; i < NFAMILIES; i++) {
		if (families[i]->option == NULL || !families[i]->option(fs->fam_opts[i], arg))
			continue;
		if (fs->fam_opt_first[i] == NULL && (fs->fam_opt_first[i] = strdup(arg)) == NULL)
			return -1;
		return 0;
	}
	return 1;
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct nf_fs *fs = data;
	struct nf_options *o = &fs->opt;

	(void)outargs;
	switch (key) {
	case KEY_NUMBER:
		return number_opt(o, arg);
	case KEY_HELP:
		o->show_help = 1;
		return 0;
	case KEY_VERSION:
		o->show_version = 1;
		return 0;
	case KEY_FSNAME:
		o->has_fsname = 1;
		return 1;
	case KEY_SUBTYPE:
		o->has_subtype = 1;
		return 1;
	case FUSE_OPT_KEY_OPT:
		/* fstab x-* and comment= options belong to mount(8) */
		if (strncmp(arg, "x-", 2) == 0 || strncmp(arg, "comment=", 8) == 0)
			return 0;
		if (o->mount_helper && (!strcmp(arg, "-n") || !strcmp(arg, "-s") ||
					    !strcmp(arg, "-v")))
			return 0;
		if (o->mount_helper && !strcmp(arg, "-f")) {
			o->fake = 1;
			return 0;
		}
		{
		int r = remote_opt(fs, arg);
		return r <= 0 ? r : family_opt(fs, arg);
	}
	case FUSE_OPT_KEY_NONOPT:
		if (o->source == NULL) {
			o->source = strdup(arg);
			return 0;
		}
		return 1;
	default:
		return 1;
	}
}

/* fuse_opt splits -o values at ',' unless escaped with '\'. */
static char *opt_escape(const char *s)
{
	char *out = malloc(2 * strlen(s) + 1), *o = out;

	if (out == NULL)
		return NULL;
	for (; *s; s++) {
		if (*s == ',' || *s == '\\')
			*o++ = '\\';
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

static int add_default_opts(struct fuse_args *args, const struct nf_options *o, const char *source,
			    bool remote)
{
	char *abs = remote ? NULL : realpath(source, NULL);
	char *esc = opt_escape(abs ? abs : source), *opt = NULL;
	int rc = -1;

	free(abs);
	if (esc == NULL)
		return -1;
	if (asprintf(&opt, "-oro,default_permissions%s%s%s", o->has_subtype ? "" : ",subtype=ninferfs",
		     o->has_fsname ? "" : ",fsname=", o->has_fsname ? "" : esc) >= 0)
		rc = fuse_opt_add_arg(args, opt);
	free(opt);
	free(esc);
	return rc;
}

/* The family: -o format=NAME's, else the first that detects the source,
 * else the fallback; an option another family took is refused.  0, or -1
 * after a message. */
static int choose_family(struct nf_fs *fs, const char *prog)
{
	size_t k = 0;

	if (fs->opt.format) {
		for (k = 0; k < NFAMILIES && strcmp(families[k]->name, fs->opt.format); k++)
			;
		if (k == NFAMILIES) {
			fprintf(stderr, "%s: format must be one of", prog);
			for (size_t i = 0; i < NFAMILIES; i++)
				fprintf(stderr, "%s %s", i ? "," : "", families[i]->name);
			fprintf(stderr, ", not '%s'\n", fs->opt.format);
			return -1;
		}
	} else {
		for (size_t i = 0; i < NFAMILIES; i++)
			if (families[i]->detect && families[i]->detect(fs->opt.source)) {
				k = i;
				break;
			}
	}
	for (size_t i = 0; i < NFAMILIES; i++)
		if (i != k && fs->fam_opt_first[i]) {
			fprintf(stderr, "%s: -o %s is an option of %s sources, and %s is mounted as %s\n",
				prog, fs->fam_opt_first[i], families[i]->name, fs->shown,
				families[k]->name);
			return -1;
		}
	fs->family = families[k];
	return 0;
}

/* A path a remote option names, made absolute (kept with the option
 * copies): the daemon works from "/" once it has forked.  0 or -1
 * (ENOMEM). */
static int absolute(struct nf_fs *fs, const char **slot)
{
	char *abs, **grown;

	if (*slot == NULL || **slot == '/' || **slot == '\0' || (abs = realpath(*slot, NULL)) == NULL)
		return 0;   /* absolute, or missing: the open names it as given */
	grown = realloc(fs->remote_kv, (fs->nremote_kv + 1) * sizeof *grown);
	if (grown == NULL) {
		free(abs);
		return -1;
	}
	fs->remote_kv = grown;
	fs->remote_kv[fs->nremote_kv++] = abs;
	*slot = abs;
	return 0;
}

/* The source: a URL is a remote set, with the remote options; a local
 * path takes none.  0, or -1 after a message. */
static int check_source(struct nf_fs *fs, const char *prog)
{
	fs->remote = nf_remote_is_url(fs->opt.source);
	fs->shown = fs->remote ? nf_remote_redact(fs->opt.source) : strdup(fs->opt.source);
	if (fs->shown == NULL) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return -1;
	}
	if (!fs->remote && fs->remote_first) {
		fprintf(stderr, "%s: -o %s is an option of remote sources (a URL: http://, https://, "
				"s3://), and %s is a local path\n", prog, fs->remote_first, fs->shown);
		return -1;
	}
	char *why = NULL;
	if (fs->remote && nf_remote_opts_check(&fs->remote_opts, &why) < 0) {
		fprintf(stderr, "%s: -o: %s\n", prog, why ? why : "bad options");
		free(why);
		return -1;
	}
	if (fs->remote && (absolute(fs, &fs->remote_opts.cafile) < 0 ||
			   absolute(fs, &fs->remote_opts.cache_dir) < 0)) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return -1;
	}
	return 0;
}

static int check_options(struct nf_fs *fs, const char *prog)
{
	struct nf_options *o = &fs->opt;

	if (check_source(fs, prog) < 0 || choose_family(fs, prog) < 0)
		return -1;
	for (size_t i = 0; i < NFAMILIES; i++)
		if (families[i] == fs->family && families[i]->check &&
		    families[i]->check(fs->fam_opts[i], prog) < 0)
			return -1;
	/* 0: not given (number_opt() refuses a 0) */
	if (o->uring_depth == 0)
		o->uring_depth = NF_DEFAULT_URING_DEPTH;
	if (o->threads == 0)
		o->threads = NF_DEFAULT_THREADS;
	return 0;
}

/* Parse argv; returns -1 to exit with `*status`, 0 to go on with the
 * session made (*se, not mounted). */
static int parse_args(struct nf_fs *fs, struct fuse_args *args, struct fuse_cmdline_opts *cmd,
		      struct fuse_session **se, int *status)
{
	const char *prog = args->argv[0];
	const char *base = strrchr(prog, '/');

	fs->opt.mount_helper = strncmp(base ? base + 1 : prog, "mount.", 6) == 0;
	*status = NF_EXIT_USAGE;
	for (size_t i = 0; i < NFAMILIES; i++)
		if ((fs->fam_opts[i] = calloc(1, families[i]->opts_size ? families[i]->opts_size : 1))
		    == NULL) {
			fprintf(stderr, "ninferfs: out of memory\n");
			return -1;
		}
	nf_remote_opts_init(&fs->remote_opts);   /* the defaults, before any -o */
	/* opt_spec's offsets are into fs->opt, its first member */
	if (fuse_opt_parse(args, fs, opt_spec, opt_proc) != 0)
		return -1;
	if (fs->opt.show_help || fs->opt.show_version) {
		if (fs->opt.show_help) {
			usage(stdout, prog);
			printf("\nFUSE options:\n");
			fuse_cmdline_help();
			fuse_lowlevel_help();
		} else {
			printf("ninferfs %s (libfuse %s)\n", NF_VERSION, fuse_pkgversion());
		}
		*status = NF_EXIT_OK;
		return -1;
	}
	if (fuse_parse_cmdline(args, cmd) != 0)
		return -1;
	if (fs->opt.source == NULL || cmd->mountpoint == NULL) {
		usage(stderr, prog);
		return -1;
	}
	if (check_options(fs, prog) < 0)
		return -1;
	if (add_default_opts(args, &fs->opt, fs->shown, fs->remote) < 0)
		return -1;
	/* The session is made now, before the source is read, because it
	 * is libfuse that knows the rest of the options: it refuses an
	 * unknown one (-o bogus, --bogus) here, naming it, and that is a
	 * usage error (exit 16), not a failed mount. */
	*se = fuse_session_new(args, nf_ops(), sizeof(struct fuse_lowlevel_ops), fs);
	if (*se == NULL) {
		fprintf(stderr, "ninferfs: bad option (see above, and ninferfs -h)\n");
		return -1;
	}
	return 0;
}

/* Open and validate the source with the family; returns an exit status
 * (0: go on). */
static int open_source(struct nf_fs *fs, int argc, char **argv)
{
	const struct nf_family *fam = fs->family;
	struct nf_mount m = {.fs = fs, .source = fs->opt.source, .shown = fs->shown,
			     .remote = fs->remote ? &fs->remote_opts : NULL,
			     .lenient = fs->opt.lenient, .argc = argc};
	struct nf_opened out;
	int status = NF_EXIT_ENTRY;

	/* the command line as validation.json shows it: no credentials */
	fs->shown_argv = calloc((size_t)argc + 1, sizeof *fs->shown_argv);
	for (int i = 0; fs->shown_argv && i < argc; i++)
		if ((fs->shown_argv[i] = nf_remote_redact_arg(argv[i])) == NULL) {
			fprintf(stderr, "ninferfs: out of memory\n");
			return NF_EXIT_ENTRY;
		}
	if (fs->shown_argv == NULL) {
		fprintf(stderr, "ninferfs: out of memory\n");
		return NF_EXIT_ENTRY;
	}
	m.argv = fs->shown_argv;
	memset(&out, 0, sizeof out);
	for (size_t i = 0; i < NFAMILIES; i++)
		if (families[i] == fam)
			status = fam->open(&m, fs->fam_opts[i], &out);
	if (status != NF_EXIT_OK)
		return status;
	fs->fam = out.state;
	fs->fam_errors = out.errors;
	fs->fam_warnings = out.warnings;
	fs->set = out.set;
	fs->mtime = out.mtime;
	if (nf_extents_check(&fs->set.extents) < 0 || fs->set.extents.n != fs->set.n) {
		fprintf(stderr, "ninferfs: %s: the %s family's files do not join (extent table)\n",
			fs->shown, fam->name);
		return NF_EXIT_ENTRY;
	}
	if (nf_files_doc_init(fs) < 0 || nf_set_init(fs) < 0 || nf_counters_init(fs) < 0) {
		fprintf(stderr, "ninferfs: out of memory\n");
		return NF_EXIT_ENTRY;
	}
	return NF_EXIT_OK;
}

/* Everything the daemon needs besides the session: the engine, the tree,
 * the watch.  0, or -EEXIST (two records, one path: exit 4) or -errno. */
static int prepare(struct nf_fs *fs)
{
	int rc;

	/* files that are URLs go to the remote engine, local ones to io_uring */
	rc = fs->set.remote ? nf_engine_remote_open(&fs->engine, fs)
			    : nf_engine_uring_open(&fs->engine, fs);
	if (rc < 0) {
		fprintf(stderr, "ninferfs: cannot start the read engine: %s\n", strerror(-rc));
		return rc;
	}
	fs->uid = fs->opt.has_uid ? fs->opt.uid : getuid();
	fs->gid = fs->opt.has_gid ? fs->opt.gid : getgid();
	fs->umask = fs->opt.has_umask ? fs->opt.umask : 0;
	rc = fs->family->build(fs->fam, &fs->tree);   /* says why itself */
	if (rc < 0)
		return rc;
	if (nf_watch_init(fs) < 0)
		fprintf(stderr, "ninferfs: no watch of changed files: reads still notice them\n");
	return 0;
}

/* Root only: raise the FUSE bdi readahead so big sequential reads are not
 * cut into 128 KiB requests.  Done after INIT (which may lower it). */
static void raise_readahead(struct nf_fs *fs, dev_t dev)
{
	char path[96];
	FILE *f;

	if (geteuid() != 0)
		return;
	snprintf(path, sizeof path, "/sys/class/bdi/%u:%u/read_ahead_kb", major(dev), minor(dev));
	f = fopen(path, "w");
	if (f == NULL || fprintf(f, "%d\n", NF_READ_AHEAD_KB) < 0 || fclose(f) != 0) {
		if (f == NULL)
			nf_log(fs, LOG_INFO, "cannot raise readahead (%s): %s", path, strerror(errno));
		else
			nf_log(fs, LOG_INFO, "cannot raise readahead (%s)", path);
	}
}

struct ready_arg {
	struct nf_fs *fs;
	char *mountpoint;
	int notify_fd;   /* the waiting parent's pipe, or -1 */
	unsigned char status;   /* the verdict when it is not "mounted" */
	bool notified;          /* the parent was told (mounted) */
};

/* Runs once the loop serves: a stat of the mountpoint proves the mount
 * answers; then readahead; then the parent may exit 0. */
static void *ready_thread(void *p)
{
	struct ready_arg *ra = p;
	struct stat st;
	unsigned char status = NF_EXIT_OK;

	if (stat(ra->mountpoint, &st) != 0) {
		nf_log(ra->fs, LOG_ERR, "mount of %s does not answer: %s", ra->mountpoint,
		       strerror(errno));
		status = NF_EXIT_MOUNT;
	} else {
		size_t errs = ra->fs->fam_errors, warns = ra->fs->fam_warnings;

		raise_readahead(ra->fs, st.st_dev);
		if (errs || warns)
			nf_log(ra->fs, errs ? LOG_ERR : LOG_WARNING,
			       "%s mounted on %s with %zu errors and %zu warnings (see validation.json)",
			       ra->fs->shown, ra->mountpoint, errs, warns);
	}
	/* A failure is told only after the unmount (run_session), so that a
	 * shell that sees the non-zero status never finds the mount there. */
	if (status == NF_EXIT_OK && ra->notify_fd >= 0) {
		if (write(ra->notify_fd, &status, 1) != 1)
			status = NF_EXIT_MOUNT;
		close(ra->notify_fd);
		ra->notified = true;
	}
	ra->status = status;
	if (status != NF_EXIT_OK)
		kill(getpid(), SIGTERM);
	return NULL;
}

/* Fork: the parent waits for the child's verdict and exits with it. */
static int daemonize(int *notify_fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		unsigned char status;
		close(p[1]);
		_exit(read(p[0], &status, 1) == 1 ? status : NF_EXIT_MOUNT);
	}
	close(p[0]);
	*notify_fd = p[1];
	if (setsid() < 0 || chdir("/") != 0)
		return -1;
	int nul = open("/dev/null", O_RDWR);
	if (nul >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		if (nul > 2)
			close(nul);
	}
	return 0;
}

static int serve(struct nf_fs *fs, struct fuse_session *se, const struct fuse_cmdline_opts *cmd)
{
	struct fuse_loop_config *cfg;
	int rc;

	if (cmd->singlethread)
		return fuse_session_loop(se);
	cfg = fuse_loop_cfg_create();
	if (cfg == NULL)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, (unsigned)cmd->clone_fd);
	fuse_loop_cfg_set_max_threads(cfg, fs->opt.threads);
	/* UINT_MAX (the default) means "never stop idle threads" */
	if (cmd->max_idle_threads != UINT_MAX)
		fuse_loop_cfg_set_idle_threads(cfg, cmd->max_idle_threads);
	rc = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return rc;
}

static int run_session(struct nf_fs *fs, struct fuse_session *se, struct fuse_cmdline_opts *cmd)
{
	struct ready_arg ra = {.fs = fs, .notify_fd = -1};
	pthread_t ready;
	bool ready_started = false;
	int status = NF_EXIT_MOUNT, rc;

	ra.mountpoint = realpath(cmd->mountpoint, NULL);
	if (ra.mountpoint == NULL) {
		fprintf(stderr, "ninferfs: %s: %s\n", cmd->mountpoint, strerror(errno));
		goto out;
	}
	/* libfuse installs its unmount-on-signal handlers only where the
	 * disposition is the default; a daemon started from a script's
	 * background job inherits SIGINT ignored, and ninferfs(1) promises
	 * that SIGINT, SIGTERM and SIGHUP unmount.  Reset them first. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (fuse_set_signal_handlers(se) != 0 || fuse_session_mount(se, ra.mountpoint) != 0)
		goto out_se;
#ifndef FUSE_CAP_DIRECT_IO_ALLOW_MMAP
	/* -o direct_io keeps shared mappings where the kernel can (initx.h) */
	if (fs->opt.direct_io && nf_initx_install(se, fs, NF_INIT2_DIRECT_IO_ALLOW_MMAP) < 0) {
		fprintf(stderr, "ninferfs: cannot route the FUSE device I/O for -o direct_io\n");
		goto out_unmount;
	}
#endif
	if (!cmd->foreground) {
		if (daemonize(&ra.notify_fd) != 0)
			goto out_unmount;
		fs->foreground = false;
	}
	/* after the fork: the thread must live in the daemon */
	if (fs->watch && nf_watch_start(fs, se) < 0)
		nf_log(fs, LOG_WARNING, "no watch of changed files: reads still notice them");
	if (pthread_create(&ready, NULL, ready_thread, &ra) != 0)
		goto out_unmount;
	ready_started = true;
	rc = serve(fs, se, cmd);
	/* libfuse returns the signal number after SIGINT/SIGTERM/SIGHUP */
	status = (rc == 0 || rc == SIGINT || rc == SIGTERM || rc == SIGHUP) ? NF_EXIT_OK
									     : NF_EXIT_MOUNT;
out_unmount:
	nf_watch_stop(fs);   /* the workers are gone: no hook runs any more */
	fuse_session_unmount(se);
	/* Joined only now: its stat of the mountpoint, if still waiting, is
	 * answered (ENOTCONN) by the unmount, not by a loop that has stopped;
	 * and `ra` and the report it reads live until it is done. */
	if (ready_started)
		pthread_join(ready, NULL);
	if (ready_started && ra.status != NF_EXIT_OK)
		status = ra.status;   /* the mount did not answer: not a clean exit */
	if (ra.notify_fd >= 0 && !ra.notified) {
		unsigned char st = ready_started && ra.status != NF_EXIT_OK ? ra.status : NF_EXIT_MOUNT;
		if (write(ra.notify_fd, &st, 1) != 1)
			st = NF_EXIT_MOUNT;
		close(ra.notify_fd);
	}
out_se:
	fuse_remove_signal_handlers(se);
out:
	free(ra.mountpoint);
	return status;
}

static void fs_free(struct nf_fs *fs)
{
	if (fs->key_made) {
		nf_thread_free(pthread_getspecific(fs->thread_key));
		pthread_key_delete(fs->thread_key);
	}
	/* open files the kernel never released (a signal ended the session) */
	nf_handles_free(fs);
	nf_watch_stop(fs);   /* only when run_session did not (a failed start) */
	if (fs->engine.ops)
		fs->engine.ops->close(fs->engine.state);   /* its holds on the files */
	nf_tree_free(&fs->tree);
	nf_files_doc_free_all(fs);
	nf_counters_free(fs);
	nf_set_free(fs);
	if (fs->fam)
		fs->family->close(fs->fam);
	for (size_t i = 0; i < NFAMILIES; i++) {
		if (fs->fam_opts[i] && families[i]->opts_free)
			families[i]->opts_free(fs->fam_opts[i]);
		free(fs->fam_opts[i]);
		free(fs->fam_opt_first[i]);
	}
	free(fs->opt.source);
	free(fs->opt.format);
	free(fs->shown);
	for (size_t i = 0; fs->shown_argv && fs->shown_argv[i]; i++)
		free(fs->shown_argv[i]);
	free(fs->shown_argv);
	for (size_t i = 0; i < fs->nremote_kv; i++)
		free(fs->remote_kv[i]);
	free(fs->remote_kv);
	free(fs->remote_first);
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts cmd;
	struct fuse_session *se = NULL;
	struct nf_fs fs;
	int status;

	/* A fixed mmap threshold: big arrays (the tree's nodes, names, pieces)
	 * grow by mremap instead of a copy, and big freed buffers go back to
	 * the system; glibc's dynamic threshold would move them to the heap
	 * after the first big free (issue 6: peak RSS at mount). */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	memset(&fs, 0, sizeof fs);
	memset(&cmd, 0, sizeof cmd);
	fs.foreground = true;   /* stderr until daemonized */
	if (parse_args(&fs, &args, &cmd, &se, &status) < 0)
		goto out;
	if (fs.opt.fake) {
		status = NF_EXIT_OK;
		goto out;
	}
	if ((status = open_source(&fs, argc, argv)) != 0)
		goto out;
	if ((status = prepare(&fs)) < 0) {
		status = status == -EEXIST ? NF_EXIT_DIRECTORY : NF_EXIT_ENTRY;
		goto out;
	}
	status = NF_EXIT_MOUNT;
	if (pthread_key_create(&fs.thread_key, nf_thread_free) != 0)
		goto out;
	fs.key_made = true;
	if (nf_handles_init(&fs) < 0)
		goto out;
	openlog("ninferfs", LOG_PID, LOG_DAEMON);
	status = run_session(&fs, se, &cmd);
out:
	if (se)
		fuse_session_destroy(se);
	fs_free(&fs);
	free(cmd.mountpoint);
	fuse_opt_free_args(&args);
	return status;
}
