/* calbin/yaml.c — YAML as jansson, parsed safely (seed §9 Gate B "YAML
 * 可安全解析").
 *
 * libyaml's event API, never a document loader: the file is read through
 * a read handler with a byte limit, each event builds at most one value,
 * and the limits of cb_yaml_limits bound what a hostile file can make us
 * build: nesting depth, the number of values (aliases count with every
 * value they expand to, so a billion-laughs file stops at the limit instead
 * of growing), the size of one scalar.  Tags are refused (nothing is ever
 * constructed from a tag), keys must be scalars and unique.
 *
 * Plain scalars are resolved with the YAML 1.2 core schema (null, bool,
 * decimal/0x/0o integers, floats), integers beyond int64 and .inf/.nan
 * stay strings; quoted and block scalars are strings.  Objects keep their
 * keys in file order (jansson keeps insertion order).  Every member and
 * element gets its line in a side index, for the findings' sites. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "calbin/internal.h"

const struct cb_yaml_limits cb_yaml_default_limits = {
	.max_bytes = 64ull << 20,
	.max_depth = 64,
	.max_nodes = 1000000,
	.max_scalar = 1u << 20,
};

#define MAX_ANCHORS 4096

struct cb_yaml_line {
	const json_t *parent;  /* NULL: empty slot */
	const char *key;       /* the object's own key string, NULL for arrays */
	size_t index;
	uint64_t line;
};

/* ---- the line index ------------------------------------------------------ */

static uint64_t mix(const json_t *parent, const char *key, size_t index)
{
	uint64_t h = (uint64_t)(uintptr_t)parent * 0x9e3779b97f4a7c15ull;
	if (key) {
		for (const unsigned char *s = (const unsigned char *)key; *s; s++)
			h = (h ^ *s) * 0x100000001b3ull;
	} else {
		h ^= (uint64_t)index * 0xbf58476d1ce4e5b9ull;
	}
	return h ^ (h >> 29);
}

static bool same(const struct cb_yaml_line *e, const json_t *parent, const char *key, size_t index)
{
	if (e->parent != parent)
		return false;
	if (key)
		return e->key && strcmp(e->key, key) == 0;
	return !e->key && e->index == index;
}

static bool lines_put(struct cb_yaml_doc *d, const json_t *parent, const char *key, size_t index,
		      uint64_t line)
{
	if ((d->nlines + 1) * 2 > d->caplines) {
		size_t cap = d->caplines ? d->caplines * 2 : 256;
		struct cb_yaml_line *n = calloc(cap, sizeof *n);
		if (!n)
			return false;
		for (size_t i = 0; i < d->caplines; i++) {
			struct cb_yaml_line *e = &d->lines[i];
			if (!e->parent)
				continue;
			size_t j = mix(e->parent, e->key, e->index) & (cap - 1);
			while (n[j].parent)
				j = (j + 1) & (cap - 1);
			n[j] = *e;
		}
		free(d->lines);
		d->lines = n;
		d->caplines = cap;
	}
	size_t j = mix(parent, key, index) & (d->caplines - 1);
	while (d->lines[j].parent)
		j = (j + 1) & (d->caplines - 1);
	d->lines[j] = (struct cb_yaml_line){.parent = parent, .key = key, .index = index, .line = line};
	d->nlines++;
	return true;
}

static uint64_t lines_get(const struct cb_yaml_doc *d, const json_t *parent, const char *key,
			  size_t index)
{
	if (!d || !d->caplines || !parent)
		return 0;
	size_t j = mix(parent, key, index) & (d->caplines - 1);
	while (d->lines[j].parent) {
		if (same(&d->lines[j], parent, key, index))
			return d->lines[j].line;
		j = (j + 1) & (d->caplines - 1);
	}
	return 0;
}

uint64_t cb_yaml_line(const struct cb_yaml_doc *d, const json_t *parent, const char *key)
{
	return key ? lines_get(d, parent, key, 0) : 0;
}

