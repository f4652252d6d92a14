/* fs/ninfer/safetensors.c — the virtual safetensors file (see safetensors.h). */
#include "fs/ninfer/safetensors.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *st_dtype_name(enum nf_dtype d)
{
	switch (d) {
	case NF_DTYPE_F32: return "F32";
	case NF_DTYPE_BF16: return "BF16";
	case NF_DTYPE_F16: return "F16";
	case NF_DTYPE_I32: return "I32";
	}
	return "F32";
}

/* The header JSON is written by hand, byte for byte what jansson's
 * json_dumps(JSON_COMPACT | JSON_PRESERVE_ORDER) gave (a scale fix of
 * issue 6: a jansson tree of 100,000 members cost seconds and ~100 MB at
 * mount).  The same code counts (out == NULL) or writes: the size is
 * known at mount, the bytes are made on the first read. */
struct sink {
	char *out;       /* NULL: count only */
	size_t n;
	size_t cap;      /* out: never written past (a short write is an error) */
};

static void put(struct sink *k, const char *s, size_t len)
{
	if (k->out && len <= k->cap && k->n <= k->cap - len)
		memcpy(k->out + k->n, s, len);
	k->n += len;
}

static void puts_(struct sink *k, const char *s)
{
	put(k, s, strlen(s));
}

static void put_u64(struct sink *k, uint64_t v)
{
	char b[24];
	int n = snprintf(b, sizeof b, "%" PRIu64, v);
	put(k, b, (size_t)n);
}

static void put_u(struct sink *k, unsigned v, int width)
{
	char b[16];
	int n = snprintf(b, sizeof b, "\\u%0*X", width, v);
	put(k, b, (size_t)n);
}

/* Decode one UTF-8 sequence at s (jansson-valid input); returns its length
 * and the code point, or 1 and the byte when it is not valid. */
static size_t utf8_next(const unsigned char *s, size_t left, uint32_t *cp)
{
	size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3
		 : (s[0] & 0xF8) == 0xF0 ? 4 : 1;
	uint32_t c = n == 1 ? s[0] : n == 2 ? s[0] & 0x1Fu : n == 3 ? s[0] & 0x0Fu : s[0] & 0x07u;

	if (n > left)
		n = 1, c = s[0];
	for (size_t i = 1; i < n; i++)
		c = (c << 6) | (s[i] & 0x3Fu);
	*cp = c;
	return n;
}

/* A JSON string body as jansson escapes it: " and \, the short escapes,
 * other controls as \u00xx; with `ascii` every non-ASCII code point as
 * \uxxxx (surrogate pairs above the BMP). */
static void put_escaped(struct sink *k, const char *str, bool ascii)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str), i = 0;

	while (i < len) {
		size_t run = i;
		while (run < len && s[run] >= 0x20 && s[run] != '"' && s[run] != '\\' &&
		       !(ascii && s[run] >= 0x80))
			run++;
		if (run > i)
			put(k, (const char *)s + i, run - i);
		i = run;
		if (i >= len)
			break;
		uint32_t c;
		size_t n = utf8_next(s + i, len - i, &c);
		switch (c) {
		case '"': puts_(k, "\\\""); break;
		case '\\': puts_(k, "\\\\"); break;
		case '\b': puts_(k, "\\b"); break;
		case '\f': puts_(k, "\\f"); break;
		case '\n': puts_(k, "\\n"); break;
		case '\r': puts_(k, "\\r"); break;
		case '\t': puts_(k, "\\t"); break;
		default:
			if (c < 0x10000) {
				put_u(k, c, 4);
			} else {
				c -= 0x10000;
				put_u(k, 0xD800 | ((c & 0xffc00) >> 10), 4);
				put_u(k, 0xDC00 | (c & 0x003ff), 4);
			}
		}
		i += n;
	}
}

/* The "omitted" list as jansson dumped it (compact, ensure_ascii), then
 * escaped once more as the body of a string. */
static void put_omitted(struct sink *k, const struct nf_safetensors *st,
			const struct nf_artifact *a)
{
	uint32_t e = 0;
	bool first = true;

	puts_(k, "[");
	for (uint32_t i = 0; i < a->nbindings; i++) {
		if (e < st->nentries && st->entries[e].binding == i) {
			e++;
			continue;
		}
		/* the name escaped with ensure_ascii, then escaped again */
		const char *name = a->bindings[i].name;
		struct sink inner = {NULL, 0, 0};
		char small[512], *tmp = small;

		put_escaped(&inner, name, true);
		if (inner.n + 1 > sizeof small && (tmp = malloc(inner.n + 1)) == NULL)
			continue; /* OOM: the same on the counting pass is unlikely */
		inner.out = tmp;
		inner.cap = inner.n;
		inner.n = 0;
		put_escaped(&inner, name, true);
		tmp[inner.n] = '\0';
		puts_(k, first ? "\\\"" : ",\\\"");
		first = false;
		put_escaped(k, tmp, false);
		puts_(k, "\\\"");
		if (tmp != small)
			free(tmp);
	}
	puts_(k, "]");
}

