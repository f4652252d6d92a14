/* fs/ninfer/decoded.c — decoding element ranges of a list of parts (decoded.h).
 *
 * A read of bytes [off, off+len) is planned part by part: the whole
 * elements a part contributes are one decode step straight into the
 * caller's buffer, and an element cut by either end of the range is a
 * step of its own, decoded into the step's 8-byte temporary and only its
 * overlapping bytes copied.  A step's source bytes are the spans the codec
 * names (nf_decode_spans), queued on the fetcher into scratch memory; a
 * part whose decode is the identity (fp32 as f32, bf16 as bf16, int32) is
 * no step: its bytes are queued straight into the caller's buffer, the one
 * the reply is sent from.  Then one run of the fetcher reads every span of
 * the request (issue 15: it used to be one fetch per 64k elements, four
 * serial engine submissions per 1 MiB request) and the steps are decoded
 * in order.  Steps live in the fetcher's scratch: nothing is allocated on
 * a read. */
#include "fs/ninfer/decoded.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

/* One decode of a plan: elements [b, e) of one object into dst (or, for
 * an element cut by the range, into tmp, then bytes [cut0, cut1) of it to
 * dst), from the source spans fetched into bufs. */
struct nf_dstep {
	struct nf_dstep *next;
	const struct nf_geometry *g;
	uint64_t b, e;
	enum nf_dtype dtype;
	uint8_t *dst;
	const uint8_t *bufs[NF_MAX_SPANS];
	bool cut;
	uint8_t cut0, cut1;
	uint8_t tmp[8];
};

void nf_dplan_init(struct nf_dplan *p, const struct nf_artifact *a, const struct nf_fetcher *f)
{
	p->a = a;
	p->f = f;
	p->head = p->tail = NULL;
}

/* Whether decoding an object as dtype is a copy of its words (codecs §1:
 * fp32 as f32, bf16 as bf16 keep their bits; int32 stays int32): then the
 * view's bytes are the object's bytes, fetched straight into the output. */
static bool identity(const struct nf_geometry *g, enum nf_dtype dtype)
{
	if (g->layout != NF_LAYOUT_CONTIGUOUS_LE_V1)
		return false;
	return (g->format == NF_FORMAT_FP32 && dtype == NF_DTYPE_F32) ||
	       (g->format == NF_FORMAT_BF16 && dtype == NF_DTYPE_BF16) ||
	       (g->format == NF_FORMAT_INT32 && dtype == NF_DTYPE_I32);
}

/* A step decoding elements [b, e) of object `obj` into dst: its source
 * spans go to scratch and are queued. */
static int plan_step(struct nf_dplan *p, uint32_t obj, enum nf_dtype dtype, uint64_t b,
		     uint64_t e, uint8_t *dst, struct nf_dstep **out)
{
	const struct nf_geometry *g = &p->a->objects[obj].geom;
	struct nf_span spans[NF_MAX_SPANS];
	unsigned n = nf_decode_spans(g, b, e, spans);
	uint64_t total = 0;
	struct nf_dstep *st;
	uint8_t *src;

	if (n == 0)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (spans[i].length > UINT64_MAX - 63 ||
		    __builtin_add_overflow(total, (spans[i].length + 63) & ~(uint64_t)63, &total))
			return -EOVERFLOW;
	if (total > SIZE_MAX - sizeof *st)
		return -EOVERFLOW;
	st = p->f->scratch(p->f->arg, sizeof *st + (size_t)total);
	if (st == NULL)
		return -ENOMEM;
	memset(st, 0, sizeof *st);
	src = (uint8_t *)(st + 1);
	for (unsigned i = 0; i < n; i++) {
		int rc = p->f->queue(p->f->arg, obj, spans[i].offset, spans[i].length, src);
		if (rc)
			return rc;
		st->bufs[i] = src;
		src += (spans[i].length + 63) & ~(uint64_t)63;
	}
	st->g = g;
	st->b = b;
	st->e = e;
	st->dtype = dtype;
	st->dst = dst;
	if (p->tail)
		p->tail->next = st;
	else
		p->head = st;
	p->tail = st;
	*out = st;
	return 0;
}

/* Plan view bytes [lo, hi) that lie in one part (object `obj`, whose
 * element `first` is the part's byte 0) into dst. */
