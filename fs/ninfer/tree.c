/* fs/ninfer/tree.c — the NInfer tree of contract §2 from the artifact
 * (tree.h), made with the builder of fs/tree.h. */
#include "fs/ninfer/tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/attrs.h"
#include "fs/names.h"
#include "fs/ninfer/attrs.h"
#include "fs/ninfer/views.h"

struct ninfer_build {
	struct nf_builder b;
	const struct nf_artifact *a;
	/* the most payload spans of one decoded file (its parts): with the
	 * builder's max_pieces and the files' count it bounds every segments
	 * list (xattrs/) */
	uint64_t max_parts;
	/* binding_dirs(): the directory of the last name's prefix (names of
	 * one directory mostly follow each other: one lookup, not seven) */
	const char *last_name;
	size_t last_len;
	uint32_t last_top, last_dir;
};

/* "binding \"a/b\"", "object \"w\"", ... (nf_builder.describe) */
static void describe(const struct nf_builder *bb, const struct nf_rec *r, struct nf_msg *m)
{
	const struct ninfer_build *nb = bb->arg;
	const struct nf_artifact *a = nb->a;
	const struct nf_node *par = &bb->t->nodes[r->parent];

	switch (r->role) {
	case NF_ROLE_OBJECT:
	case NF_ROLE_PLANE:
	case NF_ROLE_DECODED_OBJECT:
		nf_msg_put(m, "object ");
		nf_msg_name(m, a->objects[r->ref].id);
		return;
	case NF_ROLE_BINDING:
	case NF_ROLE_DECODED_BINDING:
		nf_msg_put(m, "binding ");
		nf_msg_name(m, a->bindings[r->ref].name);
		return;
	case NF_ROLE_RESOURCE:
		nf_msg_put(m, "resource ");
		nf_msg_name(m, a->components[r->ref].resources[r->ref2].role);
		nf_msg_put(m, " of component ");
		nf_msg_name(m, a->components[r->ref].id);
		return;
	case NF_ROLE_COMPONENT:
		nf_msg_put(m, "component ");
		nf_msg_name(m, a->components[r->ref].id);
		return;
	default:
		if (par->role == NF_ROLE_COMPONENT) {
			nf_msg_put(m, "a file of component ");
			nf_msg_name(m, a->components[par->ref].id);
		} else {
			nf_msg_put(m, r->role == NF_ROLE_DIR ? "a directory" : "a file");
		}
	}
}

static char *owned_strdup(struct ninfer_build *nb, const char *fmt, const char *arg)
{
	char *s;

	if (asprintf(&s, fmt, arg) < 0)
		return NULL;
	if (nf_build_own(&nb->b, s) < 0) {
		free(s);
		return NULL;
	}
	return s;
}

static int add_top(struct ninfer_build *nb, const struct nf_ninfer_docs *d)
{
	const struct nf_artifact *a = nb->a;
	struct nf_builder *b = &nb->b;
	struct nf_view v;
	int64_t rc;

	/* read from the entry: the daemon drops the JSON text once validated
	 * (on a large set it was a third of the daemon's memory) */
	nf_view_file(&v, 0, NF_ENTRY_HEADER_BYTES, a->json_bytes);
	rc = nf_build_file(b, 0, "artifact.json", NF_ROLE_DOCUMENT, &v);
	if (rc >= 0)
		rc = nf_build_doc(b, 0, "validation.json", NF_ROLE_DOCUMENT, d->validation_json);
	if (rc >= 0) {
		/* the files' status may change while mounted (issue 11) */
		memset(&v, 0, sizeof v);
		v.kind = NF_VIEW_FILES;
		rc = nf_build_file(b, 0, "files.json", NF_ROLE_DOCUMENT, &v);
	}
	if (rc >= 0 && a->uses_json) {
		rc = nf_build_doc(b, 0, "uses.json", NF_ROLE_DOCUMENT, a->uses_json);
	} else if (rc >= 0) {
		nf_view_family(&v, NF_VIEW_USES, 0);   /* its size: after the build */
		rc = nf_build_file(b, 0, "uses.json", NF_ROLE_DOCUMENT, &v);
	}
	if (rc >= 0) {
		memset(&v, 0, sizeof v);
		v.kind = NF_VIEW_STATS;
		rc = nf_build_file(b, 0, "stats", NF_ROLE_STATS, &v);
	}
	return rc < 0 ? (int)rc : 0;
}

