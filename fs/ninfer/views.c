/* fs/ninfer/views.c — the NInfer family's views (views.h): which logical
 * payload bytes make a binding's raw leaf, and decoded views. */
#include "fs/ninfer/views.h"

#include "fs/ninfer/decoded.h"
#include "fs/ninfer/npy.h"
#include "fs/ninfer/tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool object_usable(const struct nf_object *o)
{
	return o->kind == NF_OBJ_TENSOR && o->codec_status == NF_CODEC_OK && o->size_ok;
}

/* Parts over contiguous_le_v1 parents of one format: element ranges times
 * the word size, concatenated. */
static int binding_contiguous(struct nf_pieces *p, const struct nf_artifact *a,
			      const struct nf_binding *b, struct nf_view *v)
{
	const struct nf_object *first = &a->objects[b->parts[0].object];

	for (uint32_t i = 0; i < b->nparts; i++) {
		const struct nf_part *pt = &b->parts[i];
		const struct nf_object *o = &a->objects[pt->object];
		uint64_t w = o->geom.word_bytes, off, len, lo;

		if (!object_usable(o) || o->geom.layout != NF_LAYOUT_CONTIGUOUS_LE_V1 ||
		    o->geom.format != first->geom.format || w == 0)
			return 1;
		if (pt->begin > pt->end || pt->end > o->elements ||
		    __builtin_mul_overflow(pt->begin, w, &off) ||
		    __builtin_mul_overflow(pt->end - pt->begin, w, &len) ||
		    __builtin_add_overflow(o->offset, off, &lo) || len > o->bytes || off > o->bytes - len)
			return -EOVERFLOW;
		int rc = nf_pieces_add(p, v, lo, len);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static bool rows_compatible(const struct nf_object *o, const struct nf_object *first)
{
	return object_usable(o) &&
	       (o->geom.layout == NF_LAYOUT_ROW_SPLIT_K128_V1 ||
		o->geom.layout == NF_LAYOUT_ROW_SCALE_V1 ||
		o->geom.layout == NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1) &&
	       o->geom.layout == first->geom.layout && o->geom.format == first->geom.format &&
	       o->geom.cols == first->geom.cols && o->geom.cols > 0;
}

/* nvfp4 (codecs §3.1, §3.6): the standalone object has D = 1, one divisor
 * for all its rows, so every part must be on 128-row tiles (nf_row_spans
 * says so) inside one divisor share of one parent: the same divisor word.
 * Parts of two shares, or of two objects, could hold two divisors. */
static bool one_divisor(const struct nf_artifact *a, const struct nf_binding *b)
{
	uint64_t word = 0;

	for (uint32_t i = 0; i < b->nparts; i++) {
		const struct nf_part *pt = &b->parts[i];
		const struct nf_object *o = &a->objects[pt->object];
		uint64_t K = o->geom.cols;
		struct nf_span spans[NF_MAX_PLANES];

		if (pt->object != b->parts[0].object ||
		    nf_row_spans(&o->geom, pt->begin / K, (pt->end - pt->begin) / K, spans) != 3)
			return false;
		if (i > 0 && spans[2].offset != word)
			return false;
		word = spans[2].offset;
	}
	return true;
}

/* One plane of the standalone payload: the row spans of every part (for
 * the divisors of nvfp4, the one word they share: one_divisor()). */
static int rows_plane(struct nf_pieces *p, const struct nf_artifact *a, const struct nf_binding *b,
		      unsigned plane, struct nf_view *v)
{
	const struct nf_object *first = &a->objects[b->parts[0].object];
	uint32_t nparts = first->geom.layout == NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1 && plane == 2
				  ? 1 : b->nparts;

	for (uint32_t i = 0; i < nparts; i++) {
		const struct nf_part *pt = &b->parts[i];
		const struct nf_object *o = &a->objects[pt->object];
		uint64_t K = o->geom.cols, lo;
		struct nf_span spans[NF_MAX_PLANES];
		unsigned n;

		n = nf_row_spans(&o->geom, pt->begin / K, (pt->end - pt->begin) / K, spans);
		if (n != o->geom.nplanes || plane >= n)
			return 1;
		if (__builtin_add_overflow(o->offset, spans[plane].offset, &lo))
			return -EOVERFLOW;
		int rc = nf_pieces_add(p, v, lo, spans[plane].length);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Whole rows of row_split/row_scale parents of one format and K, or of
 * one nvfp4 parent on 128-row tiles inside one divisor share: a
 * standalone payload of the parent's format/layout (codecs §2.7, §3.6):
 * each plane of nf_rows_geometry(rows) is the concatenation of the parts'
 * row spans of that plane (nvfp4 divisors: the share's one word), zero
 * bytes fill the gaps. */
static int binding_rows(struct nf_pieces *p, const struct nf_artifact *a,
			const struct nf_binding *b, struct nf_view *v)
{
	const struct nf_object *first = &a->objects[b->parts[0].object];
	struct nf_geometry sub;
	uint64_t rows = 0;

	for (uint32_t i = 0; i < b->nparts; i++) {
		const struct nf_part *pt = &b->parts[i];
		const struct nf_object *o = &a->objects[pt->object];

		if (!rows_compatible(o, first))
			return 1;
		if (pt->begin % o->geom.cols || pt->end % o->geom.cols || pt->end <= pt->begin ||
		    pt->end > o->elements)
			return 1;
		if (__builtin_add_overflow(rows, (pt->end - pt->begin) / o->geom.cols, &rows))
			return -EOVERFLOW;
	}
	if (first->geom.layout == NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1 && !one_divisor(a, b))
		return 1;
	if (nf_rows_geometry(&first->geom, rows, &sub) != NF_CODEC_OK)
		return 1;
	for (unsigned pl = 0; pl < sub.nplanes; pl++) {
		uint64_t start = v->size;
		int rc;

		if (sub.planes[pl].offset < v->size)
			return 1;
		rc = nf_pieces_add(p, v, NF_PIECE_ZERO, sub.planes[pl].offset - v->size);
		if (rc < 0)
			return rc;
		start = v->size;
		rc = rows_plane(p, a, b, pl, v);
		if (rc != 0)
			return rc;
		if (v->size - start != sub.planes[pl].length)
			return 1; /* the registry and we disagree: no leaf */
	}
	if (v->size > sub.bytes)
		return 1;
	return nf_pieces_add(p, v, NF_PIECE_ZERO, sub.bytes - v->size);
}

int nf_view_binding(struct nf_pieces *p, const struct nf_artifact *a, const struct nf_binding *b,
		    struct nf_view *v)
{
	int rc;

	nf_pieces_begin(p, v);
	if (b->nparts == 0)
		return nf_pieces_fail(p, v, 1);
	if (b->whole) {
		const struct nf_object *o = &a->objects[b->parts[0].object];
		rc = nf_pieces_add(p, v, o->offset, o->bytes);
		return rc < 0 ? nf_pieces_fail(p, v, rc) : 0;
	}
	rc = binding_contiguous(p, a, b, v);
	if (rc == 0)
		return 0;
	p->n = v->first;
	nf_pieces_begin(p, v);
	if (rc == 1 && b->whole_rows)
		rc = binding_rows(p, a, b, v);
	return rc == 0 ? 0 : nf_pieces_fail(p, v, rc);
}

int nf_view_decoded(const struct nf_artifact *a, const struct nf_part *parts, uint32_t nparts,
		    enum nf_dtype wanted, struct nf_view *v)
{
	enum nf_dtype dt = wanted;
	uint64_t size;
	int rc;

	memset(v, 0, sizeof *v);
	if (nparts == 0)
		return 1;
	rc = nf_decoded_dtype(a, parts, nparts, wanted, &dt);
	if (rc == -EINVAL)
		return 1;
	if (rc < 0) {
		/* unknown or broken parents: the file is there, reads fail */
		const struct nf_object *o = &a->objects[parts[0].object];
		dt = (o->format && strcmp(o->format, "int32") == 0) ? NF_DTYPE_I32 : wanted;
	}
	if (__builtin_mul_overflow(nf_parts_elements(parts, nparts), (uint64_t)nf_dtype_size(dt),
				   &size))
		return 1;
	nf_view_family(v, NF_VIEW_DECODED, size);
	v->tag[0] = (uint8_t)dt;
	v->tag[1] = (uint8_t)(rc < 0 ? -rc : 0);
	return 0;
}

int nf_view_npy(const struct nf_artifact *a, const struct nf_part *parts, uint32_t nparts,
		enum nf_dtype wanted, uint32_t rank, const uint64_t *shape, struct nf_view *v)
{
	uint64_t n = 1, hlen, size;
	int rc = nf_view_decoded(a, parts, nparts, wanted, v);

	if (rc != 0)
		return rc;
	for (uint32_t i = 0; i < rank; i++)
		if (__builtin_mul_overflow(n, shape[i], &n))
			return 1;
	if (n != nf_parts_elements(parts, nparts))
		return 1;
	hlen = nf_npy_header((enum nf_dtype)v->tag[0], rank, shape, NULL, 0);
	if (hlen == 0 || __builtin_add_overflow(v->size, hlen, &size))
		return 1;
	v->kind = NF_VIEW_NPY;
	v->size = size;
	v->at = hlen;
	return 0;
}

void nf_dview_of(const struct nf_artifact *a, const struct nf_node *n, const struct nf_view *v,
		 struct nf_dview *dv)
{
	if (n->role == NF_ROLE_DECODED_OBJECT) {
		dv->one = (struct nf_part){.object = n->ref, .begin = 0,
					   .end = a->objects[n->ref].elements};
		dv->parts = &dv->one;
		dv->nparts = 1;
	} else {
		dv->parts = a->bindings[n->ref].parts;
		dv->nparts = a->bindings[n->ref].nparts;
	}
	dv->dtype = (enum nf_dtype)v->tag[0];
	dv->error = -(int)v->tag[1];
}
