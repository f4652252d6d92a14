/* fs/tree.c — building the inode table of contract §2 from the artifact. */
#include "fs/tree.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/ninfer/attrs.h"
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
	/* the most payload spans of one file (PIECES views, decoded parts):
	 * with the files' count it bounds every segments list (xattrs/) */
	uint64_t max_spans;
	/* binding_dirs(): the directory of the last name's prefix (names of
	 * one directory mostly follow each other: one lookup, not seven) */
	const char *last_name;
	size_t last_len;
	uint32_t last_top, last_dir;
};

/* The record a node (or a node about to be made) stands for, for the
 * message of a refused build. */
struct nf_rec {
	uint8_t role;
	uint32_t ref, ref2, parent;
};

static int fail(struct builder *b, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->err, b->errlen, fmt, ap);
	va_end(ap);
	return rc;
}

/* Append `s` (len bytes) to out[*o..cap) quoted, with control bytes, '"'
 * and '\\' escaped, and the middle of a long name left out (the tail is
 * kept: two names that only differ there must stay apart). */
static void put_quoted(char *out, size_t cap, size_t *o, const char *s, size_t len)
{
	const size_t head = 48, tail = 48;
	bool skipped = false;

	for (size_t i = 0; i < len && *o + 8 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		if (len > head + tail + 16 && i >= head && !skipped && (c & 0xC0) != 0x80) {
			skipped = true;
			/* skip to a character boundary, "tail" bytes from the end */
			size_t j = len - tail;
			while (j < len && ((unsigned char)s[j] & 0xC0) == 0x80)
				j++;
			*o += (size_t)snprintf(out + *o, cap - *o, "...");
			i = j - 1;
			continue;
		}
		if (c < 0x20 || c == '"' || c == '\\' || c == 0x7f)
			*o += (size_t)snprintf(out + *o, cap - *o, "\\x%02x", c);
		else
			out[(*o)++] = (char)c;
	}
	if (*o < cap)
		out[*o] = '\0';
}

static void put_str(char *out, size_t cap, size_t *o, const char *s)
{
	int n = snprintf(out + *o, cap - *o, "%s", s);

	*o += n < 0 ? 0 : (size_t)n < cap - *o ? (size_t)n : cap - *o - 1;
}

static void put_name(char *out, size_t cap, size_t *o, const char *s)
{
	put_str(out, cap, o, "\"");
	put_quoted(out, cap, o, s, strlen(s));
	put_str(out, cap, o, "\"");
}

/* The path of node `idx` below the mount's root, escaped names. */
static void put_path(const struct nf_tree *t, char *out, size_t cap, size_t *o, uint32_t idx)
{
	uint32_t chain[64];
	unsigned n = 0;

	for (uint32_t i = idx; i != 0 && n < 64; i = t->nodes[i].parent)
		chain[n++] = i;
	put_str(out, cap, o, "\"");
	if (n == 64)
		put_str(out, cap, o, ".../");
	while (n-- > 0) {
		const struct nf_node *nd = &t->nodes[chain[n]];
		put_quoted(out, cap, o, t->names + nd->name_off, nd->name_len);
		if (n)
			put_str(out, cap, o, "/");
	}
	put_str(out, cap, o, "\"");
}

/* "binding \"a/b\"", "object \"w\"", ... */
static void put_record(const struct builder *b, char *out, size_t cap, size_t *o,
		       const struct nf_rec *r)
{
	const struct nf_artifact *a = b->t->a;
	const struct nf_node *par = &b->t->nodes[r->parent];

	switch (r->role) {
	case NF_ROLE_OBJECT:
	case NF_ROLE_PLANE:
	case NF_ROLE_DECODED_OBJECT:
		put_str(out, cap, o, "object ");
		put_name(out, cap, o, a->objects[r->ref].id);
		return;
	case NF_ROLE_BINDING:
	case NF_ROLE_DECODED_BINDING:
		put_str(out, cap, o, "binding ");
		put_name(out, cap, o, a->bindings[r->ref].name);
		return;
	case NF_ROLE_RESOURCE:
		put_str(out, cap, o, "resource ");
		put_name(out, cap, o, a->components[r->ref].resources[r->ref2].role);
		put_str(out, cap, o, " of component ");
		put_name(out, cap, o, a->components[r->ref].id);
		return;
	case NF_ROLE_COMPONENT:
		put_str(out, cap, o, "component ");
		put_name(out, cap, o, a->components[r->ref].id);
		return;
	default:
		if (par->role == NF_ROLE_COMPONENT) {
			put_str(out, cap, o, "a file of component ");
			put_name(out, cap, o, a->components[par->ref].id);
		} else {
			put_str(out, cap, o, r->role == NF_ROLE_DIR ? "a directory" : "a file");
		}
	}
}

