/* reader/json_scan.c — integers jansson cannot hold.
 *
 * Seed §1 makes sizes U64 (up to 2^64-1), but jansson's json_int_t is
 * int64 and jansson refuses the whole document when one integer literal
 * does not fit ("too big integer").  That would turn one bad field into a
 * useless "invalid JSON", and would refuse big integers that are legal in
 * the open objects (config, metadata, provenance).  So before parsing, a
 * small tokenizer finds such literals, remembers their JSON pointer, and
 * rewrites them as binary64 reals; after parsing the pointer finds the
 * node, and the field that holds it reports it by identity (json_fields.c).
 * The tokenizer only has to be right on valid JSON: on anything else it
 * gives up and lets jansson report the syntax error. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

#define MAX_DEPTH 4096  /* jansson stops at 2048 */

struct frame {
	bool object;
	uint64_t index;           /* array: current element */
	const char *key;          /* object: raw key token, quotes included */
	size_t key_len;
};

struct growbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void gb_add(struct growbuf *g, const char *s, size_t n)
{
	if (g->oom)
		return;
	if (g->len + n + 1 > g->cap) {
		size_t cap = g->cap ? g->cap : 256;
		while (cap < g->len + n + 1)
			cap *= 2;
		char *q = realloc(g->p, cap);
		if (!q) {
			g->oom = true;
			return;
		}
		g->p = q;
		g->cap = cap;
	}
	memcpy(g->p + g->len, s, n);
	g->len += n;
	g->p[g->len] = '\0';
}

/* Decode a raw key token with jansson itself (escapes, surrogates). */
char *nf_json_decode_key(const char *tok, size_t len)
{
	json_error_t e;
	json_t *s = json_loadb(tok, len, JSON_DECODE_ANY, &e);
	char *out = NULL;
	if (json_is_string(s))
		out = strdup(json_string_value(s));
	json_decref(s);
	return out;
}

static char *pointer_of(const struct frame *st, size_t depth, bool *open)
{
	struct growbuf g = {0};
	char *k0 = NULL, *k2 = NULL;
	for (size_t i = 0; i < depth; i++) {
		gb_add(&g, "/", 1);
		if (!st[i].object) {
			char num[24];
			int n = snprintf(num, sizeof num, "%" PRIu64, st[i].index);
			gb_add(&g, num, (size_t)n);
			continue;
		}
		char *key = nf_json_decode_key(st[i].key, st[i].key_len);
		if (!key) {
			g.oom = true;
			break;
		}
		for (const char *c = key; *c; c++) {
			if (*c == '~')
				gb_add(&g, "~0", 2);
			else if (*c == '/')
				gb_add(&g, "~1", 2);
			else
				gb_add(&g, c, 1);
		}
		if (i == 0)
			k0 = key;
		else if (i == 2)
			k2 = key;
		else
			free(key);
	}
	/* Open objects (seed §1, §4.2, §10): metadata, provenance and a
	 * component's config. */
	*open = k0 && (!strcmp(k0, "metadata") || !strcmp(k0, "provenance") ||
		       (!strcmp(k0, "components") && depth >= 3 && st[1].object && k2 &&
			!strcmp(k2, "config")));
	free(k0);
	free(k2);
	if (g.oom) {
		free(g.p);
		return NULL;
	}
	if (!g.p)
		return strdup("");
	return g.p;
}

/* Does the integer literal [s, s+n) fit int64? */
static bool fits_int64(const char *s, size_t n)
{
	bool neg = s[0] == '-';
	size_t digits = n - neg;
	if (digits < 19)
		return true;
	if (digits > 19)
		return false;
	const char *lim = neg ? "9223372036854775808" : "9223372036854775807";
	return memcmp(s + neg, lim, 19) <= 0;
}

static bool push_big(struct nf_bigints *bi, const char *lit, size_t n, char *pointer, bool open)
{
	struct nf_bigint *items = realloc(bi->items, (bi->count + 1) * sizeof *items);
	char *l = strndup(lit, n);
	if (!items || !l) {
		if (items)
			bi->items = items;
		free(l);
		free(pointer);
		return false;
	}
	bi->items = items;
	items[bi->count++] = (struct nf_bigint){.literal = l, .pointer = pointer, .open = open};
	return true;
}

