/* fs/ninfer/decoded.c — decoding element ranges of a list of parts (decoded.h).
 *
 * A read of bytes [off, off+len) becomes the element range it overlaps; the
 * whole elements inside the byte range are decoded straight into the
 * caller's buffer, and an element cut by either end of the range is decoded
 * into a small temporary and only its overlapping bytes are copied.  Each
 * part contributes the slice of its object's element range that overlaps;
 * the codec says which object bytes that slice needs (nf_decode_spans), the
 * fetcher reads exactly those, and the codec decodes them. */
#include "fs/ninfer/decoded.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Elements decoded per fetch: bounds the scratch memory of one step while
 * keeping fetches large enough to amortise a ring submission. */
#define DECODE_CHUNK_ELEMENTS (64u * 1024u)

uint64_t nf_parts_elements(const struct nf_part *parts, uint32_t nparts)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < nparts; i++)
		n += parts[i].end - parts[i].begin; /* the reader checked the sum */
	return n;
}

int nf_decoded_dtype(const struct nf_artifact *a, const struct nf_part *parts, uint32_t nparts,
		     enum nf_dtype wanted, enum nf_dtype *out)
{
	bool any_int = false, any_float = false;

	if (nparts == 0)
		return -EINVAL;
	for (uint32_t i = 0; i < nparts; i++) {
		const struct nf_object *o = &a->objects[parts[i].object];

		if (o->kind != NF_OBJ_TENSOR)
			return -EINVAL;
		if (o->codec_status == NF_CODEC_UNKNOWN_FORMAT ||
		    o->codec_status == NF_CODEC_UNKNOWN_LAYOUT)
			return -EOPNOTSUPP;
		if (o->codec_status != NF_CODEC_OK || !o->size_ok)
			return -EIO;
		if (o->geom.format == NF_FORMAT_INT32)
			any_int = true;
		else
			any_float = true;
	}
	if (any_int && any_float)
		return -EINVAL;
	*out = any_int ? NF_DTYPE_I32 : wanted;
	return 0;
}

struct scratch {
	uint8_t *buf;
	size_t cap;
};

static int scratch_reserve(struct scratch *s, size_t need)
{
	if (need <= s->cap)
		return 0;
	uint8_t *p = realloc(s->buf, need);
	if (!p)
		return -ENOMEM;
	s->buf = p;
	s->cap = need;
	return 0;
}

/* Decode elements [b, e) of one object into dst, in chunks. */
static int decode_object_range(const struct nf_object *o, uint32_t index, enum nf_dtype dtype,
			       const struct nf_fetcher *f, uint64_t b, uint64_t e, uint8_t *dst,
			       struct scratch *s)
{
	const size_t esz = nf_dtype_size(dtype);

	while (b < e) {
		uint64_t ce = e - b > DECODE_CHUNK_ELEMENTS ? b + DECODE_CHUNK_ELEMENTS : e;
		struct nf_span spans[NF_MAX_SPANS];
		unsigned n = nf_decode_spans(&o->geom, b, ce, spans);
		uint64_t total = 0;

		for (unsigned i = 0; i < n; i++)
			if (__builtin_add_overflow(total, spans[i].length, &total))
				return -EOVERFLOW;
		if (total > SIZE_MAX)
			return -EOVERFLOW;
		int rc = scratch_reserve(s, total ? (size_t)total : 1);
		if (rc)
			return rc;

		uint8_t *bufs[NF_MAX_SPANS] = {0};
		size_t at = 0;
		for (unsigned i = 0; i < n; i++) {
			bufs[i] = s->buf + at;
			at += (size_t)spans[i].length;
		}
		rc = f->fetch(f->arg, index, spans, n, bufs);
		if (rc)
			return rc;
		rc = nf_decode(&o->geom, b, ce, (const uint8_t *const *)bufs, dtype, dst);
		if (rc)
			return rc;
		dst += (size_t)(ce - b) * esz;
		b = ce;
	}
	return 0;
}

/* Decode view elements [e0, e1) (view coordinates) into dst. */
static int decode_elements(const struct nf_artifact *a, const struct nf_part *parts,
			   uint32_t nparts, enum nf_dtype dtype, const struct nf_fetcher *f,
			   uint64_t e0, uint64_t e1, uint8_t *dst, struct scratch *s)
{
	const size_t esz = nf_dtype_size(dtype);
	uint64_t start = 0; /* view element where part i begins */

	for (uint32_t i = 0; i < nparts && e0 < e1; i++) {
		uint64_t plen = parts[i].end - parts[i].begin;
		uint64_t pend = start + plen;

		if (e0 < pend) {
			uint64_t take_end = e1 < pend ? e1 : pend;
			uint64_t b = parts[i].begin + (e0 - start);
			uint64_t e = parts[i].begin + (take_end - start);
			uint32_t obj = parts[i].object;
			int rc = decode_object_range(&a->objects[obj], obj, dtype, f, b, e, dst, s);

			if (rc)
				return rc;
			dst += (size_t)(take_end - e0) * esz;
			e0 = take_end;
		}
		start = pend;
	}
	return 0;
}

/* One element cut by the byte range: decode it aside, copy its overlap. */
static int decode_partial(const struct nf_artifact *a, const struct nf_part *parts,
			  uint32_t nparts, enum nf_dtype dtype, const struct nf_fetcher *f,
			  uint64_t element, size_t from, size_t to, uint8_t *dst, struct scratch *s)
{
	uint8_t tmp[8];
	int rc = decode_elements(a, parts, nparts, dtype, f, element, element + 1, tmp, s);

	if (rc)
		return rc;
	memcpy(dst, tmp + from, to - from);
	return 0;
}

ssize_t nf_decoded_read(const struct nf_artifact *a, const struct nf_part *parts,
			uint32_t nparts, enum nf_dtype dtype, const struct nf_fetcher *f,
			uint64_t off, size_t len, uint8_t *out)
{
	const uint64_t esz = nf_dtype_size(dtype);
	uint64_t size, end;

	if (__builtin_mul_overflow(nf_parts_elements(parts, nparts), esz, &size))
		return -EOVERFLOW;
	if (off >= size || len == 0)
		return 0;
	end = size - off < len ? size : off + len;
	if (end - off > SSIZE_MAX)
		return -EOVERFLOW;

	struct scratch s = {0};
	uint64_t first = off / esz, last = (end + esz - 1) / esz; /* elements touched */
	uint64_t whole0 = (off + esz - 1) / esz, whole1 = end / esz; /* wholly inside */
	uint8_t *dst = out;
	int rc = 0;

	if (first == last - 1 && (off % esz || end % esz)) {
		/* the range lies inside one element */
		rc = decode_partial(a, parts, nparts, dtype, f, first, off % esz,
				    (size_t)(end - first * esz), dst, &s);
		goto done;
	}
	if (off % esz) {
		rc = decode_partial(a, parts, nparts, dtype, f, first, off % esz, esz, dst, &s);
		if (rc)
			goto done;
		dst += esz - off % esz;
	}
	if (whole0 < whole1) {
		rc = decode_elements(a, parts, nparts, dtype, f, whole0, whole1, dst, &s);
		if (rc)
			goto done;
		dst += (size_t)((whole1 - whole0) * esz);
	}
	if (end % esz)
		rc = decode_partial(a, parts, nparts, dtype, f, whole1, 0, end % esz, dst, &s);
done:
	free(s.buf);
	return rc ? rc : (ssize_t)(end - off);
}