static struct nf_rec rec_of(const struct nf_tree *t, uint32_t idx)
{
	const struct nf_node *n = &t->nodes[idx];

	return (struct nf_rec){.role = n->role, .ref = n->ref, .ref2 = n->ref2,
			       .parent = n->parent};
}

/* Two records whose files get one path (man ninferfs.5, NAMES): the build
 * is refused, naming both.  `first` holds the path already. */
static int clash(struct builder *b, uint32_t first, const struct nf_rec *second)
{
	struct nf_rec r1 = rec_of(b->t, first);
	size_t o = 0;

	if (b->errlen == 0)
		return -EEXIST;
	b->err[0] = '\0';
	put_record(b, b->err, b->errlen, &o, &r1);
	put_str(b->err, b->errlen, &o, " and ");
	put_record(b, b->err, b->errlen, &o, second);
	put_str(b->err, b->errlen, &o, " both map to ");
	put_path(b->t, b->err, b->errlen, &o, first);
	put_str(b->err, b->errlen, &o, " (two files cannot have one name: refused)");
	return -EEXIST;
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
		b->max_spans = v->count > b->max_spans ? v->count : b->max_spans;
		break;
	case NF_VIEW_DECODED:
		b->max_spans = v->nparts > b->max_spans ? v->nparts : b->max_spans;
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
	struct nf_rec r = {.role = (uint8_t)role, .parent = parent};

	if (i >= 0)
		return b->t->nodes[i].is_dir ? i : clash(b, (uint32_t)i, &r);
	return node_new(b, parent, name, len, true, role, true);
}


/* A file leaf named `raw` (escaped here) for record `r` (r->parent is the
 * directory).  When a directory already holds the name the leaf becomes
 * <dir>/%self.  Returns the index, or -EEXIST when another node has the
 * name (the build is refused, b->err says why), or -errno.  A `unique`
 * leaf is one no other leaf should share a name with (a binding's:
 * binding names are JSON member names, unique): it is found against the
 * directories and cut names, which are all hashed, but is not hashed
 * itself; link_children() proves it unique after all. */
static int64_t leaf_add(struct builder *b, struct nf_rec *r, const char *raw, size_t len,
			const struct nf_view *v, bool unique)
{
	char esc[NF_NAME_MAX + 1];
	size_t n = nf_escape_component(raw, len, esc);
	int64_t i = find(b, r->parent, esc, n);

	if (i >= 0 && b->t->nodes[i].is_dir) {
		r->parent = (uint32_t)i;
		strcpy(esc, NF_SELF_NAME);
		n = strlen(esc);
		i = find(b, r->parent, esc, n);
	}
	if (i >= 0)
		return clash(b, (uint32_t)i, r);
	i = node_new(b, r->parent, esc, n, false, (enum nf_role)r->role,
		     !unique || nf_escape_is_cut(esc, n));
	if (i >= 0) {
		node_set_view(b, (uint32_t)i, v);
		b->t->nodes[i].ref = r->ref;
		b->t->nodes[i].ref2 = r->ref2;
	}
	return i;
}

static int64_t file_add(struct builder *b, uint32_t parent, const char *raw, size_t len,
			enum nf_role role, const struct nf_view *v)
{
	struct nf_rec r = {.role = (uint8_t)role, .parent = parent};

	return leaf_add(b, &r, raw, len, v, false);
}

/* A node of record `r` under a parent whose names are distinct by
 * construction (objects/, planes/ and a planes directory, decoded/objects/:
 * object ids are unique and escaping keeps them so unless it cuts a long
 * name to a hash): it skips the hash, which is most of the build's time on
 * a large set (issue 6), except for cut names; link_children() proves the
 * others unique.  Returns the index, -EEXIST (refused) or -errno. */
