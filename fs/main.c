/* fs/main.c — ninferfs: options, validation, mount, daemonize, serve.
 *
 *   ninferfs ENTRY MOUNTPOINT [-o opt,...] [-f] [-d] [-s]
 *
 * The artifact is opened and validated before anything is mounted; the
 * tree is built once; only then is the mount made.  Without -f the process
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

static const struct fuse_opt opt_spec[] = {
	NF_OPT("decoded_dtype=%s", decoded_dtype, 0),
	NF_OPT("max_json=%s", max_json, 0),
	NF_OPT("lenient", lenient, 1),
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
		"usage: %s ENTRY MOUNTPOINT [-o opt,...] [-f] [-d] [-s]\n"
		"Mount the NInfer v3 artifact set whose entry file is ENTRY, read-only.\n\n"
		"ninferfs options:\n"
		"    -o decoded_dtype=f32|bf16|f16  element type of decoded/ views (f32)\n"
		"    -o lenient             mount even with directory errors\n"
		"    -o max_json=BYTES      refuse a larger JSON directory (4G; K, M, G, T)\n"
		"    -o uring_depth=N       io_uring entries per worker thread, 1-4096 (%u)\n"
		"    -o threads=N           FUSE worker threads, 1-1024 (%u)\n"
		"    -o uid=N,gid=N         owner of every file, 0-4294967294 (the caller's)\n"
		"    -o umask=M             octal mask applied to 0444/0555, 0-0777 (0)\n"
		"    -h, --help             this help\n"
		"    -V, --version          version\n\n"
		"exit status: 0 mounted, 4 directory errors (refused), 8 cannot read the\n"
		"entry, 16 usage error, 32 mount failed.  See ninferfs(1), ninferfs(5).\n",
		prog, NF_DEFAULT_URING_DEPTH, NF_DEFAULT_THREADS);
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

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct nf_options *o = data;

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
		return 1;
	case FUSE_OPT_KEY_NONOPT:
		if (o->entry == NULL) {
			o->entry = strdup(arg);
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

static int add_default_opts(struct fuse_args *args, const struct nf_options *o, const char *entry)
{
	char *abs = realpath(entry, NULL);
	char *esc = opt_escape(abs ? abs : entry), *opt = NULL;
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

static int check_options(struct nf_options *o, const char *prog)
{
	if (o->decoded_dtype == NULL || !strcmp(o->decoded_dtype, "f32"))
		o->dtype = NF_DTYPE_F32;
	else if (!strcmp(o->decoded_dtype, "bf16"))
		o->dtype = NF_DTYPE_BF16;
	else if (!strcmp(o->decoded_dtype, "f16"))
		o->dtype = NF_DTYPE_F16;
	else {
		fprintf(stderr, "%s: decoded_dtype must be f32, bf16 or f16, not '%s'\n", prog,
			o->decoded_dtype);
		return -1;
	}
	o->max_json_bytes = NF_DEFAULT_MAX_JSON;
	if (o->max_json && (nf_parse_size(o->max_json, &o->max_json_bytes) != 0 ||
			    o->max_json_bytes == 0)) {
		fprintf(stderr, "%s: max_json must be a positive size (e.g. 4G), not '%s'\n", prog,
			o->max_json);
		return -1;
	}
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
	if (fuse_opt_parse(args, &fs->opt, opt_spec, opt_proc) != 0)
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
	if (fs->opt.entry == NULL || cmd->mountpoint == NULL) {
		usage(stderr, prog);
		return -1;
	}
	if (check_options(&fs->opt, prog) < 0)
		return -1;
	if (add_default_opts(args, &fs->opt, fs->opt.entry) < 0)
		return -1;
	/* The session is made now, before the artifact is read, because it
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

/* Open and validate; returns an exit status (0: go on). */
static int open_artifact(struct nf_fs *fs, int argc, char **argv)
{
	const char *entry = fs->opt.entry;
	struct nf_report *r = &fs->report;
	int rc;

	/* uses.json is made on open (nf_uses_json), not kept: for a large set
	 * it is the largest text of the model after the JSON itself */
	struct nf_open_opts oo = {.flags = NF_OPEN_LAZY_USES_JSON, .max_json = fs->opt.max_json_bytes};
	rc = nf_artifact_open_opts(entry, &oo, r, &fs->a);
	if (rc < 0 || fs->a == NULL) {
		size_t dir_errors = nf_report_count(r, NF_SEV_ERROR, NF_SCOPE_DIRECTORY);
		struct stat st;

		nf_report_print_text(stderr, r, NULL, entry);
		/* a header or JSON the reader rejects is a directory error: the
		 * entry was read, it is refused (there is no model to mount,
		 * even with -o lenient) */
		if (dir_errors) {
			fprintf(stderr, "ninferfs: %s: refused: %zu directory error%s (its header or "
					"JSON cannot be read as an artifact, even with -o lenient)\n",
				entry, dir_errors, dir_errors == 1 ? "" : "s");
			return NF_EXIT_DIRECTORY;
		}
		if (rc == -EINVAL && stat(entry, &st) == 0 && !S_ISREG(st.st_mode))
			fprintf(stderr, "ninferfs: cannot read %s: not a regular file\n", entry);
		else
			fprintf(stderr, "ninferfs: cannot read %s: %s\n", entry,
				strerror(rc < 0 ? -rc : EIO));
		return NF_EXIT_ENTRY;
	}
	nf_artifact_check_files(fs->a, r);
	if (nf_report_has_code(r, "FILE_OPEN_LIMIT")) {
		/* not even one part could get a descriptor: operational (issue 11) */
		nf_report_print_text(stderr, r, fs->a, entry);
		fprintf(stderr, "ninferfs: %s: no descriptor left to open its parts: not mounted "
				"(raise ulimit -n)\n", entry);
		return NF_EXIT_ENTRY;
	}
	if (!fs->a->directory_ok && !fs->opt.lenient) {
		size_t dir_errors = nf_report_count(r, NF_SEV_ERROR, NF_SCOPE_DIRECTORY);

		nf_report_print_text(stderr, r, fs->a, entry);
		fprintf(stderr, "ninferfs: %s: refused: %zu directory error%s (-o lenient mounts what "
				"is consistent)\n", entry, dir_errors, dir_errors == 1 ? "" : "s");
		return NF_EXIT_DIRECTORY;
	}
	if (r->count > 0)
		nf_report_print_text(stderr, r, fs->a, entry);
	fs->validation_json = nf_report_to_json(r, fs->a, entry, "ninferfs", argc, argv);
	if (fs->validation_json == NULL || nf_files_doc_init(fs) < 0) {
		fprintf(stderr, "ninferfs: out of memory\n");
		return NF_EXIT_ENTRY;
	}
	/* Nothing reads the JSON text from here on (artifact.json and
	 * uses.json are read from the entry when opened; uses.json's size was
	 * counted while reading): on a large set it is a third of the memory,
	 * so it goes before the tree is built, the daemon's peak. */
	nf_artifact_drop_json_text(fs->a);
	return 0;
}

