/* fs/calbin/tree.c — the tree of a calbin package (man ninferfs.5, CALBIN
 * PACKAGES) through the builder API of fs/tree.h.
 *
 * Views: package/ files, params/ files are single spans of the logical
 * space (the package's files joined in path order, files.c); a devices/
 * image is the pieces of its cb_image (sorted and disjoint, the later map
 * line winning, calbin/image.c) laid end to end with zero runs between
 * them: the interval index a read or an lseek binary-searches.  Every
 * document is a MEMORY view of a text made here and owned by the tree.
 * Build order is a function of the package alone: inode numbers are
 * stable. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs/calbin/cbmount.h"

struct op_docs;

struct build {
	struct nf_builder b;
	struct nf_calbin *c;
	const struct cb_package *p;
	bool pub;
	struct op_docs *ops;     /* made before the build (ops()) */
};

/* "package file \"x\"", "map line 12", ... (nf_builder.describe) */
static void describe(const struct nf_builder *bb, const struct nf_rec *r, struct nf_msg *m)
{
	const struct build *b = (const struct build *)bb;
	char num[64];

	switch (r->role) {
	case CBM_ROLE_PKG_FILE:
	case CBM_ROLE_PKG_DIR:
		nf_msg_put(m, "package file ");
		nf_msg_name(m, b->p->files[r->ref].path);
		break;
	case CBM_ROLE_PARAM:
		snprintf(num, sizeof num, "map line %" PRIu64 " (chip %u)", b->p->maps[r->ref].line,
			 r->ref2);
		nf_msg_put(m, num);
		break;
	case CBM_ROLE_OP:
		nf_msg_put(m, "op ");
		nf_msg_name(m, b->p->submodels[r->ref].ops[r->ref2].name);
		nf_msg_put(m, " of ");
		nf_msg_name(m, b->p->submodels[r->ref].dir);
		break;
	default:
		nf_msg_put(m, r->role == CBM_ROLE_DIR ? "a directory" : "a file");
		break;
	}
}

/* A document: `text` (NULL: out of memory) owned by the tree. */
static int64_t doc_len(struct build *b, uint32_t parent, const char *name, char *text, size_t len)
{
	struct nf_view v;

	if (!text)
		return nf_build_fail(&b->b, -ENOMEM, "out of memory making %s", name);
	if (nf_build_own(&b->b, text) < 0) {
		free(text);
		return nf_build_fail(&b->b, -ENOMEM, "out of memory");
	}
	nf_view_memory(&v, text, len);
	return nf_build_file(&b->b, parent, name, CBM_ROLE_DOCUMENT, &v);
}

static int64_t doc(struct build *b, uint32_t parent, const char *name, char *text)
{
	return doc_len(b, parent, name, text, text ? strlen(text) : 0);
}

/* A text the family keeps (the reports): not owned by the tree. */
static int64_t kept_doc(struct build *b, uint32_t parent, const char *name, const char *text)
{
	return nf_build_doc(&b->b, parent, name, CBM_ROLE_DOCUMENT, text);
}

static int64_t dir(struct build *b, uint32_t parent, const char *name)
{
	return nf_build_dir(&b->b, parent, name, strlen(name), CBM_ROLE_DIR);
}

/* The logical offset of byte `off` of package file i. */
static uint64_t logical_of(const struct build *b, int i, uint64_t off)
{
	return b->c->files.extents[b->c->set_of[i]].logical + off;
}

/* ---- root documents ----------------------------------------------------------- */