static int64_t node_add_unique(struct builder *b, const struct nf_rec *r, const char *raw,
			       size_t len, bool is_dir, const struct nf_view *v)
{
	char esc[NF_NAME_MAX + 1];
	size_t n = nf_escape_component(raw, len, esc);
	bool cut = nf_escape_is_cut(esc, n);
	int64_t i = cut ? find(b, r->parent, esc, n) : -1;

	if (i >= 0)
		return clash(b, (uint32_t)i, r);
	i = node_new(b, r->parent, esc, n, is_dir, (enum nf_role)r->role, cut);
	if (i < 0)
		return i;
	if (v)
		node_set_view(b, (uint32_t)i, v);
	b->t->nodes[i].ref = r->ref;
	b->t->nodes[i].ref2 = r->ref2;
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
	struct nf_rec rec = {.role = NF_ROLE_COMPONENT, .ref = ci, .parent = top};
	char esc[NF_NAME_MAX + 1];
	size_t n = nf_escape_component(c->id, strlen(c->id), esc);
	int64_t dir = find(b, top, esc, n), rc;

	/* component ids are unique: one directory each, never shared (a cut
	 * name of another is refused, not merged) */
	if (dir >= 0)
		return clash(b, (uint32_t)dir, &rec);
	dir = node_new(b, top, esc, n, true, NF_ROLE_COMPONENT, true);
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

		rec = (struct nf_rec){.role = NF_ROLE_RESOURCE, .ref = ci, .ref2 = r,
				      .parent = (uint32_t)res};
		if ((rc = nf_view_span(&b->pieces, o->offset, o->bytes, &v)) < 0)
			return (int)rc;
		rc = leaf_add(b, &rec, role, strlen(role), &v, false);
		if (rc < 0)
			return (int)rc;
	}
	return 0;
}

static int add_object(struct builder *b, const struct nf_artifact *a, uint32_t oi, uint32_t objs,
		      uint32_t planes)
{
	const struct nf_object *o = &a->objects[oi];
	struct nf_view v;
	int64_t rc;

	struct nf_rec rec = {.role = NF_ROLE_OBJECT, .ref = oi, .parent = objs};

	if ((rc = nf_view_span(&b->pieces, o->offset, o->bytes, &v)) < 0)
		return (int)rc;
	rc = node_add_unique(b, &rec, o->id, strlen(o->id), false, &v);
	if (rc < 0)
		return (int)rc;
	if (o->kind != NF_OBJ_TENSOR || o->codec_status != NF_CODEC_OK || !o->size_ok ||
	    o->geom.nplanes == 0)
		return 0;
	/* a plane directory stands for its object in messages (ref) */
	rec = (struct nf_rec){.role = NF_ROLE_DIR, .ref = oi, .parent = planes};
	int64_t dir = node_add_unique(b, &rec, o->id, strlen(o->id), true, NULL);
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
		rc = node_add_unique(b, &rec, pl->name, strlen(pl->name), false, &v);
		if (rc < 0)
			return (int)rc;
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
	size_t plen;

	/* no '/': a leaf of the top.  A '/' at 0 is not that: "/x" is the
	 * components "" and "x", bindings/%/x (man ninferfs.5, NAMES) */
	if (leaf == NULL)
		return top;
	plen = (size_t)(leaf - name);
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
		/* only directories are under `top` yet: no -EEXIST */
		int64_t rc = binding_dirs(b, top, a->bindings[i].name, true);
		if (rc < 0)
			return (int)rc;
	}
	for (uint32_t i = 0; i < a->nbindings; i++) {
		const char *name = a->bindings[i].name, *leaf = strrchr(name, '/');
		int64_t dir = binding_dirs(b, top, name, false), rc;
		struct nf_view v;

		if (dir < 0)
			return (int)dir; /* made in the first pass */
		rc = nf_view_binding(&b->pieces, a, &a->bindings[i], &v);
		if (rc == 1)
			continue; /* no raw leaf: decoded/ only */
		if (rc < 0)
			return (int)rc;
		leaf = leaf ? leaf + 1 : name;
		struct nf_rec rec = {.role = NF_ROLE_BINDING, .ref = i, .parent = (uint32_t)dir};
		rc = leaf_add(b, &rec, leaf, strlen(leaf), &v, true);
		if (rc < 0)
			return (int)rc;
	}
	return 0;
}