static int add_component(struct ninfer_build *nb, uint32_t ci, uint32_t top)
{
	const struct nf_artifact *a = nb->a;
	struct nf_builder *b = &nb->b;
	const struct nf_component *c = &a->components[ci];
	struct nf_rec rec = {.role = NF_ROLE_COMPONENT, .ref = ci, .parent = top};
	char esc[NF_NAME_MAX + 1];
	size_t n = nf_escape_component(c->id, strlen(c->id), esc);
	int64_t dir = nf_build_find(b, top, esc, n), rc;

	/* component ids are unique: one directory each, never shared (a cut
	 * name of another is refused, not merged) */
	if (dir >= 0)
		return nf_build_clash(b, (uint32_t)dir, &rec);
	dir = nf_build_node(b, &rec, esc, n, true, true);
	if (dir < 0)
		return (int)dir;
	rc = nf_build_doc(b, (uint32_t)dir, "config.json", NF_ROLE_DOCUMENT,
			  c->config_json ? c->config_json : "{}\n");
	if (rc >= 0 && c->target) {
		char *s = owned_strdup(nb, "%s\n", c->target);
		rc = s ? nf_build_doc(b, (uint32_t)dir, "target", NF_ROLE_DOCUMENT, s) : -ENOMEM;
	}
	if (rc >= 0 && c->proposal_json)
		rc = nf_build_doc(b, (uint32_t)dir, "proposal.json", NF_ROLE_DOCUMENT,
				  c->proposal_json);
	if (rc < 0 || c->nresources == 0)
		return rc < 0 ? (int)rc : 0;
	int64_t res = nf_build_dir(b, (uint32_t)dir, "resources", 9, NF_ROLE_DIR);
	if (res < 0)
		return (int)res;
	for (uint32_t r = 0; r < c->nresources; r++) {
		const struct nf_object *o = &a->objects[c->resources[r].object];
		const char *role = c->resources[r].role;
		struct nf_view v;

		rec = (struct nf_rec){.role = NF_ROLE_RESOURCE, .ref = ci, .ref2 = r,
				      .parent = (uint32_t)res};
		if ((rc = nf_view_span(&b->pieces, o->offset, o->bytes, &v)) < 0)
			return (int)rc;
		rc = nf_build_leaf(b, &rec, role, strlen(role), &v, false);
		if (rc < 0)
			return (int)rc;
	}
	return 0;
}

static int add_object(struct ninfer_build *nb, uint32_t oi, uint32_t objs, uint32_t planes)
{
	const struct nf_object *o = &nb->a->objects[oi];
	struct nf_builder *b = &nb->b;
	struct nf_view v;
	int64_t rc;

	struct nf_rec rec = {.role = NF_ROLE_OBJECT, .ref = oi, .parent = objs};

	if ((rc = nf_view_span(&b->pieces, o->offset, o->bytes, &v)) < 0)
		return (int)rc;
	rc = nf_build_unique(b, &rec, o->id, strlen(o->id), false, &v);
	if (rc < 0)
		return (int)rc;
	if (o->kind != NF_OBJ_TENSOR || o->codec_status != NF_CODEC_OK || !o->size_ok ||
	    o->geom.nplanes == 0)
		return 0;
	/* a plane directory stands for its object in messages (ref) */
	rec = (struct nf_rec){.role = NF_ROLE_DIR, .ref = oi, .parent = planes};
	int64_t dir = nf_build_unique(b, &rec, o->id, strlen(o->id), true, NULL);
	if (dir < 0)
		return (int)dir;
	for (unsigned p = 0; p < o->geom.nplanes; p++) {
		const struct nf_plane *pl = &o->geom.planes[p];
		uint64_t lo;

		if (__builtin_add_overflow(o->offset, pl->offset, &lo))
			return -EOVERFLOW;
		if ((rc = nf_view_span(&b->pieces, lo, pl->length, &v)) < 0)
			return (int)rc;
		rec = (struct nf_rec){.role = NF_ROLE_PLANE, .ref = oi, .ref2 = p,
				      .parent = (uint32_t)dir};
		rc = nf_build_unique(b, &rec, pl->name, strlen(pl->name), false, &v);
		if (rc < 0)
			return (int)rc;
	}
	return 0;
}

