/* fs/tree.c — building the inode table of contract §2 from the artifact. */
#include "fs/tree.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/names.h"

_Static_assert(sizeof(struct nf_node) == 40, "struct nf_node grew (issue 6)");

struct builder {
	struct nf_tree *t;
	uint32_t cap;
	size_t names_len, names_cap;
	struct nf_pieces pieces;
	/* (parent, name) hash, open addressing: 0 = empty, else the key's
	 * 32-bit hash << 32 | (node index + 1).  The stored hash keeps probes
	 * off the nodes and names (a cache miss each) unless it matches, and
	 * lets the table grow without hashing the names again. */
	uint64_t *slots;
	size_t nslots;
	size_t owned_cap;
	char *err;
	size_t errlen;
	/* binding_dirs(): the directory of the last name's prefix (names of
	 * one directory mostly follow each other: one lookup, not seven) */
	const char *last_name;
	size_t last_len;
	uint32_t last_top, last_dir;
};

static int fail(struct builder *b, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->err, b->errlen, fmt, ap);
	va_end(ap);
	return rc;
}

static uint32_t key_hash(uint32_t parent, const char *name, size_t len)
{
	uint64_t h = 14695981039346656037ull ^ parent;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)name[i];
		h *= 1099511628211ull;
	}
	return (uint32_t)(h ^ (h >> 32));
}

static bool node_is(const struct builder *b, uint32_t idx, uint32_t parent, const char *name,
		    size_t len)
{
	const struct nf_node *n = &b->t->nodes[idx];

	return n->parent == parent && n->name_len == len &&
	       memcmp(b->t->names + n->name_off, name, len) == 0;
}

static int64_t find(const struct builder *b, uint32_t parent, const char *name, size_t len)
{
	uint32_t h = key_hash(parent, name, len);
	size_t mask = b->nslots - 1, i = h & mask;

	for (uint64_t s; (s = b->slots[i]) != 0; i = (i + 1) & mask)
		if ((uint32_t)(s >> 32) == h && node_is(b, (uint32_t)s - 1, parent, name, len))
			return (uint32_t)s - 1;
	return -1;
}

static void slot_put(uint64_t *slots, size_t nslots, uint32_t h, uint32_t idx)
{
	size_t mask = nslots - 1, i = h & mask;

	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = (uint64_t)h << 32 | ((uint64_t)idx + 1);
}

/* Keep the hash at most half full (`want` nodes: a size to start from). */
static int hash_grow(struct builder *b, size_t want)
{
	size_t n = b->nslots ? b->nslots : 1024;
	uint64_t *s;

	if (want < (size_t)b->t->nnodes + 1)
		want = (size_t)b->t->nnodes + 1;
	if (want * 2 <= b->nslots)
		return 0;
	while (n < want * 2)
		n *= 2;
	s = calloc(n, sizeof *s);
	if (s == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < b->nslots; i++)
		if (b->slots[i])
			slot_put(s, n, (uint32_t)(b->slots[i] >> 32), (uint32_t)b->slots[i] - 1);
	free(b->slots);
	b->slots = s;
	b->nslots = n;
	return 0;
}

static int names_add(struct builder *b, const char *name, size_t len, uint32_t *off)
{
	if (b->names_len + len + 1 > UINT32_MAX)
		return -EOVERFLOW;
	if (b->names_len + len + 1 > b->names_cap) {
		size_t cap = b->names_cap ? b->names_cap : 4096;
		char *nn;
		while (cap < b->names_len + len + 1)
			cap *= 2;
		nn = realloc(b->t->names, cap);
		if (nn == NULL)
			return -ENOMEM;
		b->t->names = nn;
		b->names_cap = cap;
	}
	memcpy(b->t->names + b->names_len, name, len);
	b->t->names[b->names_len + len] = '\0';
	*off = (uint32_t)b->names_len;
	b->names_len += len + 1;
	return 0;
}