static void header_json(struct sink *k, const struct nf_safetensors *st,
			const struct nf_artifact *a, enum nf_dtype wanted)
{
	puts_(k, "{\"__metadata__\":{\"format\":\"pt\",\"artifact_id\":\"");
	put_escaped(k, a->artifact_id_hex, false);
	puts_(k, "\",\"dtype\":\"");
	put_escaped(k, nf_dtype_name(wanted), false);
	puts_(k, "\",\"entry\":\"");
	put_escaped(k, a->entry_name, false);
	puts_(k, "\",\"omitted\":\"");
	put_omitted(k, st, a);
	puts_(k, "\"}");
	for (uint32_t i = 0; i < st->nentries; i++) {
		const struct nf_st_entry *e = &st->entries[i];
		const struct nf_binding *b = &a->bindings[e->binding];
		uint64_t at = e->begin - st->header_bytes;

		puts_(k, ",\"");
		put_escaped(k, b->name, false);
		puts_(k, "\":{\"dtype\":\"");
		puts_(k, st_dtype_name(e->dtype));
		puts_(k, "\",\"shape\":[");
		for (uint32_t d = 0; d < b->rank; d++) {
			if (d)
				puts_(k, ",");
			put_u64(k, b->shape[d]);
		}
		puts_(k, "],\"data_offsets\":[");
		put_u64(k, at);
		puts_(k, ",");
		put_u64(k, at + e->bytes);
		puts_(k, "]}");
	}
	puts_(k, "}");
}

int nf_safetensors_build(struct nf_safetensors *st, const struct nf_artifact *a,
			 enum nf_dtype wanted)
{
	uint64_t at = 0;
	struct sink count = {NULL, 0, 0};

	memset(st, 0, sizeof(*st));
	pthread_mutex_init(&st->lock, NULL);
	st->wanted = wanted;
	st->entries = calloc(a->nbindings ? a->nbindings : 1, sizeof(*st->entries));
	if (!st->entries)
		return -ENOMEM;
	for (uint32_t i = 0; i < a->nbindings; i++) {
		const struct nf_binding *b = &a->bindings[i];
		enum nf_dtype dt;
		uint64_t bytes;

		if (strcmp(b->name, "__metadata__") == 0 ||
		    nf_decoded_dtype(a, b->parts, b->nparts, wanted, &dt) != 0) {
			st->nomitted++;
			continue;
		}
		if (__builtin_mul_overflow(b->elements, (uint64_t)nf_dtype_size(dt), &bytes) ||
		    at + bytes < at || at + bytes > (uint64_t)INT64_MAX) {
			nf_safetensors_free(st);
			return -EOVERFLOW;
		}
		st->entries[st->nentries++] = (struct nf_st_entry){i, dt, at, bytes};
		at += bytes;
	}
	/* begin is relative until the header size is known */
	header_json(&count, st, a, wanted);
	st->header_bytes = (8 + count.n + 7) / 8 * 8;
	for (uint32_t i = 0; i < st->nentries; i++)
		st->entries[i].begin += st->header_bytes;
	if (__builtin_add_overflow(st->header_bytes, at, &st->size)) {
		nf_safetensors_free(st);
		return -EOVERFLOW;
	}
	return 0;
}

/* The header bytes, made on first use and kept.  NULL on OOM. */
static const uint8_t *header_bytes(const struct nf_safetensors *cst, const struct nf_artifact *a)
{
	struct nf_safetensors *st = (struct nf_safetensors *)cst;
	uint8_t *h = atomic_load_explicit(&st->header, memory_order_acquire);

	if (h)
		return h;
	pthread_mutex_lock(&st->lock);
	h = atomic_load_explicit(&st->header, memory_order_relaxed);
	if (h == NULL && (h = malloc(st->header_bytes)) != NULL) {
		uint64_t hlen = st->header_bytes - 8;
		struct sink w = {(char *)h + 8, 0, (size_t)hlen};

		for (int i = 0; i < 8; i++)
			h[i] = (uint8_t)(hlen >> (8 * i));
		header_json(&w, st, a, st->wanted);
		if (w.n > hlen || hlen - w.n >= 8) {
			/* not what was counted (OOM on the way): try again later */
			free(h);
			h = NULL;
		} else {
			memset(h + 8 + w.n, ' ', hlen - w.n);
			atomic_store_explicit(&st->header, h, memory_order_release);
		}
	}
	pthread_mutex_unlock(&st->lock);
	return h;
}

void nf_safetensors_free(struct nf_safetensors *st)
{
	free(atomic_load(&st->header));
	pthread_mutex_destroy(&st->lock);
	free(st->entries);
	memset(st, 0, sizeof(*st));
}

/* First entry whose bytes end after `off` (entries are sorted, no gaps). */
static uint32_t first_entry_after(const struct nf_safetensors *st, uint64_t off)
{
	uint32_t lo = 0, hi = st->nentries;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (st->entries[mid].begin + st->entries[mid].bytes <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

ssize_t nf_safetensors_read(const struct nf_safetensors *st, const struct nf_artifact *a,
			    const struct nf_fetcher *f, uint64_t off, size_t len, uint8_t *out)
{
	if (off >= st->size || len == 0)
		return 0;
	uint64_t end = st->size - off < len ? st->size : off + len;
	uint8_t *dst = out;
	struct nf_dplan plan;

	if (off < st->header_bytes) {
		uint64_t n = (end < st->header_bytes ? end : st->header_bytes) - off;
		const uint8_t *h = header_bytes(st, a);
		if (h == NULL)
			return -ENOMEM;
		memcpy(dst, h + off, (size_t)n);
		dst += n;
		off += n;
	}
	/* every tensor the range covers in one plan: one fetch for the request */
	nf_dplan_init(&plan, a, f);
	for (uint32_t i = first_entry_after(st, off); off < end && i < st->nentries; i++) {
		const struct nf_st_entry *e = &st->entries[i];
		const struct nf_binding *b = &a->bindings[e->binding];
		uint64_t want = (end < e->begin + e->bytes ? end : e->begin + e->bytes) - off;
		ssize_t got = nf_decoded_plan(&plan, b->parts, b->nparts, e->dtype, off - e->begin,
					      (size_t)want, dst);
		if (got < 0)
			return got;
		if ((uint64_t)got != want)
			return -EIO;
		dst += want;
		off += want;
	}
	int rc = nf_decoded_finish(&plan);
	return rc ? rc : dst - out;
}