/* Directories of every binding name first, so that a leaf that is also a
 * prefix directory is seen as such and becomes %self. */
static int64_t binding_dirs(struct ninfer_build *nb, uint32_t top, const char *name, bool make)
{
	struct nf_builder *b = &nb->b;
	int64_t dir = top;
	const char *s = name, *slash;
	const char *leaf = strrchr(name, '/');
	size_t plen;

	/* no '/': a leaf of the top.  A '/' at 0 is not that: "/x" is the
	 * components "" and "x", bindings/%/x (man ninferfs.5, NAMES) */
	if (leaf == NULL)
		return top;
	plen = (size_t)(leaf - name);
	if (nb->last_name && nb->last_top == top && nb->last_len == plen &&
	    memcmp(nb->last_name, name, plen) == 0)
		return nb->last_dir;
	while ((slash = strchr(s, '/')) != NULL) {
		char esc[NF_NAME_MAX + 1];
		size_t n = nf_escape_component(s, (size_t)(slash - s), esc);
		dir = make ? nf_build_dir(b, (uint32_t)dir, esc, n, NF_ROLE_DIR)
			   : nf_build_find(b, (uint32_t)dir, esc, n);
		if (dir < 0)
			return dir;
		s = slash + 1;
	}
	nb->last_name = name;
	nb->last_len = plen;
	nb->last_top = top;
	nb->last_dir = (uint32_t)dir;
	return dir;
}

/* A bindings tree under `top`: the directories of every name first (only
 * directories are under `top` yet: no -EEXIST), then what the tree shows of
 * each binding (add_leaf: a leaf in `dir`, the binding's own directory, or
 * nothing; `leaf` is the last component of its name). */
typedef int64_t (*binding_leaf_fn)(struct ninfer_build *nb, uint32_t i, uint32_t dir,
				   const char *leaf, enum nf_dtype dtype);

static int add_binding_tree(struct ninfer_build *nb, uint32_t top, binding_leaf_fn add_leaf,
			    enum nf_dtype dtype)
{
	const struct nf_artifact *a = nb->a;

	for (uint32_t i = 0; i < a->nbindings; i++) {
		int64_t rc = binding_dirs(nb, top, a->bindings[i].name, true);
		if (rc < 0)
			return (int)rc;
	}
	for (uint32_t i = 0; i < a->nbindings; i++) {
		const char *name = a->bindings[i].name, *leaf = strrchr(name, '/');
		int64_t dir = binding_dirs(nb, top, name, false), rc;

		if (dir < 0)
			return (int)dir; /* made in the first pass */
		rc = add_leaf(nb, i, (uint32_t)dir, leaf ? leaf + 1 : name, dtype);
		if (rc < 0)
			return (int)rc;
	}
	return 0;
}

/* bindings/: the raw view of binding i (a binding with no raw leaf shows
 * under decoded/ only). */
static int64_t raw_binding_leaf(struct ninfer_build *nb, uint32_t i, uint32_t dir, const char *leaf,
				enum nf_dtype dtype)
{
	const struct nf_artifact *a = nb->a;
	struct nf_view v;
	int64_t rc = nf_view_binding(&nb->b.pieces, a, &a->bindings[i], &v);

	(void)dtype;
	if (rc != 0)
		return rc < 0 ? rc : 0;
	struct nf_rec rec = {.role = NF_ROLE_BINDING, .ref = i, .parent = dir};
	return nf_build_leaf(&nb->b, &rec, leaf, strlen(leaf), &v, true);
}