/* A new node under `parent` (no duplicate check). Returns its index. */
static int64_t node_new(struct builder *b, uint32_t parent, const char *name, size_t len,
			bool is_dir, enum nf_role role, bool hashed)
{
	struct nf_tree *t = b->t;
	struct nf_node *n;
	int rc;

	if (t->nnodes == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 256;
		struct nf_node *nv;
		if (cap <= b->cap)
			return -EOVERFLOW;
		nv = realloc(t->nodes, (size_t)cap * sizeof *nv);
		if (nv == NULL)
			return -ENOMEM;
		t->nodes = nv;
		b->cap = cap;
	}
	n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof *n);
	n->parent = parent;
	n->is_dir = is_dir;
	n->role = role;
	n->name_len = (uint32_t)len;
	rc = names_add(b, name, len, &n->name_off);
	if (rc < 0)
		return rc;
	if (!hashed)
		return t->nnodes++;
	rc = hash_grow(b, 0);
	if (rc < 0)
		return rc;
	if (t->nnodes > 0)
		slot_put(b->slots, b->nslots, key_hash(parent, name, len), t->nnodes);
	return t->nnodes++;
}

/* Store view `v` in file node `idx`, packed.  A view of one payload span
 * lives in the node itself: its piece, the last one added, is taken back. */
static void node_set_view(struct builder *b, uint32_t idx, const struct nf_view *v)
{
	struct nf_node *n = &b->t->nodes[idx];

	n->kind = (uint8_t)v->kind;
	n->size = v->size;
	n->at = 0;
	switch (v->kind) {
	case NF_VIEW_MEMORY:
		n->at = (uint64_t)(uintptr_t)v->mem;
		break;
	case NF_VIEW_ENTRY:
		n->at = v->file_offset;
		break;
	case NF_VIEW_PIECES:
		if (v->count == 1 && b->pieces.n == (size_t)v->first + 1 &&
		    b->pieces.v[v->first].logical != NF_PIECE_ZERO) {
			n->kind = NF_NODE_SPAN;
			n->at = b->pieces.v[v->first].logical;
			b->pieces.n--;
		} else {
			n->at = (uint64_t)v->first | (uint64_t)v->count << 32;
		}
		break;
	case NF_VIEW_DECODED:
		n->dtype = (uint8_t)v->dtype;
		n->error = (uint8_t)-v->error;
		break;
	default:
		break;
	}
}

void nf_tree_view(const struct nf_tree *t, uint32_t idx, struct nf_view *v)
{
	const struct nf_node *n = &t->nodes[idx];

	memset(v, 0, sizeof *v);
	if (n->is_dir)
		return;
	v->kind = n->kind == NF_NODE_SPAN ? NF_VIEW_PIECES : (enum nf_view_kind)n->kind;
	v->size = n->size;
	switch (n->kind) {
	case NF_NODE_SPAN:
		v->one = (struct nf_piece){.out = 0, .logical = n->at, .length = n->size};
		v->pieces = &v->one;
		v->first = 0;
		v->count = n->size ? 1 : 0;
		break;
	case NF_VIEW_PIECES:
		v->pieces = t->pieces;
		v->first = (uint32_t)n->at;
		v->count = (uint32_t)(n->at >> 32);
		break;
	case NF_VIEW_MEMORY:
		v->mem = (const char *)(uintptr_t)n->at;
		break;
	case NF_VIEW_ENTRY:
		v->file_offset = n->at;
		break;
	case NF_VIEW_DECODED:
		if (n->role == NF_ROLE_DECODED_OBJECT) {
			v->parts = &t->object_parts[n->ref];
			v->nparts = 1;
		} else {
			v->parts = t->a->bindings[n->ref].parts;
			v->nparts = t->a->bindings[n->ref].nparts;
		}
		v->dtype = (enum nf_dtype)n->dtype;
		v->error = -(int)n->error;
		break;
	default:
		break;
	}
}

/* The directory `name` (already escaped) under parent, created if needed.
 * Returns its index, or -EEXIST when a file holds the name. */
static int64_t dir_get(struct builder *b, uint32_t parent, const char *name, size_t len,
		       enum nf_role role)
{
	int64_t i = find(b, parent, name, len);

	if (i >= 0)
		return b->t->nodes[i].is_dir ? i : -EEXIST;
	return node_new(b, parent, name, len, true, role, true);
}