char *nf_json_rewrite_bigints(const char *text, size_t len, size_t *out_len,
			      struct nf_bigints *bi, int *err)
{
	*err = 0;
	bi->items = NULL;
	bi->count = 0;
	struct frame *st = malloc(MAX_DEPTH * sizeof *st);
	if (!st) {
		*err = -ENOMEM;
		return NULL;
	}
	struct growbuf out = {0};
	size_t depth = 0, copied = 0, i = 0;
	bool expect_key = false, ok = true;
	while (i < len && ok) {
		char c = text[i];
		switch (c) {
		case ' ': case '\t': case '\n': case '\r': case ':':
			i++;
			break;
		case '{': case '[':
			if (depth == MAX_DEPTH) {
				ok = false;
				break;
			}
			st[depth++] = (struct frame){.object = c == '{'};
			expect_key = c == '{';
			i++;
			break;
		case '}': case ']':
			if (depth == 0) {
				ok = false;
				break;
			}
			depth--;
			expect_key = false;
			i++;
			break;
		case ',':
			if (depth == 0) {
				ok = false;
				break;
			}
			if (st[depth - 1].object)
				expect_key = true;
			else
				st[depth - 1].index++;
			i++;
			break;
		case '"': {
			/* a control byte ends the pass: it is invalid in a string,
			 * and the text after it need not be read (issue 11) */
			size_t j = i + 1;
			while (j < len && text[j] != '"' && (unsigned char)text[j] >= 0x20)
				j += text[j] == '\\' ? 2 : 1;
			if (j >= len || text[j] != '"') {
				ok = false;
				break;
			}
			if (expect_key && depth) {
				st[depth - 1].key = text + i;
				st[depth - 1].key_len = j + 1 - i;
				expect_key = false;
			}
			i = j + 1;
			break;
		}
		default:
			if (c == '-' || (c >= '0' && c <= '9')) {
				size_t j = i;
				bool integer = true;
				while (j < len && strchr("+-0123456789.eE", text[j]) && text[j]) {
					if (text[j] == '.' || text[j] == 'e' || text[j] == 'E')
						integer = false;
					j++;
				}
				if (integer && j - i > (text[i] == '-') && !fits_int64(text + i, j - i)) {
					bool open = false;
					char *ptr = pointer_of(st, depth, &open);
					char *lit = strndup(text + i, j - i);
					if (!ptr || !lit || !push_big(bi, text + i, j - i, ptr, open)) {
						free(lit);
						*err = -ENOMEM;
						ok = false;
						break;
					}
					double d = strtod(lit, NULL);
					free(lit);
					if (isinf(d))
						d = d > 0 ? 1.7976931348623157e308 : -1.7976931348623157e308;
					char real[40];
					int n = snprintf(real, sizeof real, "%.17e", d);
					gb_add(&out, text + copied, i - copied);
					gb_add(&out, real, (size_t)n);
					copied = j;
				}
				i = j;
			} else if (c >= 'a' && c <= 'z') {
				while (i < len && text[i] >= 'a' && text[i] <= 'z')
					i++;
			} else {
				ok = false;
			}
		}
	}
	free(st);
	if (*err || out.oom) {
		free(out.p);
		nf_bigints_free(bi);
		*err = -ENOMEM;
		return NULL;
	}
	if (bi->count == 0) {
		free(out.p);
		return NULL;
	}
	gb_add(&out, text + copied, len - copied);
	if (out.oom) {
		free(out.p);
		nf_bigints_free(bi);
		*err = -ENOMEM;
		return NULL;
	}
	*out_len = out.len;
	return out.p;
}

static json_t *resolve(json_t *root, const char *pointer)
{
	json_t *v = root;
	const char *p = pointer;
	while (v && *p == '/') {
		p++;
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char *tok = malloc(n + 1);
		if (!tok)
			return NULL;
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (p[i] == '~' && i + 1 < n) {
				tok[k++] = p[i + 1] == '1' ? '/' : '~';
				i++;
			} else {
				tok[k++] = p[i];
			}
		}
		tok[k] = '\0';
		if (json_is_object(v))
			v = json_object_get(v, tok);
		else if (json_is_array(v))
			v = json_array_get(v, (size_t)strtoull(tok, NULL, 10));
		else
			v = NULL;
		free(tok);
		p += n;
	}
	return v;
}