static int root_docs(struct build *b)
{
	const struct cb_package *p = b->p;
	struct nf_view v;
	int64_t rc = 0;

	if (!b->pub)
		rc = kept_doc(b, 0, "validation.json", b->c->validation_json);
	if (rc >= 0)
		rc = kept_doc(b, 0, "validation.public.json", b->c->validation_public_json);
	if (rc >= 0 && p->manifest)
		rc = doc(b, 0, "manifest.json", cb_manifest_json(p, b->pub));
	if (rc >= 0)
		rc = doc(b, 0, "memory.json", cb_mount_memory_json(p, b->c->images, b->c->nimages,
								   b->pub));
	if (rc >= 0) {
		memset(&v, 0, sizeof v);
		v.kind = NF_VIEW_FILES;
		rc = nf_build_file(&b->b, 0, "files.json", CBM_ROLE_DOCUMENT, &v);
	}
	if (rc >= 0) {
		memset(&v, 0, sizeof v);
		v.kind = NF_VIEW_STATS;
		rc = nf_build_file(&b->b, 0, "stats", CBM_ROLE_STATS, &v);
	}
	return rc < 0 ? (int)rc : 0;
}

/* ---- package/ -------------------------------------------------------------------- */

static int package(struct build *b)
{
	const struct cb_package *p = b->p;
	int64_t top = dir(b, 0, "package");
	if (top < 0)
		return (int)top;
	int64_t *node = malloc((p->nfiles ? p->nfiles : 1) * sizeof *node);
	if (!node)
		return nf_build_fail(&b->b, -ENOMEM, "out of memory");
	int rc = 0;
	for (size_t i = 0; i < p->nfiles && rc >= 0; i++) {
		const struct cb_file *f = &p->files[i];
		const char *slash = strrchr(f->path, '/');
		const char *name = slash ? slash + 1 : f->path;
		node[i] = -1;
		int64_t parent = top;
		if (slash) {
			/* files[] is sorted by path: the directory came first */
			char *d = strndup(f->path, (size_t)(slash - f->path));
			int pi = d ? cb_package_find(p, d) : -1;
			free(d);
			parent = pi >= 0 ? node[pi] : -1;
		}
		if (parent < 0)
			continue;   /* below a directory the tree does not show */
		struct nf_rec r = {.ref = (uint32_t)i, .parent = (uint32_t)parent};
		if (S_ISDIR(f->type) && !f->symlink) {
			r.role = CBM_ROLE_PKG_DIR;
			node[i] = nf_build_verbatim(&b->b, &r, name, strlen(name), NULL);
			rc = node[i] < 0 ? (int)node[i] : 0;
		} else if (b->c->set_of[i] >= 0) {
			struct nf_view v;
			r.role = CBM_ROLE_PKG_FILE;
			rc = nf_view_span(&b->b.pieces, logical_of(b, (int)i, 0), f->size, &v);
			if (rc >= 0) {
				int64_t n = nf_build_verbatim(&b->b, &r, name, strlen(name), &v);
				rc = n < 0 ? (int)n : 0;
			}
		}
	}
	free(node);
	return rc;
}

/* ---- params/ ------------------------------------------------------------------------- */

struct param {
	unsigned chip;
	int domain;
	uint64_t vaddr;
	size_t map;
};

static int by_key(const void *x, const void *y)
{
	const struct param *a = x, *b = y;
	if (a->chip != b->chip)
		return a->chip < b->chip ? -1 : 1;
	if (a->domain != b->domain)
		return a->domain < b->domain ? -1 : 1;
	if (a->vaddr != b->vaddr)
		return a->vaddr < b->vaddr ? -1 : 1;
	return a->map < b->map ? -1 : a->map > b->map;
}

static bool same_name(const struct param *a, const struct param *b)
{
	return a->chip == b->chip && a->domain == b->domain && a->vaddr == b->vaddr;
}

/* params/chip<N>/<domain>/ for every chip and reservation: their nodes in
 * dirs[chip * CB_DOMAIN_COUNT + domain]. */
static int chip_dirs(struct build *b, uint32_t top, int64_t *dirs)
{
	for (unsigned chip = 0; chip < b->c->chips; chip++) {
		char name[32];
		snprintf(name, sizeof name, "chip%u", chip);
		int64_t cd = dir(b, top, name);
		if (cd < 0)
			return (int)cd;
		for (int d = 0; d < CB_DOMAIN_COUNT; d++) {
			dirs[chip * CB_DOMAIN_COUNT + d] = -1;
			if (!b->p->reservations[d].present)
				continue;
			int64_t dd = dir(b, (uint32_t)cd, cb_domain_name((enum cb_domain)d));
			if (dd < 0)
				return (int)dd;
			dirs[chip * CB_DOMAIN_COUNT + d] = dd;
		}
	}
	return 0;
}