static int plan_part(struct nf_dplan *p, uint32_t obj, uint64_t first, enum nf_dtype dtype,
		     uint64_t lo, uint64_t hi, uint8_t *dst)
{
	const struct nf_geometry *g = &p->a->objects[obj].geom;
	const uint64_t esz = nf_dtype_size(dtype);
	struct nf_dstep *st;
	uint64_t e0 = lo / esz, e1 = hi / esz;   /* elements wholly inside: [ceil(lo), e1) */
	int rc;

	if (identity(g, dtype))   /* the part's bytes, fetched where they are sent from */
		return p->f->queue(p->f->arg, obj, first * esz + lo, hi - lo, dst);
	if (lo % esz) {
		/* an element cut by the start: decoded aside, its overlap copied */
		if ((rc = plan_step(p, obj, dtype, first + e0, first + e0 + 1, NULL, &st)) < 0)
			return rc;
		st->cut = true;
		st->cut0 = (uint8_t)(lo % esz);
		st->cut1 = (uint8_t)(hi < (e0 + 1) * esz ? hi - e0 * esz : esz);
		st->dst = dst;
		dst += st->cut1 - st->cut0;
		e0++;
		if (hi <= e0 * esz)
			return 0;
	}
	if (e0 < e1) {
		if ((rc = plan_step(p, obj, dtype, first + e0, first + e1, dst, &st)) < 0)
			return rc;
		dst += (size_t)((e1 - e0) * esz);
	}
	if (hi % esz && hi > e1 * esz && e1 >= e0) {
		/* an element cut by the end */
		if ((rc = plan_step(p, obj, dtype, first + e1, first + e1 + 1, NULL, &st)) < 0)
			return rc;
		st->cut = true;
		st->cut0 = 0;
		st->cut1 = (uint8_t)(hi - e1 * esz);
		st->dst = dst;
	}
	return 0;
}

ssize_t nf_decoded_plan(struct nf_dplan *p, const struct nf_part *parts, uint32_t nparts,
			enum nf_dtype dtype, uint64_t off, size_t len, uint8_t *out)
{
	const uint64_t esz = nf_dtype_size(dtype);
	uint64_t size, end, start = 0;   /* view byte where part i begins */

	if (esz == 0 || __builtin_mul_overflow(nf_parts_elements(parts, nparts), esz, &size))
		return -EOVERFLOW;
	if (off >= size || len == 0)
		return 0;
	end = size - off < len ? size : off + len;
	if (end - off > SSIZE_MAX)
		return -EOVERFLOW;
	for (uint32_t i = 0; i < nparts && start < end; i++) {
		uint64_t pend = start + (parts[i].end - parts[i].begin) * esz;   /* <= size */

		if (off < pend) {
			uint64_t lo = off > start ? off : start, hi = end < pend ? end : pend;
			int rc = plan_part(p, parts[i].object, parts[i].begin, dtype, lo - start,
					   hi - start, out + (lo - off));
			if (rc)
				return rc;
		}
		start = pend;
	}
	return (ssize_t)(end - off);
}

int nf_decoded_finish(struct nf_dplan *p)
{
	int rc = p->f->run(p->f->arg);

	for (const struct nf_dstep *st = p->head; rc == 0 && st; st = st->next) {
		uint8_t *to = st->cut ? (uint8_t *)st->tmp : st->dst;
		rc = nf_decode(st->g, st->b, st->e, st->bufs, st->dtype, to);
		if (rc == 0 && st->cut)
			memcpy(st->dst, st->tmp + st->cut0, (size_t)(st->cut1 - st->cut0));
	}
	p->head = p->tail = NULL;
	return rc;
}

ssize_t nf_decoded_read(const struct nf_artifact *a, const struct nf_part *parts,
			uint32_t nparts, enum nf_dtype dtype, const struct nf_fetcher *f,
			uint64_t off, size_t len, uint8_t *out)
{
	struct nf_dplan p;
	ssize_t n;
	int rc;

	nf_dplan_init(&p, a, f);
	n = nf_decoded_plan(&p, parts, nparts, dtype, off, len, out);
	if (n < 0)
		return n;
	rc = nf_decoded_finish(&p);
	return rc ? rc : n;
}