static int cmp_node(const void *x, const void *y)
{
	uintptr_t a = (uintptr_t)((const struct nf_bigint *)x)->node;
	uintptr_t b = (uintptr_t)((const struct nf_bigint *)y)->node;
	return (a > b) - (a < b);
}

void nf_json_resolve_bigints(struct nf_bigints *bi, json_t *root)
{
	for (size_t i = 0; i < bi->count; i++)
		bi->items[i].node = resolve(root, bi->items[i].pointer);
	/* Sorted by node for nf_bigint_of(); many such literals stay cheap. */
	if (bi->count)
		qsort(bi->items, bi->count, sizeof *bi->items, cmp_node);
}

void nf_bigints_free(struct nf_bigints *bi)
{
	for (size_t i = 0; i < bi->count; i++) {
		free(bi->items[i].literal);
		free(bi->items[i].pointer);
	}
	free(bi->items);
	bi->items = NULL;
	bi->count = 0;
}

const struct nf_bigint *nf_bigint_of(const struct nf_bigints *bi, const json_t *v)
{
	if (!v || bi->count == 0)
		return NULL;
	struct nf_bigint key = {.node = (json_t *)v};
	return bsearch(&key, bi->items, bi->count, sizeof key, cmp_node);
}

/* ---- the directory record by record ------------------------------------
 *
 * jansson's tree of a directory with a million records costs ~15x the text.
 * So the root object is split here into members, and the big tables
 * (objects, bindings, uses) are parsed one record at a time: peak memory is
 * the text, the model and one record.  The split is only trusted on text it
 * fully understands; the glue between values (brackets, commas, colons,
 * whitespace, member names) is checked strictly here and every value is
 * parsed strictly by jansson, so a text accepted this way is exactly a text
 * jansson accepts as a whole.  Anything else goes the slow way (the whole
 * text to jansson), which reports bad JSON as it always did. */

#define SCAN_MAX_DEPTH 1024  /* below jansson's 2048: deeper goes the slow way */

static inline bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A byte below 0x20 that is not whitespace (U+0000 above all) is never
 * valid JSON: the scan stops at it rather than skipping on, so a bad text
 * (e.g. a sparse entry's zeros) is not read past its first bad byte. */
static inline bool is_bad_ctl(char c)
{
	return (unsigned char)c < 0x20 && !is_ws(c);
}

/* The first '"' or byte below 0x20 at or after t[j], or len: eight bytes
 * at a time (the classic "has a byte equal to / less than" tests), as
 * strings are most of a directory's bytes. */
static size_t find_quote_or_ctl(const char *t, size_t j, size_t len)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	while (len - j >= 8) {
		uint64_t x, q;
		memcpy(&x, t + j, 8);
		q = x ^ (ones * '"');
		if (((q - ones) & ~q & highs) | ((x - ones * 0x20) & ~x & highs))
			break;
		j += 8;
	}
	while (j < len && t[j] != '"' && (unsigned char)t[j] >= 0x20)
		j++;
	return j;
}

size_t nf_json_skip_ws(const char *t, size_t i, size_t len)
{
	while (i < len && is_ws(t[i]))
		i++;
	return i;
}

/* t[i] is '"': the index after the closing quote, or 0 (also when a
 * control byte comes first: jansson reports it). */
size_t nf_json_skip_string(const char *t, size_t i, size_t len)
{
	size_t j = i + 1;
	for (;;) {
		size_t k = find_quote_or_ctl(t, j, len), bs = 0;
		if (k >= len || t[k] != '"')
			return 0;
		while (k - bs > i + 1 && t[k - bs - 1] == '\\')
			bs++;
		if (bs % 2 == 0)
			return k + 1;
		j = k + 1;
	}
}

/* One value starting at t[i]: its end, or 0 when the scan cannot vouch for
 * it.  Containers also give their number of elements/members. */