/* decoded/bindings: every binding whose parts decode to one dtype. */
static int64_t decoded_binding_leaf(struct ninfer_build *nb, uint32_t i, uint32_t dir,
				    const char *leaf, enum nf_dtype dtype)
{
	const struct nf_binding *bd = &nb->a->bindings[i];
	struct nf_view v;

	if (nf_view_decoded(nb->a, bd->parts, bd->nparts, dtype, &v) != 0)
		return 0;
	struct nf_rec rec = {.role = NF_ROLE_DECODED_BINDING, .ref = i, .parent = dir};
	int64_t rc = nf_build_leaf(&nb->b, &rec, leaf, strlen(leaf), &v, true);
	if (rc >= 0)
		nb->max_parts = bd->nparts > nb->max_parts ? bd->nparts : nb->max_parts;
	return rc;
}

/* decoded/objects: every tensor object, as one whole-object part (made
 * again from the object when read: nf_dview_of). */
static int add_decoded_objects(struct ninfer_build *nb, uint32_t top, enum nf_dtype dtype)
{
	const struct nf_artifact *a = nb->a;

	for (uint32_t i = 0; i < a->nobjects; i++) {
		const struct nf_object *o = &a->objects[i];
		struct nf_part pt = {.object = i, .begin = 0, .end = o->elements};
		struct nf_view v;
		int64_t rc;

		if (o->kind != NF_OBJ_TENSOR)
			continue;
		if (nf_view_decoded(a, &pt, 1, dtype, &v) != 0)
			continue;
		struct nf_rec rec = {.role = NF_ROLE_DECODED_OBJECT, .ref = i, .parent = top};
		rc = nf_build_unique(&nb->b, &rec, o->id, strlen(o->id), false, &v);
		if (rc < 0)
			return (int)rc;
		nb->max_parts = nb->max_parts ? nb->max_parts : 1;
	}
	return 0;
}

/* "<raw>.npy", malloc'd (NULL on ENOMEM). */
static char *npy_name(const char *raw, size_t len)
{
	char *s = len < SIZE_MAX - 5 ? malloc(len + 5) : NULL;

	if (s) {
		memcpy(s, raw, len);
		memcpy(s + len, ".npy", 5);
	}
	return s;
}

/* decoded/npy/bindings: "<leaf>.npy" beside the directories of the
 * names, for every binding decoded/bindings has whose shape holds its
 * elements.  A name that is a directory there (another binding is called
 * "<leaf>.npy/...") gives no file: <dir>/%self is that binding's name. */
static int64_t npy_binding_leaf(struct ninfer_build *nb, uint32_t i, uint32_t dir, const char *leaf,
				enum nf_dtype dtype)
{
	const struct nf_binding *bd = &nb->a->bindings[i];
	char esc[NF_NAME_MAX + 1], *name;
	struct nf_view v;
	int64_t rc;

	if (nf_view_npy(nb->a, bd->parts, bd->nparts, dtype, bd->rank, bd->shape, &v) != 0)
		return 0;
	if ((name = npy_name(leaf, strlen(leaf))) == NULL)
		return -ENOMEM;
	size_t n = nf_escape_component(name, strlen(name), esc);
	rc = nf_build_find(&nb->b, dir, esc, n);
	if (rc < 0 || !nb->b.t->nodes[rc].is_dir) {
		struct nf_rec rec = {.role = NF_ROLE_DECODED_BINDING, .ref = i, .parent = dir};
		rc = nf_build_leaf(&nb->b, &rec, name, strlen(name), &v, true);
	}
	free(name);
	return rc;
}

/* decoded/npy/objects: "<id>.npy" for every tensor decoded/objects has. */
static int add_npy_objects(struct ninfer_build *nb, uint32_t top, enum nf_dtype dtype)
{
	const struct nf_artifact *a = nb->a;

	for (uint32_t i = 0; i < a->nobjects; i++) {
		const struct nf_object *o = &a->objects[i];
		struct nf_part pt = {.object = i, .begin = 0, .end = o->elements};
		struct nf_view v;
		char *name;
		int64_t rc;

		if (o->kind != NF_OBJ_TENSOR ||
		    nf_view_npy(a, &pt, 1, dtype, o->rank, o->shape, &v) != 0)
			continue;
		if ((name = npy_name(o->id, strlen(o->id))) == NULL)
			return -ENOMEM;
		/* ids are unique, so are ids with one suffix */
		struct nf_rec rec = {.role = NF_ROLE_DECODED_OBJECT, .ref = i, .parent = top};
		rc = nf_build_unique(&nb->b, &rec, name, strlen(name), false, &v);
		free(name);
		if (rc < 0)
			return (int)rc;
	}
	return 0;
}