static int params(struct build *b)
{
	const struct cb_package *p = b->p;
	unsigned chips = b->c->chips;
	int64_t top = dir(b, 0, "params");
	if (top < 0)
		return (int)top;
	int64_t *dirs = malloc(((size_t)chips * CB_DOMAIN_COUNT + 1) * sizeof *dirs);
	size_t n = 0, cap = 0;
	struct param *v = NULL;
	int rc = dirs ? chip_dirs(b, (uint32_t)top, dirs) : -ENOMEM;
	for (size_t i = 0; rc >= 0 && i < p->nmaps; i++) {
		const struct cb_map *m = &p->maps[i];
		for (unsigned chip = 0; m->valid && chip < chips; chip++) {
			if (!cb_mask_has(m->mask, chip))
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				struct param *nv = reallocarray(v, cap, sizeof *v);
				if (!nv) {
					rc = -ENOMEM;
					break;
				}
				v = nv;
			}
			v[n++] = (struct param){chip, m->domain, m->vaddr, i};
		}
	}
	if (rc >= 0 && n > 1)
		qsort(v, n, sizeof *v, by_key);
	/* one vaddr of one chip and domain: 0x..., 0x...~1, 0x...~2 in line order */
	unsigned k = 0;
	for (size_t i = 0; rc >= 0 && i < n; i++) {
		const struct param *x = &v[i];
		const struct cb_map *m = &p->maps[x->map];
		k = i && same_name(x, &v[i - 1]) ? k + 1 : 0;
		char name[48];
		int len = k ? snprintf(name, sizeof name, "0x%016" PRIx64 "~%u", x->vaddr, k)
			    : snprintf(name, sizeof name, "0x%016" PRIx64, x->vaddr);
		struct nf_view view;
		rc = nf_view_span(&b->b.pieces, logical_of(b, m->file_index, m->offset), m->size, &view);
		if (rc < 0)
			break;
		struct nf_rec r = {.role = CBM_ROLE_PARAM, .ref = (uint32_t)x->map, .ref2 = x->chip,
				   .parent = (uint32_t)dirs[x->chip * CB_DOMAIN_COUNT + x->domain]};
		int64_t node = nf_build_unique(&b->b, &r, name, (size_t)len, false, &view);
		rc = node < 0 ? (int)node : 0;
	}
	free(v);
	free(dirs);
	return rc == -ENOMEM ? nf_build_fail(&b->b, rc, "out of memory") : rc;
}

/* ---- devices/ ---------------------------------------------------------------------------- */

/* The image as pieces: its mapped pieces, zero runs between them. */
static int image_view(struct build *b, const struct cb_image *img, struct nf_view *v)
{
	const struct cb_package *p = b->p;
	uint64_t at = 0;
	int rc = 0;

	nf_pieces_begin(&b->b.pieces, v);
	for (size_t i = 0; rc >= 0 && i < img->npieces; i++) {
		const struct cb_image_piece *pc = &img->pieces[i];
		if (pc->offset > at)
			rc = nf_pieces_add(&b->b.pieces, v, NF_PIECE_ZERO, pc->offset - at);
		if (rc >= 0)
			rc = nf_pieces_add(&b->b.pieces, v,
					   logical_of(b, p->maps[pc->map].file_index, pc->file_offset),
					   pc->length);
		at = pc->offset + pc->length;
	}
	if (rc >= 0 && img->size > at)
		rc = nf_pieces_add(&b->b.pieces, v, NF_PIECE_ZERO, img->size - at);
	return rc < 0 ? nf_pieces_fail(&b->b.pieces, v, rc) : 0;
}