uint64_t cb_yaml_line_at(const struct cb_yaml_doc *d, const json_t *parent, size_t i)
{
	return lines_get(d, parent, NULL, i);
}

void cb_yaml_free(struct cb_yaml_doc *d, bool free_root)
{
	free(d->lines);
	d->lines = NULL;
	d->nlines = d->caplines = 0;
	if (free_root) {
		json_decref(d->root);
		d->root = NULL;
	}
}

/* ---- scalars ------------------------------------------------------------- */

static bool all_digits(const char *s, size_t n, int base)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = base == 16 ? ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
					(c >= 'A' && c <= 'F'))
			  : base == 8 ? (c >= '0' && c <= '7') : (c >= '0' && c <= '9');
		if (!ok)
			return false;
	}
	return true;
}

/* YAML 1.2 core float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool is_float(const char *s, size_t n)
{
	size_t i = 0, digits = 0;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++, digits++;
	if (i < n && s[i] == '.') {
		i++;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++, digits++;
	}
	if (!digits)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			i++;
		size_t e = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++, e++;
		if (!e)
			return false;
	}
	return i == n;
}

static bool word(const char *s, size_t n, const char *a, const char *b, const char *c)
{
	return (strlen(a) == n && memcmp(s, a, n) == 0) || (strlen(b) == n && memcmp(s, b, n) == 0) ||
	       (strlen(c) == n && memcmp(s, c, n) == 0);
}

static json_t *plain_scalar(const char *s, size_t n)
{
	if (n == 0 || word(s, n, "~", "null", "Null") || word(s, n, "NULL", "NULL", "NULL"))
		return json_null();
	if (word(s, n, "true", "True", "TRUE"))
		return json_true();
	if (word(s, n, "false", "False", "FALSE"))
		return json_false();
	int base = 0;
	size_t skip = 0;
	bool neg = false;
	if (n > 2 && s[0] == '0' && s[1] == 'x' && all_digits(s + 2, n - 2, 16))
		base = 16, skip = 2;
	else if (n > 2 && s[0] == '0' && s[1] == 'o' && all_digits(s + 2, n - 2, 8))
		base = 8, skip = 2;
	else if (all_digits(s + (s[0] == '-' || s[0] == '+'), n - (s[0] == '-' || s[0] == '+'), 10))
		base = 10, skip = s[0] == '-' || s[0] == '+', neg = s[0] == '-';
	if (base) {
		uint64_t v = 0;
		bool over = false;
		for (size_t i = skip; i < n && !over; i++) {
			char c = s[i];
			unsigned d = c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
			over = __builtin_mul_overflow(v, (uint64_t)base, &v) ||
			       __builtin_add_overflow(v, (uint64_t)d, &v);
		}
		if (!over && !neg && v <= (uint64_t)INT64_MAX)
			return json_integer((json_int_t)v);
		if (!over && neg && v <= (uint64_t)INT64_MAX + 1)
			return json_integer(v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(json_int_t)v);
		return json_stringn(s, n);  /* beyond int64: keep the text */
	}
	if (is_float(s, n)) {
		char buf[64];
		if (n < sizeof buf) {
			memcpy(buf, s, n);
			buf[n] = '\0';
			json_t *v = json_real(strtod(buf, NULL));
			if (v)
				return v;
		}
	}
	return json_stringn(s, n);
}

/* ---- the builder ----------------------------------------------------------- */

struct frame {
	json_t *node;
	bool map;
	char *key;             /* mapping: the pending key */
	uint64_t key_line;
	char *anchor;          /* registered when the node ends */
	size_t nodes_at_start; /* before the container itself was counted */
	uint64_t start_line;
};

struct anchor {
	char *name;
	json_t *node;
	size_t nodes;
};