static int64_t dir_get_raw(struct builder *b, uint32_t parent, const char *raw, size_t len,
			   enum nf_role role)
{
	char esc[NF_NAME_MAX + 1];
	size_t n = nf_escape_component(raw, len, esc);

	return dir_get(b, parent, esc, n, role);
}

/* A file leaf named `raw` (escaped here).  When a directory already holds
 * the name the leaf becomes <dir>/%self.  Returns the index, or -EEXIST
 * for a duplicate (the caller decides), or -errno.  A `unique` leaf is
 * one no other leaf can share a name with (a binding's: binding names are
 * JSON member names, unique): it is found against the directories and
 * cut names, which are all hashed, but is not hashed itself. */
static int64_t leaf_add(struct builder *b, uint32_t parent, const char *raw, size_t len,
			enum nf_role role, const struct nf_view *v, bool unique)
{
	char esc[NF_NAME_MAX + 1];
	size_t n = nf_escape_component(raw, len, esc);
	int64_t i = find(b, parent, esc, n);

	if (i >= 0 && b->t->nodes[i].is_dir) {
		parent = (uint32_t)i;
		strcpy(esc, NF_SELF_NAME);
		n = strlen(esc);
		i = find(b, parent, esc, n);
	}
	if (i >= 0)
		return -EEXIST;
	i = node_new(b, parent, esc, n, false, role, !unique || nf_escape_is_cut(esc, n));
	if (i >= 0)
		node_set_view(b, (uint32_t)i, v);
	return i;
}

static int64_t file_add(struct builder *b, uint32_t parent, const char *raw, size_t len,
			enum nf_role role, const struct nf_view *v)
{
	return leaf_add(b, parent, raw, len, role, v, false);
}

/* A node under a parent whose names are distinct by construction (objects/,
 * planes/ and a planes directory, decoded/objects/: object ids are unique
 * and escaping keeps them so unless it cuts a long name to a hash): it
 * skips the hash, which is most of the build's time on a large set (issue
 * 6), except for cut names.  Returns the index, -EEXIST or -errno. */
static int64_t node_add_unique(struct builder *b, uint32_t parent, const char *raw, size_t len,
			       bool is_dir, enum nf_role role, const struct nf_view *v)
{
	char esc[NF_NAME_MAX + 1];
	size_t n = nf_escape_component(raw, len, esc);
	bool cut = nf_escape_is_cut(esc, n);
	int64_t i;

	if (cut && find(b, parent, esc, n) >= 0)
		return -EEXIST;
	i = node_new(b, parent, esc, n, is_dir, role, cut);
	if (i >= 0 && v)
		node_set_view(b, (uint32_t)i, v);
	return i;
}

static int64_t doc_add(struct builder *b, uint32_t parent, const char *name, const char *text)
{
	struct nf_view v;

	nf_view_memory(&v, text, text ? strlen(text) : 0);
	return file_add(b, parent, name, strlen(name), NF_ROLE_DOCUMENT, &v);
}

static char *owned_strdup(struct builder *b, const char *fmt, const char *arg)
{
	char *s;
	struct nf_tree *t = b->t;

	if (t->nowned == b->owned_cap) {
		size_t cap = b->owned_cap ? b->owned_cap * 2 : 16;
		char **nv = realloc(t->owned, cap * sizeof *nv);
		if (nv == NULL)
			return NULL;
		t->owned = nv;
		b->owned_cap = cap;
	}
	if (asprintf(&s, fmt, arg) < 0)
		return NULL;
	t->owned[t->nowned++] = s;
	return s;
}

