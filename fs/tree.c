/* fs/tree.c — the generic inode table and its builder (tree.h): nodes, the
 * names arena, the (parent, name) hash, the proof that no directory holds
 * one name twice, the children arrays and lookup.  What goes in the tree
 * is the family's (fs/ninfer/tree.c). */
#include "fs/tree.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/names.h"

_Static_assert(sizeof(struct nf_node) == 40, "struct nf_node grew (issue 6)");

int nf_build_fail(struct nf_builder *b, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->err, b->errlen, fmt, ap);
	va_end(ap);
	return rc;
}

/* Append `s` (len bytes) quoted-escaped, the middle of a long name left
 * out (nf_msg_name). */
static void put_quoted(struct nf_msg *m, const char *s, size_t len)
{
	const size_t head = 48, tail = 48;
	bool skipped = false;

	for (size_t i = 0; i < len && m->len + 8 < m->cap; i++) {
		unsigned char c = (unsigned char)s[i];
		if (len > head + tail + 16 && i >= head && !skipped && (c & 0xC0) != 0x80) {
			skipped = true;
			/* skip to a character boundary, "tail" bytes from the end */
			size_t j = len - tail;
			while (j < len && ((unsigned char)s[j] & 0xC0) == 0x80)
				j++;
			m->len += (size_t)snprintf(m->buf + m->len, m->cap - m->len, "...");
			i = j - 1;
			continue;
		}
		if (c < 0x20 || c == '"' || c == '\\' || c == 0x7f)
			m->len += (size_t)snprintf(m->buf + m->len, m->cap - m->len, "\\x%02x", c);
		else
			m->buf[m->len++] = (char)c;
	}
	if (m->len < m->cap)
		m->buf[m->len] = '\0';
}

void nf_msg_put(struct nf_msg *m, const char *s)
{
	int n;

	if (m->cap == 0)
		return;
	n = snprintf(m->buf + m->len, m->cap - m->len, "%s", s);
	m->len += n < 0 ? 0 : (size_t)n < m->cap - m->len ? (size_t)n : m->cap - m->len - 1;
}

void nf_msg_name(struct nf_msg *m, const char *s)
{
	nf_msg_put(m, "\"");
	put_quoted(m, s, strlen(s));
	nf_msg_put(m, "\"");
}

/* The path of node `idx` below the mount's root, escaped names. */
static void put_path(const struct nf_tree *t, struct nf_msg *m, uint32_t idx)
{
	uint32_t chain[64];
	unsigned n = 0;

	for (uint32_t i = idx; i != 0 && n < 64; i = t->nodes[i].parent)
		chain[n++] = i;
	nf_msg_put(m, "\"");
	if (n == 64)
		nf_msg_put(m, ".../");
	while (n-- > 0) {
		const struct nf_node *nd = &t->nodes[chain[n]];
		put_quoted(m, t->names + nd->name_off, nd->name_len);
		if (n)
			nf_msg_put(m, "/");
	}
	nf_msg_put(m, "\"");
}

static struct nf_rec rec_of(const struct nf_tree *t, uint32_t idx)
{
	const struct nf_node *n = &t->nodes[idx];

	return (struct nf_rec){.role = n->role, .ref = n->ref, .ref2 = n->ref2,
			       .parent = n->parent};
}

static void describe(const struct nf_builder *b, const struct nf_rec *r, struct nf_msg *m)
{
	if (b->describe)
		b->describe(b, r, m);
	else
		nf_msg_put(m, "a node");
}

