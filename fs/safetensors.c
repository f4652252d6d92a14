/* fs/safetensors.c — the virtual safetensors file (see safetensors.h). */
#include "fs/safetensors.h"

#include <errno.h>
#include <jansson.h>
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

static json_t *shape_json(const struct nf_binding *b)
{
	json_t *s = json_array();
	for (uint32_t i = 0; s && i < b->rank; i++)
		if (json_array_append_new(s, json_integer((json_int_t)b->shape[i]))) {
			json_decref(s);
			return NULL;
		}
	return s;
}

/* Add the binding's header member and entry; `at` is the data offset. */
static int add_tensor(json_t *root, const struct nf_binding *b, enum nf_dtype dt, uint64_t at,
		      uint64_t bytes)
{
	json_t *t = json_object(), *offs = json_array();
	int rc = -ENOMEM;

	if (!t || !offs)
		goto out;
	if (json_array_append_new(offs, json_integer((json_int_t)at)) ||
	    json_array_append_new(offs, json_integer((json_int_t)(at + bytes))))
		goto out;
	if (json_object_set_new(t, "dtype", json_string(st_dtype_name(dt))) ||
	    json_object_set_new(t, "shape", shape_json(b)) ||
	    json_object_set(t, "data_offsets", offs) || json_object_set(root, b->name, t))
		goto out;
	rc = 0;
out:
	json_decref(t);
	json_decref(offs);
	return rc;
}

static int add_metadata(json_t *root, const struct nf_artifact *a, enum nf_dtype wanted,
			json_t *omitted)
{
	json_t *m = json_object();
	char *om = json_dumps(omitted, JSON_COMPACT | JSON_ENSURE_ASCII);
	int rc = -ENOMEM;

	if (m && om && !json_object_set_new(m, "format", json_string("pt")) &&
	    !json_object_set_new(m, "artifact_id", json_string(a->artifact_id_hex)) &&
	    !json_object_set_new(m, "dtype", json_string(nf_dtype_name(wanted))) &&
	    !json_object_set_new(m, "entry", json_string(a->entry_name)) &&
	    !json_object_set_new(m, "omitted", json_string(om)) &&
	    !json_object_set(root, "__metadata__", m))
		rc = 0;
	free(om);
	json_decref(m);
	return rc;
}

/* Serialise the header: u64 length, JSON, spaces up to a multiple of 8. */
static int finish_header(struct nf_safetensors *st, json_t *root)
{
	char *text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!text)
		return -ENOMEM;
	size_t n = strlen(text), padded = (8 + n + 7) / 8 * 8;
	uint8_t *h = malloc(padded);
	if (!h) {
		free(text);
		return -ENOMEM;
	}
	uint64_t hlen = padded - 8;
	for (int i = 0; i < 8; i++)
		h[i] = (uint8_t)(hlen >> (8 * i));
	memcpy(h + 8, text, n);
	memset(h + 8 + n, ' ', padded - 8 - n);
	free(text);
	st->header = h;
	st->header_bytes = padded;
	return 0;
}

int nf_safetensors_build(struct nf_safetensors *st, const struct nf_artifact *a,
			 enum nf_dtype wanted)
{
	json_t *root = json_object(), *omitted = json_array();
	uint64_t at = 0;
	int rc = -ENOMEM;

	memset(st, 0, sizeof(*st));
	st->entries = calloc(a->nbindings ? a->nbindings : 1, sizeof(*st->entries));
	if (!root || !omitted || !st->entries)
		goto fail;
	/* __metadata__ goes first; its "omitted" string is filled in below. */
	if (json_object_set_new(root, "__metadata__", json_object()))
		goto fail;
	for (uint32_t i = 0; i < a->nbindings; i++) {
		const struct nf_binding *b = &a->bindings[i];
		enum nf_dtype dt;
		uint64_t bytes;

		if (strcmp(b->name, "__metadata__") == 0 ||
		    nf_decoded_dtype(a, b->parts, b->nparts, wanted, &dt) != 0) {
			if (json_array_append_new(omitted, json_string(b->name)))
				goto fail;
			st->nomitted++;
			continue;
		}
		if (__builtin_mul_overflow(b->elements, (uint64_t)nf_dtype_size(dt), &bytes) ||
		    at + bytes < at || at + bytes > (uint64_t)INT64_MAX) {
			rc = -EOVERFLOW;
			goto fail;
		}
		if ((rc = add_tensor(root, b, dt, at, bytes)) != 0)
			goto fail;
		st->entries[st->nentries++] = (struct nf_st_entry){i, dt, at, bytes};
		at += bytes;
		rc = -ENOMEM;
	}
	if ((rc = add_metadata(root, a, wanted, omitted)) != 0 || (rc = finish_header(st, root)) != 0)
		goto fail;
	for (uint32_t i = 0; i < st->nentries; i++)
		st->entries[i].begin += st->header_bytes;
	if (__builtin_add_overflow(st->header_bytes, at, &st->size)) {
		rc = -EOVERFLOW;
		goto fail;
	}
	json_decref(root);
	json_decref(omitted);
	return 0;
fail:
	json_decref(root);
	json_decref(omitted);
	nf_safetensors_free(st);
	return rc;
}

void nf_safetensors_free(struct nf_safetensors *st)
{
	free(st->header);
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

	if (off < st->header_bytes) {
		uint64_t n = (end < st->header_bytes ? end : st->header_bytes) - off;
		memcpy(dst, st->header + off, (size_t)n);
		dst += n;
		off += n;
	}
	for (uint32_t i = first_entry_after(st, off); off < end && i < st->nentries; i++) {
		const struct nf_st_entry *e = &st->entries[i];
		const struct nf_binding *b = &a->bindings[e->binding];
		uint64_t want = (end < e->begin + e->bytes ? end : e->begin + e->bytes) - off;
		ssize_t got = nf_decoded_read(a, b->parts, b->nparts, e->dtype, f, off - e->begin,
					      (size_t)want, dst);
		if (got < 0)
			return got;
		if ((uint64_t)got != want)
			return -EIO;
		dst += want;
		off += want;
	}
	return dst - out;
}