struct builder {
	const char *file;
	const struct cb_yaml_limits *lim;
	struct nf_report *r;
	struct cb_yaml_doc *doc;
	struct frame *stack;
	size_t depth, cap;
	struct anchor *anchors;
	size_t nanchors;
	size_t nodes;
	int docs;
	bool failed, oom;
};

static void fail(struct builder *b, const char *code, uint64_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void fail(struct builder *b, const char *code, uint64_t line, const char *fmt, ...)
{
	if (b->failed)
		return;
	b->failed = true;
	char *ev = NULL;
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&ev, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		b->oom = true;
		return;
	}
	CB_ERR(b->r, 'B', code, b->file, line, NULL, "seed §9 Gate B: %s", ev);
	free(ev);
}

static bool count_nodes(struct builder *b, size_t n, uint64_t line)
{
	if (__builtin_add_overflow(b->nodes, n, &b->nodes) || b->nodes > b->lim->max_nodes) {
		fail(b, "YAML_LIMIT", line, "more than %zu values (aliases count with what they "
		     "expand to)", b->lim->max_nodes);
		return false;
	}
	return true;
}

static void register_anchor(struct builder *b, char *name, json_t *node, size_t nodes,
			    uint64_t line)
{
	for (size_t i = 0; i < b->nanchors; i++)
		if (strcmp(b->anchors[i].name, name) == 0) {
			json_decref(b->anchors[i].node);
			free(b->anchors[i].name);
			b->anchors[i] = (struct anchor){name, json_incref(node), nodes};
			return;
		}
	if (b->nanchors == MAX_ANCHORS) {
		free(name);
		fail(b, "YAML_LIMIT", line, "more than %d anchors", MAX_ANCHORS);
		return;
	}
	struct anchor *a = reallocarray(b->anchors, b->nanchors + 1, sizeof *a);
	if (!a) {
		free(name);
		b->oom = true;
		return;
	}
	b->anchors = a;
	a[b->nanchors++] = (struct anchor){name, json_incref(node), nodes};
}

/* Attach a finished value to the current container (or make it the root). */
static void attach(struct builder *b, json_t *v, uint64_t line, char *anchor, size_t nodes_at_start)
{
	if (!v) {
		b->oom = true;
		free(anchor);
		return;
	}
	if (anchor)
		register_anchor(b, anchor, v, b->nodes - nodes_at_start, line);
	if (b->depth == 0) {
		if (b->doc->root) {
			json_decref(v);
			return;
		}
		b->doc->root = v;
		b->doc->root_line = line;
		return;
	}
	struct frame *f = &b->stack[b->depth - 1];
	if (!f->map) {
		size_t i = json_array_size(f->node);
		if (json_array_append_new(f->node, v) < 0 || !lines_put(b->doc, f->node, NULL, i, line))
			b->oom = true;
		return;
	}
	if (!f->key) {
		/* Keys arrive as scalar text (on_scalar); anything else was
		 * refused before it got here. */
		json_decref(v);
		fail(b, "YAML_SYNTAX", line, "a mapping key is not a scalar");
		return;
	}
	char *key = f->key;
	f->key = NULL;
	if (json_object_get(f->node, key)) {
		json_decref(v);
		CB_ERR(b->r, 'B', "YAML_DUPLICATE_KEY", b->file, f->key_line, key,
		       "seed §9 Gate B: the key '%s' appears twice in one mapping; the first is kept",
		       key);
		free(key);
		return;
	}
	if (json_object_set_new(f->node, key, v) < 0) {
		b->oom = true;
		free(key);
		return;
	}
	void *it = json_object_iter_at(f->node, key);
	if (!it || !lines_put(b->doc, f->node, json_object_iter_key(it), 0, f->key_line))
		b->oom = true;
	free(key);
}