static int devices(struct build *b)
{
	int64_t top = dir(b, 0, "devices");
	int64_t cd = -1;
	int rc = top < 0 ? (int)top : 0;

	for (unsigned chip = 0; rc >= 0 && chip < b->c->chips; chip++) {
		char name[32];
		snprintf(name, sizeof name, "chip%u", chip);
		cd = dir(b, (uint32_t)top, name);
		rc = cd < 0 ? (int)cd : 0;
	}
	for (size_t i = 0; rc >= 0 && i < b->c->nimages; i++) {
		const struct cb_image *img = &b->c->images[i];
		char name[32];
		struct nf_view v;
		snprintf(name, sizeof name, "chip%u", img->chip);
		cd = nf_build_find(&b->b, (uint32_t)top, name, strlen(name));
		rc = cd < 0 ? -EIO : image_view(b, img, &v);
		if (rc < 0)
			break;
		struct nf_rec r = {.role = CBM_ROLE_DEVICE, .ref = (uint32_t)i, .parent = (uint32_t)cd};
		const char *dom = cb_domain_name(img->domain);
		int64_t n = nf_build_unique(&b->b, &r, dom, strlen(dom), false, &v);
		rc = n < 0 ? (int)n : 0;
	}
	return rc == -ENOMEM ? nf_build_fail(&b->b, rc, "out of memory") : rc;
}

/* ---- submodels/ ------------------------------------------------------------------------------ */

/* The op documents (ops.json and one per op: some 1,400 of each submodel
 * of the sample) are made before the build, each submodel's on one of two
 * threads (mount time: issue 13's benchmark holds it against
 * calbin-check's). */
struct op_docs {
	char *all;               /* ops.json */
	char **op;               /* ops/<op>.json, nops of them; taken by the tree */
	bool oom;
};

struct op_job {
	const struct cb_package *p;
	struct op_docs *docs;
	size_t first;            /* submodels first, first + 2, ... */
};

static void *op_job_run(void *arg)
{
	struct op_job *j = arg;
	const struct cb_package *p = j->p;

	for (size_t si = j->first; si < p->nsubmodels; si += 2) {
		const struct cb_submodel *s = &p->submodels[si];
		struct op_docs *d = &j->docs[si];
		if (!s->ops_json)
			continue;
		d->all = cb_submodel_ops_json(p, si);
		d->op = calloc(s->nops ? s->nops : 1, sizeof *d->op);
		d->oom = !d->all || !d->op;
		for (size_t i = 0; !d->oom && i < s->nops; i++)
			d->oom = !(d->op[i] = cb_op_json(p, si, i));
	}
	return NULL;
}

static struct op_docs *make_op_docs(const struct cb_package *p)
{
	struct op_docs *docs = calloc(p->nsubmodels ? p->nsubmodels : 1, sizeof *docs);
	struct op_job jobs[2] = {{p, docs, 0}, {p, docs, 1}};
	pthread_t side;

	if (!docs)
		return NULL;
	bool threaded = p->nsubmodels > 1 && pthread_create(&side, NULL, op_job_run, &jobs[1]) == 0;
	op_job_run(&jobs[0]);
	if (threaded)
		pthread_join(side, NULL);
	else if (p->nsubmodels > 1)
		op_job_run(&jobs[1]);
	return docs;
}

static void free_op_docs(const struct cb_package *p, struct op_docs *docs)
{
	for (size_t si = 0; docs && si < p->nsubmodels; si++) {
		for (size_t i = 0; docs[si].op && i < p->submodels[si].nops; i++)
			free(docs[si].op[i]);
		free(docs[si].op);
		free(docs[si].all);
	}
	free(docs);
}