/* decoded/bindings: every binding whose parts decode to one dtype. */
static int add_decoded_bindings(struct builder *b, const struct nf_artifact *a, uint32_t top,
				enum nf_dtype dtype)
{
	for (uint32_t i = 0; i < a->nbindings; i++) {
		int64_t rc = binding_dirs(b, top, a->bindings[i].name, true);
		if (rc < 0)
			return (int)rc;
	}
	for (uint32_t i = 0; i < a->nbindings; i++) {
		const struct nf_binding *bd = &a->bindings[i];
		const char *leaf = strrchr(bd->name, '/');
		int64_t dir = binding_dirs(b, top, bd->name, false), rc;
		struct nf_view v;

		if (dir < 0)
			return (int)dir;
		if (nf_view_decoded(a, bd->parts, bd->nparts, dtype, &v) != 0)
			continue;
		leaf = leaf ? leaf + 1 : bd->name;
		struct nf_rec rec = {.role = NF_ROLE_DECODED_BINDING, .ref = i,
				     .parent = (uint32_t)dir};
		rc = leaf_add(b, &rec, leaf, strlen(leaf), &v, true);
		if (rc < 0)
			return (int)rc;
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
		struct nf_rec rec = {.role = NF_ROLE_DECODED_OBJECT, .ref = i, .parent = top};
		rc = node_add_unique(b, &rec, o->id, strlen(o->id), false, &v);
		if (rc < 0)
			return (int)rc;
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

/* ---- xattrs/: the whole values of cut attributes (fs/attrs.h) ---------- */

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
static uint64_t node_spans(const struct nf_tree *t, uint32_t idx)
{
	const struct nf_node *n = &t->nodes[idx];

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
		return t->a->bindings[n->ref].nparts;
	default:
		return 0;
	}
}

/* The directory under xattrs/ that mirrors node `idx`, made as needed. */
static int64_t mirror_dir(struct builder *b, uint32_t idx)
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
	dir = dir_get(b, 0, "xattrs", 6, NF_ROLE_DIR);
	while (dir >= 0 && n-- > 0) {
		char name[NF_NAME_MAX + 1];   /* a copy: the name arena may move */
		const struct nf_node *nd = &t->nodes[chain[n]];
		memcpy(name, t->names + nd->name_off, nd->name_len);
		dir = dir_get(b, (uint32_t)dir, name, nd->name_len, NF_ROLE_DIR);
	}
	free(chain);
	return dir;
}

/* xattrs/<path of idx>/<attr>: the whole value (len bytes at `mem`, which
 * outlives the tree). */
static int mirror_add(struct builder *b, uint32_t idx, const char *attr, const char *mem,
		      size_t len)
{
	int64_t dir = mirror_dir(b, idx);
	struct nf_view v;

	if (dir < 0)
		return (int)dir;
	struct nf_rec rec = {.role = NF_ROLE_DOCUMENT, .parent = (uint32_t)dir};
	nf_view_memory(&v, mem, len);
	int64_t rc = leaf_add(b, &rec, attr, strlen(attr), &v, false);
	return rc < 0 ? (int)rc : 0;
}

static int take_owned(struct builder *b, char *s)
{
	struct nf_tree *t = b->t;

	if (t->nowned == b->owned_cap) {
		size_t cap = b->owned_cap ? b->owned_cap * 2 : 16;
		char **nv = realloc(t->owned, cap * sizeof *nv);
		if (nv == NULL)
			return -ENOMEM;
		t->owned = nv;
		b->owned_cap = cap;
	}
	t->owned[t->nowned++] = s;
	return 0;
}

/* Every attribute value that attrs.h cuts gets its whole bytes as a file
 * under xattrs/ (which exists only then).  Cheap on ordinary sets: the
 * strings are checked once over the records, and a node's segments list
 * is made only when (spans x files x the longest entry) could pass the
 * limit, which needs hundreds of files or parts. */