static int add_top(struct builder *b, const struct nf_artifact *a, const struct nf_tree_docs *d)
{
	struct nf_view v;
	int64_t rc;

	/* read from the entry: the daemon drops the JSON text once validated
	 * (on a large set it was a third of the daemon's memory) */
	nf_view_entry(&v, NF_ENTRY_HEADER_BYTES, a->json_bytes);
	rc = file_add(b, 0, "artifact.json", 13, NF_ROLE_DOCUMENT, &v);
	if (rc >= 0)
		rc = doc_add(b, 0, "validation.json", d->validation_json);
	if (rc >= 0) {
		/* the files' status may change while mounted (issue 11) */
		memset(&v, 0, sizeof v);
		v.kind = NF_VIEW_FILES;
		rc = file_add(b, 0, "files.json", 10, NF_ROLE_DOCUMENT, &v);
	}
	if (rc >= 0 && a->uses_json) {
		rc = doc_add(b, 0, "uses.json", a->uses_json);
	} else if (rc >= 0) {
		memset(&v, 0, sizeof v);
		v.kind = NF_VIEW_USES;
		rc = file_add(b, 0, "uses.json", 9, NF_ROLE_DOCUMENT, &v);
		if (rc >= 0)
			b->t->uses_node = (uint32_t)rc;
	}
	if (rc >= 0) {
		memset(&v, 0, sizeof v);
		v.kind = NF_VIEW_STATS;
		rc = file_add(b, 0, "stats", 5, NF_ROLE_STATS, &v);
	}
	return rc < 0 ? (int)rc : 0;
}

static int add_component(struct builder *b, const struct nf_artifact *a, uint32_t ci, uint32_t top)
{
	const struct nf_component *c = &a->components[ci];
	int64_t dir = dir_get_raw(b, top, c->id, strlen(c->id), NF_ROLE_COMPONENT), rc;

	if (dir < 0)
		return (int)dir;
	b->t->nodes[dir].ref = ci;
	rc = doc_add(b, (uint32_t)dir, "config.json", c->config_json ? c->config_json : "{}\n");
	if (rc >= 0 && c->target) {
		char *s = owned_strdup(b, "%s\n", c->target);
		rc = s ? doc_add(b, (uint32_t)dir, "target", s) : -ENOMEM;
	}
	if (rc >= 0 && c->proposal_json)
		rc = doc_add(b, (uint32_t)dir, "proposal.json", c->proposal_json);
	if (rc < 0 || c->nresources == 0)
		return rc < 0 ? (int)rc : 0;
	int64_t res = dir_get(b, (uint32_t)dir, "resources", 9, NF_ROLE_DIR);
	if (res < 0)
		return (int)res;
	for (uint32_t r = 0; r < c->nresources; r++) {
		const struct nf_object *o = &a->objects[c->resources[r].object];
		const char *role = c->resources[r].role;
		struct nf_view v;

		if ((rc = nf_view_span(&b->pieces, o->offset, o->bytes, &v)) < 0)
			return (int)rc;
		rc = file_add(b, (uint32_t)res, role, strlen(role), NF_ROLE_RESOURCE, &v);
		if (rc == -EEXIST)
			continue;
		if (rc < 0)
			return (int)rc;
		b->t->nodes[rc].ref = ci;
		b->t->nodes[rc].ref2 = r;
	}
	return 0;
}

static int add_object(struct builder *b, const struct nf_artifact *a, uint32_t oi, uint32_t objs,
		      uint32_t planes)
{
	const struct nf_object *o = &a->objects[oi];
	struct nf_view v;
	int64_t rc;

	if ((rc = nf_view_span(&b->pieces, o->offset, o->bytes, &v)) < 0)
		return (int)rc;
	rc = node_add_unique(b, objs, o->id, strlen(o->id), false, NF_ROLE_OBJECT, &v);
	if (rc == -EEXIST)
		return 0;
	if (rc < 0)
		return (int)rc;
	b->t->nodes[rc].ref = oi;
	if (o->kind != NF_OBJ_TENSOR || o->codec_status != NF_CODEC_OK || !o->size_ok ||
	    o->geom.nplanes == 0)
		return 0;
	int64_t dir = node_add_unique(b, planes, o->id, strlen(o->id), true, NF_ROLE_DIR, NULL);
	if (dir == -EEXIST)
		return 0;
	if (dir < 0)
		return (int)dir;
	for (unsigned p = 0; p < o->geom.nplanes; p++) {
		const struct nf_plane *pl = &o->geom.planes[p];
		uint64_t lo;

		if (__builtin_add_overflow(o->offset, pl->offset, &lo))
			return -EOVERFLOW;
		if ((rc = nf_view_span(&b->pieces, lo, pl->length, &v)) < 0)
			return (int)rc;
		rc = node_add_unique(b, (uint32_t)dir, pl->name, strlen(pl->name), false,
				     NF_ROLE_PLANE, &v);
		if (rc < 0)
			return (int)rc;
		b->t->nodes[rc].ref = oi;
		b->t->nodes[rc].ref2 = p;
	}
	return 0;
}

