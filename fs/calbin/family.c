/* fs/calbin/family.c — the calbin family (fs/family.h; issue 13): its
 * option, the detection of a package directory, the package opened and
 * checked by calbin/ exactly as calbin-check does it, its files as the
 * adapter's set, the device images, and the ops table.
 *
 * Open: the findings go to stderr in calbin-check's text form; a package
 * with a Gate A, B or C error is refused (exit 4) unless -o lenient, like
 * an NInfer set with directory errors; one whose directory cannot be read
 * is exit 8.  The reports (validation.json and its public variant) are
 * made here, where the daemon's argv is known; the other documents when
 * the tree is built (tree.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs/calbin/cbmount.h"

/* ---- options ------------------------------------------------------------ */

static int calbin_option(void *opts, const char *arg)
{
	struct cbm_opts *o = opts;

	if (strcmp(arg, "public") != 0)
		return 0;
	o->public_tree = true;
	return 1;
}

static void calbin_opts_free(void *opts)
{
	(void)opts;
}

static bool calbin_detect(const char *source)
{
	return cb_package_probe(source) == 1;
}

/* ---- open ------------------------------------------------------------------ */

static void calbin_close(void *state)
{
	struct nf_calbin *c = state;

	if (!c)
		return;
	for (uint32_t i = 0; c->owned_paths && i < c->npaths; i++)
		free(c->owned_paths[i]);
	cbm_files_free(&c->files);
	for (size_t i = 0; i < c->nimages; i++)
		cb_image_free(&c->images[i]);
	free(c->images);
	free(c->owned_paths);
	free(c->names);
	free(c->paths);
	free(c->set_of);
	free(c->validation_json);
	free(c->validation_public_json);
	cb_package_close(c->p);
	nf_report_free(&c->report);
	free(c);
}

/* The Gate A-C errors: their count, and their codes in *codes (distinct,
 * in report order, malloc'd). */
static size_t gate_errors(const struct nf_report *r, char **codes)
{
	size_t n = 0, len = 0;
	char *s = NULL;

	for (size_t i = 0; i < r->count; i++) {
		const struct nf_finding *f = &r->items[i];
		if (f->severity != NF_SEV_ERROR || !f->gate || !strchr("ABC", f->gate))
			continue;
		n++;
		size_t k = strlen(f->code);
		bool seen = false;
		for (const char *x = s; x && !seen && (x = strstr(x, f->code)); x += k)
			seen = (x == s || x[-1] == ' ') && (x[k] == ',' || x[k] == '\0');
		if (seen)
			continue;
		char *t = realloc(s, len + k + 3);
		if (!t)
			continue;
		s = t;
		len += (size_t)sprintf(s + len, "%s%s", len ? ", " : "", f->code);
	}
	*codes = s;
	return n;
}

static int oom(void)
{
	fprintf(stderr, "ninferfs: out of memory\n");
	return NF_EXIT_ENTRY;
}

/* Read and check the package; returns an exit status (0: go on). */
static int open_package(struct nf_calbin *c, const struct nf_mount *m)
{
	struct cb_options co = {.hash_all = false};
	int rc = cb_package_open(c->dir, &co, &c->report, &c->p);

	if (rc < 0 || !c->p) {
		fprintf(stderr, "ninferfs: cannot read %s: %s\n", c->dir, strerror(rc < 0 ? -rc : EIO));
		return NF_EXIT_ENTRY;
	}
	cb_report_print_text(stderr, c->p, &c->report, false);
	if (!c->p->readable) {
		fprintf(stderr, "ninferfs: cannot read %s: the package directory cannot be read\n",
			c->dir);
		return NF_EXIT_ENTRY;
	}
	if (c->report.oom)
		return oom();
	char *codes = NULL;
	size_t errs = gate_errors(&c->report, &codes);
	if (errs && !m->lenient) {
		fprintf(stderr, "ninferfs: %s: refused: %zu error%s in Gates A-C (%s) (-o lenient "
			"mounts what is consistent)\n", c->dir, errs, errs == 1 ? "" : "s",
			codes ? codes : "");
		free(codes);
		return NF_EXIT_DIRECTORY;
	}
	free(codes);
	if (nf_report_count(&c->report, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL) && !m->lenient) {
		fprintf(stderr, "ninferfs: cannot read %s: a file of the package cannot be read (see "
			"above; -o lenient mounts the rest)\n", c->dir);
		return NF_EXIT_ENTRY;
	}
	return 0;
}