/* The sizes of the files made on open: uses.json (when the reader did not
 * keep it), counted without making it, and model.safetensors by building
 * its header, which is kept. */
struct sizes_job {
	struct nf_fs *fs;
	int uses_rc, st_rc;
};

static void *sizes_run(void *arg)
{
	struct sizes_job *job = arg;
	struct nf_fs *fs = job->fs;

	if (fs->a->uses_json == NULL)
		job->uses_rc = nf_uses_json_size(fs->a, &fs->uses_bytes);
	job->st_rc = nf_safetensors_build(&fs->st, fs->a, fs->opt.dtype);
	return NULL;
}

/* Everything the daemon needs besides the session. */
static int prepare(struct nf_fs *fs)
{
	char err[2048] = "";
	struct stat st;
	int rc;

	fs->fds = calloc(fs->a->nfiles, sizeof *fs->fds);
	fs->files = calloc(fs->a->nfiles, sizeof *fs->files);
	if (fs->fds == NULL || fs->files == NULL)
		return -ENOMEM;
	/* Fixed files when the reader's open-file cache holds every part:
	 * each file is acquired now and held until unmount, so its descriptor
	 * never changes and the rings register it once.  Otherwise the rings
	 * take plain descriptors that each read acquires (readpath.c). */
	struct nf_files_stats fst;
	nf_files_stats(fs->a, &fst);
	fs->fixed_files = fs->a->nfiles <= 1 || fs->a->nfiles - 1 <= fst.open_max;
	for (uint32_t i = 0; i < fs->a->nfiles; i++) {
		int fd = fs->fixed_files ? nf_file_acquire(fs->a, i) : -1;
		if (fd == -EMFILE || fd == -ENFILE)
			fs->fixed_files = false;   /* let go of them all below */
		fs->fds[i] = fd >= 0 ? fd : -1;
		if (__builtin_add_overflow(fs->set_bytes, fs->a->files[i].file_bytes, &fs->set_bytes))
			fs->set_bytes = UINT64_MAX;
	}
	for (uint32_t i = 0; !fs->fixed_files && i < fs->a->nfiles; i++) {
		if (fs->fds[i] >= 0)
			nf_file_release(fs->a, i);
		fs->fds[i] = -1;
	}
	if (stat(fs->opt.entry, &st) == 0)
		fs->mtime = st.st_mtim;
	fs->uid = fs->opt.has_uid ? fs->opt.uid : getuid();
	fs->gid = fs->opt.has_gid ? fs->opt.gid : getgid();
	fs->umask = fs->opt.has_umask ? fs->opt.umask : 0;
	/* The generated files' sizes are made on the other core while the
	 * tree is built: both only read the model (issue 6: mount time). */
	struct sizes_job job = {.fs = fs};
	pthread_t side;
	bool threaded = pthread_create(&side, NULL, sizes_run, &job) == 0;
	if (!threaded)
		sizes_run(&job);
	struct nf_tree_docs docs = {.validation_json = fs->validation_json,
				    .dtype = fs->opt.dtype,
				    .safetensors = true};
	rc = nf_tree_build(&fs->tree, fs->a, &docs, err, sizeof err);
	if (threaded)
		pthread_join(side, NULL);
	if (job.st_rc == 0)
		fs->has_st = true;
	if (rc == -EEXIST) {
		/* two records, one path (man ninferfs.5, NAMES): exit 4 */
		fprintf(stderr, "ninferfs: %s: not mounted: %s\n", fs->opt.entry, err);
		return rc;
	}
	if (rc < 0) {
		fprintf(stderr, "ninferfs: cannot build the tree: %s\n", err);
		return rc;
	}
	if (job.st_rc < 0 || job.uses_rc < 0) {
		fprintf(stderr, "ninferfs: cannot build %s: %s\n",
			job.st_rc < 0 ? "model.safetensors" : "uses.json",
			strerror(job.st_rc < 0 ? -job.st_rc : -job.uses_rc));
		return job.st_rc < 0 ? job.st_rc : job.uses_rc;
	}
	nf_tree_set_size(&fs->tree, fs->tree.uses_node, fs->uses_bytes);
	nf_tree_set_size(&fs->tree, fs->tree.st_node, fs->st.size);
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
		const struct nf_report *r = &ra->fs->report;
		size_t errs = nf_report_count(r, NF_SEV_ERROR, -1);
		size_t warns = nf_report_count(r, NF_SEV_WARNING, -1);

		raise_readahead(ra->fs, st.st_dev);
		if (errs || warns)
			nf_log(ra->fs, errs ? LOG_ERR : LOG_WARNING,
			       "%s mounted on %s with %zu errors and %zu warnings (see validation.json)",
			       ra->fs->opt.entry, ra->mountpoint, errs, warns);
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
	nf_tree_free(&fs->tree);
	if (fs->has_st)
		nf_safetensors_free(&fs->st);
	free(fs->fds);
	free(fs->files);
	free(fs->validation_json);
	nf_files_doc_free_all(fs);
	if (fs->a)
		nf_artifact_close(fs->a);
	nf_report_free(&fs->report);
	free(fs->opt.entry);
	free(fs->opt.decoded_dtype);
	free(fs->opt.max_json);
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
	nf_raise_fd_limit();   /* sets with many parts (issue 11) */
	memset(&fs, 0, sizeof fs);
	memset(&cmd, 0, sizeof cmd);
	fs.foreground = true;   /* stderr until daemonized */
	nf_report_init(&fs.report);
	if (parse_args(&fs, &args, &cmd, &se, &status) < 0)
		goto out;
	if (fs.opt.fake) {
		status = NF_EXIT_OK;
		goto out;
	}
	nf_guard_mapped_json(true);   /* until open_artifact() drops the mapped JSON */
	if ((status = open_artifact(&fs, argc, argv)) != 0)
		goto out;
	nf_guard_mapped_json(false);
	status = NF_EXIT_ENTRY;
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