/* Directories of every binding name first, so that a leaf that is also a
 * prefix directory is seen as such and becomes %self. */
static int64_t binding_dirs(struct builder *b, uint32_t top, const char *name, bool make)
{
	int64_t dir = top;
	const char *s = name, *slash;
	const char *leaf = strrchr(name, '/');
	size_t plen = leaf ? (size_t)(leaf - name) : 0;

	if (plen == 0)
		return top;
	if (b->last_name && b->last_top == top && b->last_len == plen &&
	    memcmp(b->last_name, name, plen) == 0)
		return b->last_dir;
	while ((slash = strchr(s, '/')) != NULL) {
		char esc[NF_NAME_MAX + 1];
		size_t n = nf_escape_component(s, (size_t)(slash - s), esc);
		dir = make ? dir_get(b, (uint32_t)dir, esc, n, NF_ROLE_DIR)
			   : find(b, (uint32_t)dir, esc, n);
		if (dir < 0)
			return dir;
		s = slash + 1;
	}
	b->last_name = name;
	b->last_len = plen;
	b->last_top = top;
	b->last_dir = (uint32_t)dir;
	return dir;
}

static int add_bindings(struct builder *b, const struct nf_artifact *a, uint32_t top)
{
	for (uint32_t i = 0; i < a->nbindings; i++) {
		int64_t rc = binding_dirs(b, top, a->bindings[i].name, true);
		if (rc == -EEXIST)
			continue; /* cannot happen: leaves come later */
		if (rc < 0)
			return (int)rc;
	}
	for (uint32_t i = 0; i < a->nbindings; i++) {
		const char *name = a->bindings[i].name, *leaf = strrchr(name, '/');
		int64_t dir = binding_dirs(b, top, name, false), rc;
		struct nf_view v;

		if (dir < 0)
			continue;
		rc = nf_view_binding(&b->pieces, a, &a->bindings[i], &v);
		if (rc == 1)
			continue; /* no raw leaf: decoded/ only */
		if (rc < 0)
			return (int)rc;
		leaf = leaf ? leaf + 1 : name;
		rc = leaf_add(b, (uint32_t)dir, leaf, strlen(leaf), NF_ROLE_BINDING, &v, true);
		if (rc == -EEXIST)
			continue; /* duplicate name: the directory rejects it */
		if (rc < 0)
			return (int)rc;
		b->t->nodes[rc].ref = i;
	}
	return 0;
}

/* decoded/bindings: every binding whose parts decode to one dtype. */
static int add_decoded_bindings(struct builder *b, const struct nf_artifact *a, uint32_t top,
				enum nf_dtype dtype)
{
	for (uint32_t i = 0; i < a->nbindings; i++) {
		int64_t rc = binding_dirs(b, top, a->bindings[i].name, true);
		if (rc < 0 && rc != -EEXIST)
			return (int)rc;
	}
	for (uint32_t i = 0; i < a->nbindings; i++) {
		const struct nf_binding *bd = &a->bindings[i];
		const char *leaf = strrchr(bd->name, '/');
		int64_t dir = binding_dirs(b, top, bd->name, false), rc;
		struct nf_view v;

		if (dir < 0 || nf_view_decoded(a, bd->parts, bd->nparts, dtype, &v) != 0)
			continue;
		leaf = leaf ? leaf + 1 : bd->name;
		rc = leaf_add(b, (uint32_t)dir, leaf, strlen(leaf), NF_ROLE_DECODED_BINDING, &v,
			      true);
		if (rc == -EEXIST)
			continue;
		if (rc < 0)
			return (int)rc;
		b->t->nodes[rc].ref = i;
	}
	return 0;
}