static bool push(struct builder *b, json_t *node, bool map, const unsigned char *anchor,
		 uint64_t line)
{
	if (!node) {
		b->oom = true;
		return false;
	}
	if (b->depth >= b->lim->max_depth) {
		json_decref(node);
		fail(b, "YAML_LIMIT", line, "nesting deeper than %u levels", b->lim->max_depth);
		return false;
	}
	if (b->depth == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;
		struct frame *s = reallocarray(b->stack, cap, sizeof *s);
		if (!s) {
			json_decref(node);
			b->oom = true;
			return false;
		}
		b->stack = s;
		b->cap = cap;
	}
	char *a = anchor ? strdup((const char *)anchor) : NULL;
	if (anchor && !a) {
		json_decref(node);
		b->oom = true;
		return false;
	}
	b->stack[b->depth++] = (struct frame){.node = node, .map = map, .anchor = a,
					       .nodes_at_start = b->nodes - 1, .start_line = line};
	return true;
}

static void pop(struct builder *b, uint64_t line)
{
	struct frame f = b->stack[--b->depth];
	free(f.key);
	(void)line;
	attach(b, f.node, f.start_line, f.anchor, f.nodes_at_start);
}

/* A scalar in key position of the innermost mapping? */
static bool want_key(const struct builder *b)
{
	return b->depth && b->stack[b->depth - 1].map && !b->stack[b->depth - 1].key;
}

static void on_scalar(struct builder *b, const yaml_event_t *ev, uint64_t line)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	if (n > b->lim->max_scalar) {
		fail(b, "YAML_LIMIT", line, "a scalar of %zu bytes (limit %zu)", n, b->lim->max_scalar);
		return;
	}
	if (!count_nodes(b, 1, line))
		return;
	if (want_key(b)) {
		if (memchr(s, '\0', n)) {
			fail(b, "YAML_SYNTAX", line, "a mapping key holds U+0000");
			return;
		}
		struct frame *f = &b->stack[b->depth - 1];
		if (!(f->key = strndup(s, n))) {
			b->oom = true;
			return;
		}
		f->key_line = line;
		if (ev->data.scalar.anchor)
			fail(b, "YAML_LIMIT", line, "an anchor on a mapping key is not accepted");
		return;
	}
	json_t *v = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? plain_scalar(s, n)
								       : json_stringn(s, n);
	char *a = NULL;
	if (ev->data.scalar.anchor && !(a = strdup((const char *)ev->data.scalar.anchor))) {
		json_decref(v);
		b->oom = true;
		return;
	}
	attach(b, v, line, a, b->nodes - 1);
}

static void on_alias(struct builder *b, const yaml_event_t *ev, uint64_t line)
{
	const char *name = (const char *)ev->data.alias.anchor;
	const struct anchor *a = NULL;
	for (size_t i = 0; i < b->nanchors; i++)
		if (strcmp(b->anchors[i].name, name) == 0)
			a = &b->anchors[i];
	if (!a) {
		fail(b, "YAML_SYNTAX", line, "alias '*%.64s' names no anchor before it", name);
		return;
	}
	if (want_key(b)) {
		fail(b, "YAML_SYNTAX", line, "an alias as a mapping key is not accepted");
		return;
	}
	if (!count_nodes(b, a->nodes ? a->nodes : 1, line))
		return;
	json_t *copy = json_deep_copy(a->node);
	attach(b, copy, line, NULL, b->nodes);
}

static bool has_tag(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT: return ev->data.scalar.tag != NULL;
	case YAML_SEQUENCE_START_EVENT: return ev->data.sequence_start.tag != NULL;
	case YAML_MAPPING_START_EVENT: return ev->data.mapping_start.tag != NULL;
	default: return false;
	}
}