static int add_npy(struct ninfer_build *nb, uint32_t dec, enum nf_dtype dtype)
{
	struct nf_builder *b = &nb->b;
	int64_t npy = nf_build_dir(b, dec, "npy", 3, NF_ROLE_DIR), bind, objs;
	int rc;

	if (npy < 0)
		return (int)npy;
	bind = nf_build_dir(b, (uint32_t)npy, "bindings", 8, NF_ROLE_DIR);
	objs = nf_build_dir(b, (uint32_t)npy, "objects", 7, NF_ROLE_DIR);
	if (bind < 0 || objs < 0)
		return -ENOMEM;
	if ((rc = add_binding_tree(nb, (uint32_t)bind, npy_binding_leaf, dtype)) < 0)
		return rc;
	return add_npy_objects(nb, (uint32_t)objs, dtype);
}

static int add_decoded(struct ninfer_build *nb, const struct nf_ninfer_docs *d)
{
	struct nf_builder *b = &nb->b;
	int64_t dec = nf_build_dir(b, 0, "decoded", 7, NF_ROLE_DIR), bind, objs;
	int rc;

	if (dec < 0)
		return (int)dec;
	bind = nf_build_dir(b, (uint32_t)dec, "bindings", 8, NF_ROLE_DIR);
	objs = nf_build_dir(b, (uint32_t)dec, "objects", 7, NF_ROLE_DIR);
	if (bind < 0 || objs < 0)
		return -ENOMEM;
	if ((rc = add_binding_tree(nb, (uint32_t)bind, decoded_binding_leaf, d->dtype)) < 0)
		return rc;
	if ((rc = add_decoded_objects(nb, (uint32_t)objs, d->dtype)) < 0)
		return rc;
	if ((rc = add_npy(nb, (uint32_t)dec, d->dtype)) < 0)
		return rc;
	if (d->safetensors) {
		struct nf_view v;
		nf_view_family(&v, NF_VIEW_SAFETENSORS, 0);   /* its size: after the build */
		int64_t n = nf_build_file(b, (uint32_t)dec, "model.safetensors", NF_ROLE_SAFETENSORS,
					  &v);
		if (n < 0)
			return (int)n;
	}
	return 0;
}

/* ---- xattrs/: the whole values of cut attributes (fs/ninfer/attrs.h) --- */

/* Whether a string of the artifact is longer than NF_XATTR_STRING_MAX (a
 * pass over the records, not the nodes: there are 7x fewer). */
static bool long_strings(const struct nf_artifact *a)
{
	for (uint32_t i = 0; i < a->nobjects; i++) {
		const struct nf_object *o = &a->objects[i];
		/* known format and layout names are the registry's, short */
		bool unknown = o->codec_status == NF_CODEC_UNKNOWN_FORMAT ||
			       o->codec_status == NF_CODEC_UNKNOWN_LAYOUT;
		if (strlen(o->id) > NF_XATTR_STRING_MAX ||
		    (unknown && o->format && strlen(o->format) > NF_XATTR_STRING_MAX) ||
		    (unknown && o->layout && strlen(o->layout) > NF_XATTR_STRING_MAX))
			return true;
	}
	for (uint32_t i = 0; i < a->nbindings; i++)
		if (strlen(a->bindings[i].name) > NF_XATTR_STRING_MAX)
			return true;
	for (uint32_t i = 0; i < a->ncomponents; i++) {
		const struct nf_component *c = &a->components[i];
		if (strlen(c->id) > NF_XATTR_STRING_MAX)
			return true;
		for (uint32_t r = 0; r < c->nresources; r++)
			if (strlen(c->resources[r].role) > NF_XATTR_STRING_MAX)
				return true;
	}
	return false;
}