static int add_xattr_files(struct builder *b, const struct nf_artifact *a)
{
	struct nf_tree *t = b->t;
	uint32_t n0 = t->nnodes;
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
	segments = __builtin_mul_overflow(b->max_spans, (uint64_t)a->nfiles * entry_max, &bound) ||
		   bound + 64 > NF_XATTR_VALUE_MAX;
	if (!strings && !segments)
		return 0;
	t->pieces = b->pieces.v;   /* for nf_tree_view() now; kept by nf_tree_build */
	for (uint32_t i = 1; i < n0; i++) {
		for (int w = 0; strings && w < NF_ATTR_NSTR; w++) {
			const char *s = nf_node_string(t, i, (enum nf_str_attr)w);
			if (s && strlen(s) > NF_XATTR_STRING_MAX &&
			    (rc = mirror_add(b, i, nf_str_attr_names[w], s, strlen(s))) < 0)
				return rc;
		}
		uint64_t spans = segments ? node_spans(t, i) : 0;
		if (spans == 0 || (!__builtin_mul_overflow(spans, (uint64_t)a->nfiles * entry_max,
							   &bound) &&
				   bound + 64 <= NF_XATTR_VALUE_MAX))
			continue;
		struct nf_view v;
		size_t len;
		nf_tree_view(t, i, &v);
		char *full = nf_segments_json(a, &v, 0, &len, NULL);
		if (full == NULL)
			return -ENOMEM;
		if (len <= NF_XATTR_VALUE_MAX) {
			free(full);
			continue;
		}
		if ((rc = take_owned(b, full)) < 0) {
			free(full);
			return rc;
		}
		if ((rc = mirror_add(b, i, "user.ninfer.segments", full, len)) < 0)
			return rc;
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
 * decoded/objects/ (n log n random name compares each).  Returns 1 when
 * strictly increasing, 0 when not sorted, or -(k+1) when children k-1 and
 * k have one name (a sorted run up to there). */
static int64_t order_of(const struct nf_tree *t, const uint32_t *c, uint32_t n)
{
	for (uint32_t k = 1; k < n; k++) {
		int cmp = by_name(&c[k - 1], &c[k], (void *)t);
		if (cmp > 0)
			return 0;
		if (cmp == 0)
			return -(int64_t)k - 1;
	}
	return 1;
}

/* The proof that no directory lists one name twice (man ninferfs.5,
 * NAMES): leaves of bindings and objects are not in the build's hash
 * (issue 6), so a naming bug would otherwise give two files one name.
 * Sorted children make it one compare per child: the one order_of() does
 * anyway, or one linear pass after a sort. */
static int children_unique(struct builder *b, const uint32_t *c, uint32_t n)
{
	int64_t k = order_of(b->t, c, n);

	if (k < 0) {
		struct nf_rec second = rec_of(b->t, c[-k - 1]);
		return clash(b, c[-k - 2], &second);
	}
	return k == 1 ? 0 : 1;
}

/* Children arrays: counting sort by parent (first_child is the fill
 * cursor, then set back), then by name in each dir, each proven free of
 * duplicates.  -EEXIST (b->err says which records) or -ENOMEM. */
static int link_children(struct builder *b)
{
	struct nf_tree *t = b->t;

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
	for (uint32_t i = 0; i < t->nnodes; i++) {
		uint32_t *c = t->children + t->nodes[i].first_child, n = t->nodes[i].nchildren;
		int rc;

		if (!t->nodes[i].is_dir || n < 2)
			continue;
		rc = children_unique(b, c, n);
		if (rc == 1) {
			qsort_r(c, n, sizeof(uint32_t), by_name, t);
			rc = children_unique(b, c, n);
		}
		if (rc < 0)
			return rc;
	}
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
	/* -EEXIST: clash() has said which two records collide */
	for (uint32_t i = 0; i < a->ncomponents; i++)
		if ((rc = add_component(b, a, i, (uint32_t)comps)) < 0)
			return rc == -EEXIST ? rc : fail(b, rc, "component %s: %s",
							 a->components[i].id, strerror(-rc));
	for (uint32_t i = 0; i < a->nobjects; i++)
		if ((rc = add_object(b, a, i, (uint32_t)objs, (uint32_t)planes)) < 0)
			return rc == -EEXIST ? rc : fail(b, rc, "object %s: %s", a->objects[i].id,
							 strerror(-rc));
	if ((rc = add_bindings(b, a, (uint32_t)binds)) < 0)
		return rc == -EEXIST ? rc : fail(b, rc, "bindings: %s", strerror(-rc));
	if ((rc = add_decoded(b, a, d)) < 0)
		return rc == -EEXIST ? rc : fail(b, rc, "decoded: %s", strerror(-rc));
	if ((rc = add_xattr_files(b, a)) < 0)
		return rc == -EEXIST ? rc : fail(b, rc, "xattrs: %s", strerror(-rc));
	/* the (parent, name) hash is done with: free it before the children
	 * arrays are made (the peak of the build) */
	free(b->slots);
	b->slots = NULL;
	b->nslots = 0;
	if ((rc = link_children(b)) < 0)
		return rc == -EEXIST ? rc : fail(b, rc, "children: %s", strerror(-rc));
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