/* decoded/objects: every tensor object, as one whole-object part. */
static int add_decoded_objects(struct builder *b, const struct nf_artifact *a, uint32_t top,
			       enum nf_dtype dtype)
{
	b->t->object_parts = calloc(a->nobjects ? a->nobjects : 1, sizeof *b->t->object_parts);
	if (b->t->object_parts == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < a->nobjects; i++) {
		const struct nf_object *o = &a->objects[i];
		struct nf_part *pt = &b->t->object_parts[i];
		struct nf_view v;
		int64_t rc;

		if (o->kind != NF_OBJ_TENSOR)
			continue;
		*pt = (struct nf_part){.object = i, .begin = 0, .end = o->elements};
		if (nf_view_decoded(a, pt, 1, dtype, &v) != 0)
			continue;
		rc = node_add_unique(b, top, o->id, strlen(o->id), false, NF_ROLE_DECODED_OBJECT, &v);
		if (rc == -EEXIST)
			continue;
		if (rc < 0)
			return (int)rc;
		b->t->nodes[rc].ref = i;
	}
	return 0;
}

static int add_decoded(struct builder *b, const struct nf_artifact *a, const struct nf_tree_docs *d)
{
	int64_t dec = dir_get(b, 0, "decoded", 7, NF_ROLE_DIR), bind, objs;
	int rc;

	if (dec < 0)
		return (int)dec;
	bind = dir_get(b, (uint32_t)dec, "bindings", 8, NF_ROLE_DIR);
	objs = dir_get(b, (uint32_t)dec, "objects", 7, NF_ROLE_DIR);
	if (bind < 0 || objs < 0)
		return -ENOMEM;
	if ((rc = add_decoded_bindings(b, a, (uint32_t)bind, d->dtype)) < 0)
		return rc;
	if ((rc = add_decoded_objects(b, a, (uint32_t)objs, d->dtype)) < 0)
		return rc;
	if (d->safetensors) {
		struct nf_view v = {.kind = NF_VIEW_SAFETENSORS};
		int64_t n = file_add(b, (uint32_t)dec, "model.safetensors", 17, NF_ROLE_SAFETENSORS, &v);
		if (n < 0)
			return (int)n;
		b->t->st_node = (uint32_t)n;
	}
	return 0;
}

static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	return c ? c : (alen > blen) - (alen < blen);
}

static int by_name(const void *x, const void *y, void *arg)
{
	const struct nf_tree *t = arg;
	const struct nf_node *p = &t->nodes[*(const uint32_t *)x];
	const struct nf_node *q = &t->nodes[*(const uint32_t *)y];

	return name_cmp(t->names + p->name_off, p->name_len, t->names + q->name_off, q->name_len);
}

/* Children come in the directory's record order, which writers usually
 * keep sorted: one pass saves the sort of objects/, planes/ and
 * decoded/objects/ (n log n random name compares each). */
static bool sorted(const struct nf_tree *t, const uint32_t *c, uint32_t n)
{
	for (uint32_t k = 1; k < n; k++)
		if (by_name(&c[k - 1], &c[k], (void *)t) > 0)
			return false;
	return true;
}

/* Children arrays: counting sort by parent (first_child is the fill
 * cursor, then set back), then by name in each dir. */
static int link_children(struct nf_tree *t)
{
	t->children = calloc(t->nnodes ? t->nnodes : 1, sizeof *t->children);
	if (t->children == NULL)
		return -ENOMEM;
	for (uint32_t i = 1; i < t->nnodes; i++) {
		struct nf_node *par = &t->nodes[t->nodes[i].parent];
		par->nchildren++;
		par->nsubdirs += t->nodes[i].is_dir;
	}
	uint32_t pos = 0;
	for (uint32_t i = 0; i < t->nnodes; i++) {
		if (!t->nodes[i].is_dir)
			continue; /* a file's size shares the place of first_child */
		t->nodes[i].first_child = pos;
		pos += t->nodes[i].nchildren;
	}
	for (uint32_t i = 1; i < t->nnodes; i++)
		t->children[t->nodes[t->nodes[i].parent].first_child++] = i;
	for (uint32_t i = 0; i < t->nnodes; i++)
		if (t->nodes[i].is_dir)
			t->nodes[i].first_child -= t->nodes[i].nchildren;
	for (uint32_t i = 0; i < t->nnodes; i++)
		if (t->nodes[i].is_dir && t->nodes[i].nchildren > 1 &&
		    !sorted(t, t->children + t->nodes[i].first_child, t->nodes[i].nchildren))
			qsort_r(t->children + t->nodes[i].first_child, t->nodes[i].nchildren,
				sizeof(uint32_t), by_name, t);
	return 0;
}