int nf_build_clash(struct nf_builder *b, uint32_t first, const struct nf_rec *second)
{
	struct nf_rec r1 = rec_of(b->t, first);
	struct nf_msg m = {b->err, b->errlen, 0};

	if (b->errlen == 0)
		return -EEXIST;
	b->err[0] = '\0';
	describe(b, &r1, &m);
	nf_msg_put(&m, " and ");
	describe(b, second, &m);
	nf_msg_put(&m, " both map to ");
	put_path(b->t, &m, first);
	nf_msg_put(&m, " (two files cannot have one name: refused)");
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

static bool node_is(const struct nf_builder *b, uint32_t idx, uint32_t parent, const char *name,
		    size_t len)
{
	const struct nf_node *n = &b->t->nodes[idx];

	return n->parent == parent && n->name_len == len &&
	       memcmp(b->t->names + n->name_off, name, len) == 0;
}

int64_t nf_build_find(const struct nf_builder *b, uint32_t parent, const char *name, size_t len)
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

/* Keep the hash at most half full (`want` nodes: a size to start from).
 * The stored hash keeps probes off the nodes and names (a cache miss
 * each) unless it matches, and lets the table grow without hashing the
 * names again. */
static int hash_grow(struct nf_builder *b, size_t want)
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

static int names_add(struct nf_builder *b, const char *name, size_t len, uint32_t *off)
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
static int64_t node_new(struct nf_builder *b, uint32_t parent, const char *name, size_t len,
			bool is_dir, uint8_t role, bool hashed)
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
	n->name_len = (uint16_t)len;
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

int64_t nf_build_node(struct nf_builder *b, const struct nf_rec *r, const char *esc, size_t len,
		      bool is_dir, bool hashed)
{
	int64_t i = node_new(b, r->parent, esc, len, is_dir, r->role, hashed);

	if (i >= 0) {
		b->t->nodes[i].ref = r->ref;
		b->t->nodes[i].ref2 = r->ref2;
	}
	return i;
}

/* Store view `v` in file node `idx`, packed.  A view of one payload span
 * lives in the node itself: its piece, the last one added, is taken back. */
static void node_set_view(struct nf_builder *b, uint32_t idx, const struct nf_view *v)
{
	struct nf_node *n = &b->t->nodes[idx];

	n->kind = (uint8_t)v->kind;
	n->size = v->size;
	n->at = 0;
	switch (v->kind) {
	case NF_VIEW_MEMORY:
		n->at = (uint64_t)(uintptr_t)v->mem;
		break;
	case NF_VIEW_FILE:
		n->at = v->file_offset;
		n->ref2 = v->file;
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
		b->max_pieces = v->count > b->max_pieces ? v->count : b->max_pieces;
		break;
	default:
		if (v->kind >= NF_VIEW_FAMILY) {
			n->at = v->at;
			n->tag[0] = v->tag[0];
			n->tag[1] = v->tag[1];
		}
		break;
	}
}

void nf_tree_view(const struct nf_tree *t, uint32_t idx, struct nf_view *v)
{
	const struct nf_node *n = &t->nodes[idx];

	memset(v, 0, sizeof *v);
	if (n->is_dir)
		return;
	v->kind = n->kind == NF_NODE_SPAN ? NF_VIEW_PIECES : n->kind;
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
		v->next_zero = t->next_zero;
		v->first = (uint32_t)n->at;
		v->count = (uint32_t)(n->at >> 32);
		break;
	case NF_VIEW_MEMORY:
		v->mem = (const char *)(uintptr_t)n->at;
		break;
	case NF_VIEW_FILE:
		v->file = n->ref2;
		v->file_offset = n->at;
		break;
	default:
		if (n->kind >= NF_VIEW_FAMILY) {
			v->at = n->at;
			v->tag[0] = n->tag[0];
			v->tag[1] = n->tag[1];
		}
		break;
	}
}

void nf_build_view(struct nf_builder *b, uint32_t idx, struct nf_view *v)
{
	b->t->pieces = b->pieces.v;
	b->t->npieces = b->pieces.n;
	nf_tree_view(b->t, idx, v);
}

int64_t nf_build_dir(struct nf_builder *b, uint32_t parent, const char *name, size_t len,
		     uint8_t role)
{
	int64_t i = nf_build_find(b, parent, name, len);
	struct nf_rec r = {.role = role, .parent = parent};

	if (i >= 0)
		return b->t->nodes[i].is_dir ? i : nf_build_clash(b, (uint32_t)i, &r);
	return node_new(b, parent, name, len, true, role, true);
}

int64_t nf_build_leaf(struct nf_builder *b, struct nf_rec *r, const char *raw, size_t len,
		      const struct nf_view *v, bool unique)
{
	char esc[NF_NAME_MAX + 1];
	size_t n = nf_escape_component(raw, len, esc);
	int64_t i = nf_build_find(b, r->parent, esc, n);

	if (i >= 0 && b->t->nodes[i].is_dir) {
		r->parent = (uint32_t)i;
		strcpy(esc, NF_SELF_NAME);
		n = strlen(esc);
		i = nf_build_find(b, r->parent, esc, n);
	}
	if (i >= 0)
		return nf_build_clash(b, (uint32_t)i, r);
	i = nf_build_node(b, r, esc, n, false, !unique || nf_escape_is_cut(esc, n));
	if (i >= 0)
		node_set_view(b, (uint32_t)i, v);
	return i;
}

int64_t nf_build_file(struct nf_builder *b, uint32_t parent, const char *name, uint8_t role,
		      const struct nf_view *v)
{
	struct nf_rec r = {.role = role, .parent = parent};

	return nf_build_leaf(b, &r, name, strlen(name), v, false);
}

int64_t nf_build_unique(struct nf_builder *b, const struct nf_rec *r, const char *raw,
			size_t len, bool is_dir, const struct nf_view *v)
{
	char esc[NF_NAME_MAX + 1];
	size_t n = nf_escape_component(raw, len, esc);
	bool cut = nf_escape_is_cut(esc, n);
	int64_t i = cut ? nf_build_find(b, r->parent, esc, n) : -1;

	if (i >= 0)
		return nf_build_clash(b, (uint32_t)i, r);
	i = nf_build_node(b, r, esc, n, is_dir, cut);
	if (i >= 0 && v)
		node_set_view(b, (uint32_t)i, v);
	return i;
}