size_t nf_json_skip_value(const char *t, size_t i, size_t len, size_t *count)
{
	*count = 0;
	if (i >= len)
		return 0;
	char c0 = t[i];
	if (c0 == '"')
		return nf_json_skip_string(t, i, len);
	if (c0 != '{' && c0 != '[') {
		size_t j = i;
		while (j < len && !is_ws(t[j]) && t[j] != ',' && t[j] != '}' && t[j] != ']' &&
		       !is_bad_ctl(t[j]))
			j++;
		if (j == i)
			return 0;
		if ((c0 == '-' || (c0 >= '0' && c0 <= '9')) && !memchr(t + i, '.', j - i) &&
		    !memchr(t + i, 'e', j - i) && !memchr(t + i, 'E', j - i) &&
		    !fits_int64(t + i, j - i))
			return 0;
		return j;
	}
	size_t first = nf_json_skip_ws(t, i + 1, len);
	if (first >= len)
		return 0;
	bool empty = t[first] == (c0 == '{' ? '}' : ']');
	size_t commas = 0, j = i, depth = 0;
	while (j < len) {
		char c = t[j];
		switch (c) {
		case '"':
			j = nf_json_skip_string(t, j, len);
			if (!j)
				return 0;
			continue;
		case '{': case '[':
			if (++depth > SCAN_MAX_DEPTH)
				return 0;
			break;
		case '}': case ']':
			if (--depth == 0) {
				*count = empty ? 0 : commas + 1;
				return j + 1;
			}
			break;
		case ',':
			commas += depth == 1;
			break;
		default:
			if (is_bad_ctl(c))
				return 0;
			if (c == '-' || (c >= '0' && c <= '9')) {
				size_t k = j;
				bool integer = true;
				while (k < len && ((t[k] >= '0' && t[k] <= '9') || t[k] == '-' ||
						   t[k] == '+' || t[k] == '.' || t[k] == 'e' || t[k] == 'E')) {
					if (t[k] == '.' || t[k] == 'e' || t[k] == 'E')
						integer = false;
					k++;
				}
				/* A big integer: the slow way rewrites and reports it. */
				if (integer && k - j >= 19 && !fits_int64(t + j, k - j))
					return 0;
				j = k;
				continue;
			}
		}
		j++;
	}
	return 0;
}

void nf_root_scan_free(struct nf_root_scan *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->m[i].key);
	s->n = 0;
}

bool nf_json_scan_root(const char *t, size_t len, struct nf_root_scan *out)
{
	out->n = 0;
	size_t i = nf_json_skip_ws(t, 0, len);
	if (i >= len || t[i] != '{')
		return false;
	i = nf_json_skip_ws(t, i + 1, len);
	if (i < len && t[i] == '}') {
		i++;
	} else {
		for (;;) {
			if (i >= len || t[i] != '"' || out->n == NF_SCAN_MAX_MEMBERS)
				goto fail;
			size_t j = nf_json_skip_string(t, i, len);
			if (!j)
				goto fail;
			char *key = nf_json_decode_key(t + i, j - i);
			if (!key)
				goto fail;
			for (size_t k = 0; k < out->n; k++)
				if (strcmp(out->m[k].key, key) == 0) {
					free(key);
					goto fail; /* duplicate: jansson reports it */
				}
			struct nf_scan_member *m = &out->m[out->n++];
			m->key = key;
			i = nf_json_skip_ws(t, j, len);
			if (i >= len || t[i] != ':')
				goto fail;
			i = nf_json_skip_ws(t, i + 1, len);
			m->start = i;
			m->end = nf_json_skip_value(t, i, len, &m->count);
			if (!m->end)
				goto fail;
			i = nf_json_skip_ws(t, m->end, len);
			if (i < len && t[i] == ',') {
				i = nf_json_skip_ws(t, i + 1, len);
				continue;
			}
			if (i < len && t[i] == '}') {
				i++;
				break;
			}
			goto fail;
		}
	}
	if (nf_json_skip_ws(t, i, len) == len)
		return true;
fail:
	nf_root_scan_free(out);
	return false;
}

json_t *nf_json_load_range(const char *text, size_t start, size_t end)
{
	json_error_t e;
	return json_loadb(text + start, end - start, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
}