static int build_all(struct builder *b, const struct nf_artifact *a, const struct nf_tree_docs *d)
{
	int64_t comps, objs, planes, binds;
	int rc;

	if ((rc = (int)node_new(b, 0, "", 0, true, NF_ROLE_ROOT, true)) < 0)
		return fail(b, rc, "root: %s", strerror(-rc));
	if ((rc = add_top(b, a, d)) < 0)
		return fail(b, rc, "top-level files: %s", strerror(-rc));
	comps = dir_get(b, 0, "components", 10, NF_ROLE_DIR);
	objs = dir_get(b, 0, "objects", 7, NF_ROLE_DIR);
	planes = dir_get(b, 0, "planes", 6, NF_ROLE_DIR);
	binds = dir_get(b, 0, "bindings", 8, NF_ROLE_DIR);
	if (comps < 0 || objs < 0 || planes < 0 || binds < 0)
		return fail(b, -ENOMEM, "top-level directories");
	for (uint32_t i = 0; i < a->ncomponents; i++)
		if ((rc = add_component(b, a, i, (uint32_t)comps)) < 0)
			return fail(b, rc, "component %s: %s", a->components[i].id, strerror(-rc));
	for (uint32_t i = 0; i < a->nobjects; i++)
		if ((rc = add_object(b, a, i, (uint32_t)objs, (uint32_t)planes)) < 0)
			return fail(b, rc, "object %s: %s", a->objects[i].id, strerror(-rc));
	if ((rc = add_bindings(b, a, (uint32_t)binds)) < 0)
		return fail(b, rc, "bindings: %s", strerror(-rc));
	if ((rc = add_decoded(b, a, d)) < 0)
		return fail(b, rc, "decoded: %s", strerror(-rc));
	/* the (parent, name) hash is done with: free it before the children
	 * arrays are made (the peak of the build) */
	free(b->slots);
	b->slots = NULL;
	b->nslots = 0;
	if ((rc = link_children(b->t)) < 0)
		return fail(b, rc, "children: %s", strerror(-rc));
	return 0;
}

int nf_tree_build(struct nf_tree *t, const struct nf_artifact *a, const struct nf_tree_docs *docs,
		  char *err, size_t errlen)
{
	struct builder b = {.t = t, .err = err, .errlen = errlen};
	int rc;

	memset(t, 0, sizeof *t);
	t->a = a;
	/* the hashed nodes are directories, small files and cut names: the
	 * binding directories are often a quarter of the bindings (two trees
	 * of them); grown from there if need be */
	rc = hash_grow(&b, (size_t)a->nbindings / 2 + 64);
	if (rc == 0)
		rc = build_all(&b, a, docs);
	else
		snprintf(err, errlen, "tree hash: %s", strerror(-rc));
	free(b.slots);
	t->pieces = b.pieces.v;
	t->npieces = b.pieces.n;
	if (rc < 0)
		nf_tree_free(t);
	return rc;
}

void nf_tree_set_size(struct nf_tree *t, uint32_t idx, uint64_t size)
{
	if (idx > 0 && idx < t->nnodes && !t->nodes[idx].is_dir)
		t->nodes[idx].size = size;
}

void nf_tree_free(struct nf_tree *t)
{
	for (size_t i = 0; i < t->nowned; i++)
		free(t->owned[i]);
	free(t->owned);
	free(t->nodes);
	free(t->names);
	free(t->children);
	free(t->pieces);
	free(t->object_parts);
	memset(t, 0, sizeof *t);
}

int64_t nf_tree_lookup(const struct nf_tree *t, uint32_t dir, const char *name, size_t len)
{
	const struct nf_node *d;
	size_t lo = 0, hi;

	if (dir >= t->nnodes || !t->nodes[dir].is_dir)
		return -1;
	d = &t->nodes[dir];
	hi = d->nchildren;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct nf_node *c = &t->nodes[t->children[d->first_child + mid]];
		int cmp = name_cmp(t->names + c->name_off, c->name_len, name, len);
		if (cmp == 0)
			return t->children[d->first_child + mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}