static int ops(struct build *b, size_t si, uint32_t sd)
{
	const struct cb_submodel *s = &b->p->submodels[si];
	struct op_docs *d = &b->ops[si];
	if (d->oom)
		return nf_build_fail(&b->b, -ENOMEM, "out of memory");
	int64_t rc = doc(b, sd, "ops.json", d->all);
	d->all = NULL;   /* the tree's now (or freed) */
	int64_t od = rc < 0 ? rc : dir(b, sd, "ops");

	if (od < 0)
		return (int)od;
	for (size_t i = 0; i < s->nops; i++) {
		char *text = d->op[i];
		char *name = NULL;
		if (asprintf(&name, "%s.json", s->ops[i].name) < 0 || nf_build_own(&b->b, text) < 0) {
			free(name);
			return nf_build_fail(&b->b, -ENOMEM, "out of memory");
		}
		d->op[i] = NULL;
		struct nf_view v;
		nf_view_memory(&v, text, strlen(text));
		struct nf_rec r = {.role = CBM_ROLE_OP, .ref = (uint32_t)si, .ref2 = (uint32_t)i,
				   .parent = (uint32_t)od};
		int64_t n = nf_build_leaf(&b->b, &r, name, strlen(name), &v, true);
		free(name);
		if (n < 0)
			return (int)n;
	}
	return 0;
}

static int submodel(struct build *b, uint32_t top, size_t si)
{
	const struct cb_package *p = b->p;
	const struct cb_submodel *s = &p->submodels[si];
	int64_t sd = dir(b, top, s->dir);
	int64_t rc = sd;

	if (rc >= 0)
		rc = doc(b, (uint32_t)sd, "metadata.json", cb_submodel_metadata_json(p, si, b->pub));
	if (rc >= 0)
		rc = doc(b, (uint32_t)sd, "io.json", cb_submodel_io_json(p, si, b->pub));
	if (rc >= 0 && !b->pub && s->ops_json)
		rc = ops(b, si, (uint32_t)sd);
	int64_t pd = rc < 0 ? rc : dir(b, (uint32_t)sd, "profparts");
	for (size_t chip = 0; pd >= 0 && rc >= 0 && chip < s->nprofparts; chip++) {
		size_t len = 0;
		if (s->profparts[chip].file_index < 0)
			continue;
		char name[32];
		snprintf(name, sizeof name, "chip%zu", chip);
		char *text = cb_profparts_text(p, si, chip, &len);
		rc = doc_len(b, (uint32_t)pd, name, text, len);
	}
	int64_t cd = rc < 0 ? rc : pd < 0 ? pd : dir(b, (uint32_t)sd, "commands");
	for (size_t i = 0; cd >= 0 && rc >= 0 && i < s->ncommands; i++) {
		char *name = cb_commands_doc_name(p, si, i);
		rc = name ? doc(b, (uint32_t)cd, name, cb_commands_doc_json(p, si, i))
			  : nf_build_fail(&b->b, -ENOMEM, "out of memory");
		free(name);
	}
	if (rc >= 0 && (pd < 0 || cd < 0))
		rc = pd < 0 ? pd : cd;
	return rc < 0 ? (int)rc : 0;
}

static int submodels(struct build *b)
{
	int64_t top = dir(b, 0, "submodels");
	int rc = top < 0 ? (int)top : 0;

	for (size_t i = 0; rc >= 0 && i < b->p->nsubmodels; i++)
		rc = submodel(b, (uint32_t)top, i);
	return rc;
}

int cbm_tree_build(struct nf_calbin *c, struct nf_tree *t, char *err, size_t errlen)
{
	struct build b = {.c = c, .p = c->p, .pub = c->opt->public_tree};
	int rc;

	b.b.describe = describe;
	b.b.arg = c;
	if (!b.pub && !(b.ops = make_op_docs(c->p))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = nf_build_begin(&b.b, t, CBM_ROLE_ROOT, 256 + 64 * (size_t)c->chips, err, errlen);
	if (rc < 0) {
		free_op_docs(c->p, b.ops);
		return rc;
	}
	rc = root_docs(&b);
	if (rc >= 0)
		rc = package(&b);
	if (rc >= 0 && !b.pub)
		rc = params(&b);
	if (rc >= 0 && !b.pub)
		rc = devices(&b);
	if (rc >= 0)
		rc = submodels(&b);
	free_op_docs(c->p, b.ops);
	if (rc < 0) {
		if (rc == -ENOMEM && !err[0])
			snprintf(err, errlen, "out of memory");
		nf_build_abort(&b.b);
		return rc;
	}
	return nf_build_end(&b.b);
}