int64_t nf_build_verbatim(struct nf_builder *b, const struct nf_rec *r, const char *name,
			  size_t len, const struct nf_view *v)
{
	int64_t i;

	if (len == 0 || len > NF_NAME_MAX || memchr(name, '/', len) || memchr(name, '\0', len) ||
	    (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return nf_build_fail(b, -EINVAL, "'%.*s' is not a file name", (int)(len > 64 ? 64 : len),
				     name);
	i = nf_build_node(b, r, name, len, v == NULL, false);
	if (i >= 0 && v)
		node_set_view(b, (uint32_t)i, v);
	return i;
}

int64_t nf_build_doc(struct nf_builder *b, uint32_t parent, const char *name, uint8_t role,
		     const char *text)
{
	struct nf_view v;

	nf_view_memory(&v, text, text ? strlen(text) : 0);
	return nf_build_file(b, parent, name, role, &v);
}

int nf_build_own(struct nf_builder *b, void *p)
{
	struct nf_tree *t = b->t;

	if (t->nowned == b->owned_cap) {
		size_t cap = b->owned_cap ? b->owned_cap * 2 : 16;
		void **nv = realloc(t->owned, cap * sizeof *nv);
		if (nv == NULL)
			return -ENOMEM;
		t->owned = nv;
		b->owned_cap = cap;
	}
	t->owned[t->nowned++] = p;
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

/* Children come in the family's record order, which writers usually keep
 * sorted: one pass saves the sort of large directories (n log n random
 * name compares each).  Returns 1 when strictly increasing, 0 when not
 * sorted, or -(k+1) when children k-1 and k have one name (a sorted run up
 * to there). */
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
 * NAMES): unique leaves are not in the build's hash (issue 6), so a naming
 * bug would otherwise give two files one name.  Sorted children make it
 * one compare per child: the one order_of() does anyway, or one linear
 * pass after a sort. */
static int children_unique(struct nf_builder *b, const uint32_t *c, uint32_t n)
{
	int64_t k = order_of(b->t, c, n);

	if (k < 0) {
		struct nf_rec second = rec_of(b->t, c[-k - 1]);
		return nf_build_clash(b, c[-k - 2], &second);
	}
	return k == 1 ? 0 : 1;
}

/* Children arrays: counting sort by parent (first_child is the fill
 * cursor, then set back), then by name in each dir, each proven free of
 * duplicates.  -EEXIST (b->err says which records) or -ENOMEM. */
static int link_children(struct nf_builder *b)
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

int nf_build_begin(struct nf_builder *b, struct nf_tree *t, uint8_t root_role, size_t hashed,
		   char *err, size_t errlen)
{
	void (*desc)(const struct nf_builder *, const struct nf_rec *, struct nf_msg *) = b->describe;
	void *arg = b->arg;
	int rc;

	memset(b, 0, sizeof *b);
	memset(t, 0, sizeof *t);
	b->t = t;
	b->describe = desc;
	b->arg = arg;
	b->err = err;
	b->errlen = errlen;
	rc = hash_grow(b, hashed);
	if (rc < 0) {
		nf_build_fail(b, rc, "tree hash: %s", strerror(-rc));
		nf_build_abort(b);
		return rc;
	}
	rc = (int)node_new(b, 0, "", 0, true, root_role, true);
	if (rc < 0) {
		nf_build_fail(b, rc, "root: %s", strerror(-rc));
		nf_build_abort(b);
		return rc;
	}
	return 0;
}

static void hand_over_pieces(struct nf_builder *b)
{
	b->t->pieces = b->pieces.v;
	b->t->npieces = b->pieces.n;
	memset(&b->pieces, 0, sizeof b->pieces);
}

void nf_build_abort(struct nf_builder *b)
{
	free(b->slots);
	b->slots = NULL;
	b->nslots = 0;
	hand_over_pieces(b);
	nf_tree_free(b->t);
}

int nf_build_end(struct nf_builder *b)
{
	int rc;

	/* the (parent, name) hash is done with: free it before the children
	 * arrays are made (the peak of the build) */
	free(b->slots);
	b->slots = NULL;
	b->nslots = 0;
	hand_over_pieces(b);
	rc = link_children(b);
	if (rc < 0) {
		if (rc != -EEXIST)   /* -EEXIST: nf_build_clash has said which two */
			nf_build_fail(b, rc, "children: %s", strerror(-rc));
		nf_tree_free(b->t);
		return rc;
	}
	if (b->t->npieces &&
	    !(b->t->next_zero = nf_pieces_next_zero(b->t->pieces, b->t->npieces))) {
		nf_tree_free(b->t);
		return nf_build_fail(b, -ENOMEM, "the pieces' hole index: out of memory");
	}
	return 0;
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
	free(t->next_zero);
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