/* Payload spans of file node `idx` (0: no payload, no segments). */
static uint64_t node_spans(const struct ninfer_build *nb, uint32_t idx)
{
	const struct nf_node *n = &nb->b.t->nodes[idx];

	if (n->is_dir)
		return 0;
	switch (n->role) {
	case NF_ROLE_OBJECT:
	case NF_ROLE_PLANE:
	case NF_ROLE_BINDING:
	case NF_ROLE_RESOURCE:
		return n->kind == NF_NODE_SPAN ? 1 : n->kind == NF_VIEW_PIECES ? n->at >> 32 : 0;
	case NF_ROLE_DECODED_OBJECT:
		return 1;
	case NF_ROLE_DECODED_BINDING:
		return nb->a->bindings[n->ref].nparts;
	default:
		return 0;
	}
}

/* The directory under xattrs/ that mirrors node `idx`, made as needed. */
static int64_t mirror_dir(struct nf_builder *b, uint32_t idx)
{
	struct nf_tree *t = b->t;
	uint32_t *chain = NULL, n = 0, cap = 0;
	int64_t dir;

	for (uint32_t i = idx; i != 0; i = t->nodes[i].parent) {
		if (n == cap) {
			uint32_t *c = realloc(chain, (cap = cap ? 2 * cap : 16) * sizeof *c);
			if (c == NULL) {
				free(chain);
				return -ENOMEM;
			}
			chain = c;
		}
		chain[n++] = i;
	}
	dir = nf_build_dir(b, 0, "xattrs", 6, NF_ROLE_DIR);
	while (dir >= 0 && n-- > 0) {
		char name[NF_NAME_MAX + 1];   /* a copy: the name arena may move */
		const struct nf_node *nd = &t->nodes[chain[n]];
		memcpy(name, t->names + nd->name_off, nd->name_len);
		dir = nf_build_dir(b, (uint32_t)dir, name, nd->name_len, NF_ROLE_DIR);
	}
	free(chain);
	return dir;
}

/* xattrs/<path of idx>/<attr>: the whole value (len bytes at `mem`, which
 * outlives the tree). */
static int mirror_add(struct nf_builder *b, uint32_t idx, const char *attr, const char *mem,
		      size_t len)
{
	int64_t dir = mirror_dir(b, idx);
	struct nf_view v;

	if (dir < 0)
		return (int)dir;
	struct nf_rec rec = {.role = NF_ROLE_DOCUMENT, .parent = (uint32_t)dir};
	nf_view_memory(&v, mem, len);
	int64_t rc = nf_build_leaf(b, &rec, attr, strlen(attr), &v, false);
	return rc < 0 ? (int)rc : 0;
}

/* Every attribute value that attrs.h cuts gets its whole bytes as a file
 * under xattrs/ (which exists only then).  Cheap on ordinary sets: the
 * strings are checked once over the records, and a node's segments list
 * is made only when (spans x files x the longest entry) could pass the
 * limit, which needs hundreds of files or parts. */
static int add_xattr_files(struct ninfer_build *nb)
{
	const struct nf_artifact *a = nb->a;
	struct nf_builder *b = &nb->b;
	struct nf_tree *t = b->t;
	uint32_t n0 = t->nnodes;
	uint64_t max_spans = b->max_pieces > nb->max_parts ? b->max_pieces : nb->max_parts;
	size_t entry_max = 0;
	bool strings = long_strings(a);
	int rc;

	uint64_t bound;
	bool segments;

	for (uint32_t f = 0; f < a->nfiles; f++) {
		size_t e = nf_segment_entry_bound(a, f);
		entry_max = e > entry_max ? e : entry_max;
	}
	/* no list can pass the limit: nothing to look at (ordinary sets) */
	segments = __builtin_mul_overflow(max_spans, (uint64_t)a->nfiles * entry_max, &bound) ||
		   bound + 64 > NF_XATTR_VALUE_MAX;
	if (!strings && !segments)
		return 0;
	for (uint32_t i = 1; i < n0; i++) {
		for (int w = 0; strings && w < NF_ATTR_NSTR; w++) {
			const char *s = nf_node_string(a, &t->nodes[i], (enum nf_str_attr)w);
			if (s && strlen(s) > NF_XATTR_STRING_MAX &&
			    (rc = mirror_add(b, i, nf_str_attr_names[w], s, strlen(s))) < 0)
				return rc;
		}
		uint64_t spans = segments ? node_spans(nb, i) : 0;
		if (spans == 0 || (!__builtin_mul_overflow(spans, (uint64_t)a->nfiles * entry_max,
							   &bound) &&
				   bound + 64 <= NF_XATTR_VALUE_MAX))
			continue;
		struct nf_view v;
		struct nf_dview dv;
		size_t len;
		nf_build_view(b, i, &v);
		bool dec = v.kind == NF_VIEW_DECODED || v.kind == NF_VIEW_NPY;
		if (dec)
			nf_dview_of(a, &t->nodes[i], &v, &dv);
		char *full = nf_segments_json(a, &v, dec ? &dv : NULL, 0, &len, NULL);
		if (full == NULL)
			return -ENOMEM;
		if (len <= NF_XATTR_VALUE_MAX) {
			free(full);
			continue;
		}
		if ((rc = nf_build_own(b, full)) < 0) {
			free(full);
			return rc;
		}
		if ((rc = mirror_add(b, i, "user.ninfer.segments", full, len)) < 0)
			return rc;
	}
	return 0;
}