/* Every chip's image of every reserved domain, chip-major. */
static int make_images(struct nf_calbin *c)
{
	const struct cb_package *p = c->p;
	size_t doms = 0;

	for (int d = 0; d < CB_DOMAIN_COUNT; d++)
		doms += p->reservations[d].present;
	c->chips = cb_package_chips(p);
	if (!c->chips || !doms)
		return 0;
	c->images = calloc((size_t)c->chips * doms, sizeof *c->images);
	if (!c->images)
		return -ENOMEM;
	for (unsigned chip = 0; chip < c->chips; chip++)
		for (int d = 0; d < CB_DOMAIN_COUNT; d++) {
			if (!p->reservations[d].present)
				continue;
			int rc = cb_image_build(p, chip, (enum cb_domain)d, &c->images[c->nimages]);
			if (rc < 0)
				return rc;
			c->nimages++;
		}
	return 0;
}

/* The set: the package's regular files in path order (without those -o
 * public hides), with their display names and local paths. */
static int make_set(struct nf_calbin *c)
{
	const struct cb_package *p = c->p;
	int *to_file = calloc(p->nfiles ? p->nfiles : 1, sizeof *to_file);
	uint32_t n = 0;

	c->set_of = malloc((p->nfiles ? p->nfiles : 1) * sizeof *c->set_of);
	if (!to_file || !c->set_of) {
		free(to_file);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct cb_file *f = &p->files[i];
		bool shown = S_ISREG(f->type) && !f->escapes &&
			     !(c->opt->public_tree && cbm_hidden_in_public(p, i));
		c->set_of[i] = shown ? (int)n : -1;
		if (shown)
			to_file[n++] = (int)i;
	}
	int rc = cbm_files_init(&c->files, p, to_file, n);
	c->names = calloc(n ? n : 1, sizeof *c->names);
	c->paths = calloc(n ? n : 1, sizeof *c->paths);
	c->owned_paths = calloc(n ? n : 1, sizeof *c->owned_paths);
	if (rc < 0 || !c->names || !c->paths || !c->owned_paths) {
		free(to_file);
		return rc < 0 ? rc : -ENOMEM;
	}
	c->npaths = n;
	for (uint32_t i = 0; i < n; i++) {
		const char *path = p->files[to_file[i]].path;
		c->names[i] = path;
		if (asprintf(&c->owned_paths[i], "%s/%s", c->dir, path) < 0) {
			c->owned_paths[i] = NULL;
			free(to_file);
			return -ENOMEM;
		}
		c->paths[i] = c->owned_paths[i];
	}
	free(to_file);
	return 0;
}

static int calbin_open(const struct nf_mount *m, void *opts, struct nf_opened *out)
{
	struct nf_calbin *c = calloc(1, sizeof *c);
	struct stat st;

	if (!c)
		return oom();
	c->fs = m->fs;
	c->opt = opts;
	c->dir = m->source;
	nf_report_init(&c->report);
	int status = open_package(c, m);
	if (status != NF_EXIT_OK) {
		calbin_close(c);
		return status;
	}
	if (make_images(c) < 0 || make_set(c) < 0 ||
	    !(c->validation_public_json = cb_report_json(c->p, &c->report, true, "ninferfs", m->argc,
							 m->argv)) ||
	    (!c->opt->public_tree &&
	     !(c->validation_json = cb_report_json(c->p, &c->report, false, "ninferfs", m->argc,
						   m->argv)))) {
		calbin_close(c);
		return oom();
	}
	uint64_t total = 0;
	for (uint32_t i = 0; i < c->files.n; i++)
		total += c->files.extents[i].bytes;
	out->state = c;
	out->errors = nf_report_count(&c->report, NF_SEV_ERROR, -1);
	out->warnings = nf_report_count(&c->report, NF_SEV_WARNING, -1);
	out->set = (struct nf_set){.n = c->files.n,
				   .extents = NF_EXTENTS_PLAIN(c->files.extents, c->files.n, total),
				   .names = c->names, .paths = c->paths, .bytes = total,
				   .ops = &cbm_set_ops, .arg = c};
	if (stat(c->dir, &st) == 0)
		out->mtime = st.st_mtim;
	return NF_EXIT_OK;
}

/* ---- the tree -------------------------------------------------------------- */

static int calbin_build(void *state, struct nf_tree *t)
{
	struct nf_calbin *c = state;
	char err[2048] = "";
	int rc = cbm_tree_build(c, t, err, sizeof err);

	if (rc == -EEXIST) {
		fprintf(stderr, "ninferfs: %s: not mounted: %s\n", c->dir, err);
		return rc;
	}
	if (rc < 0) {
		fprintf(stderr, "ninferfs: cannot build the tree: %s\n", err[0] ? err : strerror(-rc));
		return rc;
	}
	c->tree = t;
	return 0;
}

const struct nf_family nf_family_calbin = {
	.name = "calbin",
	.help = "    -o public              calbin: no address anywhere (man ninferfs.5)\n",
	.opts_size = sizeof(struct cbm_opts),
	.option = calbin_option,
	.opts_free = calbin_opts_free,
	.check = NULL,
	.detect = calbin_detect,
	.open = calbin_open,
	.build = calbin_build,
	.xattr_get = cbm_xattr_get,
	.xattr_list = cbm_xattr_list,
	.close = calbin_close,
};