static void on_event(struct builder *b, const yaml_event_t *ev)
{
	uint64_t line = (uint64_t)ev->start_mark.line + 1;
	if (has_tag(ev)) {
		fail(b, "YAML_TAG", line, "tags are not accepted (nothing is constructed from a tag)");
		return;
	}
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++b->docs > 1)
			fail(b, "YAML_SYNTAX", line, "more than one document in the stream");
		break;
	case YAML_SCALAR_EVENT:
		on_scalar(b, ev, line);
		break;
	case YAML_ALIAS_EVENT:
		on_alias(b, ev, line);
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		bool map = ev->type == YAML_MAPPING_START_EVENT;
		if (want_key(b)) {
			fail(b, "YAML_SYNTAX", line, "a mapping key is not a scalar");
			return;
		}
		if (!count_nodes(b, 1, line))
			return;
		const unsigned char *anchor = map ? ev->data.mapping_start.anchor
						  : ev->data.sequence_start.anchor;
		push(b, map ? json_object() : json_array(), map, anchor, line);
		break;
	}
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth)
			pop(b, line);
		break;
	default:
		break;
	}
}

struct source {
	int fd;
	const unsigned char *buf;
	size_t len, pos;
	uint64_t total, max;
	bool too_big, io_error;
	int err;
};

static int read_handler(void *data, unsigned char *buffer, size_t size, size_t *size_read)
{
	struct source *s = data;
	ssize_t n;
	if (s->buf) {
		n = (ssize_t)(s->len - s->pos < size ? s->len - s->pos : size);
		memcpy(buffer, s->buf + s->pos, (size_t)n);
		s->pos += (size_t)n;
	} else {
		do
			n = read(s->fd, buffer, size);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			s->io_error = true;
			s->err = errno;
			return 0;
		}
	}
	s->total += (uint64_t)n;
	if (s->total > s->max) {
		s->too_big = true;
		return 0;
	}
	*size_read = (size_t)n;
	return 1;
}

static int load(struct source *src, const char *file, const struct cb_yaml_limits *lim,
		struct nf_report *r, struct cb_yaml_doc *doc)
{
	if (!lim)
		lim = &cb_yaml_default_limits;
	memset(doc, 0, sizeof *doc);
	src->max = lim->max_bytes;
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input(&parser, read_handler, src);
	struct builder b = {.file = file, .lim = lim, .r = r, .doc = doc};
	bool done = false;
	while (!done && !b.failed && !b.oom) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			uint64_t line = (uint64_t)parser.problem_mark.line + 1;
			if (src->too_big)
				fail(&b, "YAML_LIMIT", 0, "the file is larger than %" PRIu64 " bytes",
				     lim->max_bytes);
			else if (src->io_error)
				cb_find_op(r, 'A', "FILE_UNREADABLE", file, "read: %s", strerror(src->err));
			else if (parser.error == YAML_MEMORY_ERROR)
				b.oom = true;
			else
				fail(&b, "YAML_SYNTAX", line, "%s%s%s", parser.problem ? parser.problem
				     : "parse error", parser.context ? " " : "",
				     parser.context ? parser.context : "");
			b.failed = true;
			break;
		}
		on_event(&b, &ev);
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	while (b.depth) {
		struct frame *f = &b.stack[--b.depth];
		json_decref(f->node);
		free(f->key);
		free(f->anchor);
	}
	free(b.stack);
	for (size_t i = 0; i < b.nanchors; i++) {
		free(b.anchors[i].name);
		json_decref(b.anchors[i].node);
	}
	free(b.anchors);
	if (b.oom || b.failed) {
		cb_yaml_free(doc, true);
		if (b.oom) {
			r->oom = true;
			return -ENOMEM;
		}
		return -1;
	}
	if (!doc->root)
		doc->root = json_null();
	return 0;
}

int cb_yaml_load(int fd, const char *file, const struct cb_yaml_limits *lim,
		 struct nf_report *r, struct cb_yaml_doc *doc)
{
	struct source src = {.fd = fd};
	return load(&src, file, lim, r, doc);
}

int cb_yaml_load_buffer(const void *buf, size_t len, const char *file,
			const struct cb_yaml_limits *lim, struct nf_report *r,
			struct cb_yaml_doc *doc)
{
	struct source src = {.fd = -1, .buf = buf ? buf : (const void *)"", .len = len};
	return load(&src, file, lim, r, doc);
}