static int build_all(struct ninfer_build *nb, const struct nf_ninfer_docs *d)
{
	const struct nf_artifact *a = nb->a;
	struct nf_builder *b = &nb->b;
	int64_t comps, objs, planes, binds;
	int rc;

	if ((rc = add_top(nb, d)) < 0)
		return nf_build_fail(b, rc, "top-level files: %s", strerror(-rc));
	comps = nf_build_dir(b, 0, "components", 10, NF_ROLE_DIR);
	objs = nf_build_dir(b, 0, "objects", 7, NF_ROLE_DIR);
	planes = nf_build_dir(b, 0, "planes", 6, NF_ROLE_DIR);
	binds = nf_build_dir(b, 0, "bindings", 8, NF_ROLE_DIR);
	if (comps < 0 || objs < 0 || planes < 0 || binds < 0)
		return nf_build_fail(b, -ENOMEM, "top-level directories");
	/* -EEXIST: nf_build_clash() has said which two records collide */
	for (uint32_t i = 0; i < a->ncomponents; i++)
		if ((rc = add_component(nb, i, (uint32_t)comps)) < 0)
			return rc == -EEXIST ? rc : nf_build_fail(b, rc, "component %s: %s",
								  a->components[i].id,
								  strerror(-rc));
	for (uint32_t i = 0; i < a->nobjects; i++)
		if ((rc = add_object(nb, i, (uint32_t)objs, (uint32_t)planes)) < 0)
			return rc == -EEXIST ? rc : nf_build_fail(b, rc, "object %s: %s",
								  a->objects[i].id, strerror(-rc));
	if ((rc = add_binding_tree(nb, (uint32_t)binds, raw_binding_leaf,
				   NF_DTYPE_F32 /* unused: raw */)) < 0)
		return rc == -EEXIST ? rc : nf_build_fail(b, rc, "bindings: %s", strerror(-rc));
	if ((rc = add_decoded(nb, d)) < 0)
		return rc == -EEXIST ? rc : nf_build_fail(b, rc, "decoded: %s", strerror(-rc));
	if ((rc = add_xattr_files(nb)) < 0)
		return rc == -EEXIST ? rc : nf_build_fail(b, rc, "xattrs: %s", strerror(-rc));
	return 0;
}

int nf_ninfer_tree_build(struct nf_tree *t, const struct nf_artifact *a,
			 const struct nf_ninfer_docs *docs, char *err, size_t errlen)
{
	struct ninfer_build nb = {.a = a};
	int rc;

	nb.b.describe = describe;
	nb.b.arg = &nb;
	/* the hashed nodes are directories, small files and cut names: the
	 * binding directories are often a quarter of the bindings (two trees
	 * of them); grown from there if need be */
	rc = nf_build_begin(&nb.b, t, NF_ROLE_ROOT, (size_t)a->nbindings / 2 + 64, err, errlen);
	if (rc < 0)
		return rc;
	rc = build_all(&nb, docs);
	if (rc < 0) {
		nf_build_abort(&nb.b);
		return rc;
	}
	return nf_build_end(&nb.b);
}
