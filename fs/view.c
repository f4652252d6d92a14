/* fs/view.c — building generic views (view.h), and SEEK_DATA/SEEK_HOLE
 * over them.  FUSE-free. */
#include "fs/view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void nf_view_memory(struct nf_view *v, const char *mem, size_t len)
{
	memset(v, 0, sizeof *v);
	v->kind = NF_VIEW_MEMORY;
	v->mem = mem;
	v->size = len;
}

void nf_view_file(struct nf_view *v, uint32_t file, uint64_t file_offset, uint64_t len)
{
	memset(v, 0, sizeof *v);
	v->kind = NF_VIEW_FILE;
	v->file = file;
	v->file_offset = file_offset;
	v->size = len;
}

void nf_view_family(struct nf_view *v, unsigned kind, uint64_t size)
{
	memset(v, 0, sizeof *v);
	v->kind = kind;
	v->size = size;
}

void nf_pieces_free(struct nf_pieces *p)
{
	free(p->v);
	memset(p, 0, sizeof *p);
}

int nf_pieces_add(struct nf_pieces *p, struct nf_view *v, uint64_t logical, uint64_t length)
{
	struct nf_piece *last = v->count ? &p->v[p->n - 1] : NULL;
	uint64_t end;

	if (length == 0)
		return 0;
	if (__builtin_add_overflow(v->size, length, &end))
		return -EOVERFLOW;
	/* merge with the previous piece when they join */
	if (last && ((logical == NF_PIECE_ZERO && last->logical == NF_PIECE_ZERO) ||
		     (logical != NF_PIECE_ZERO && last->logical != NF_PIECE_ZERO &&
		      last->logical + last->length == logical))) {
		last->length += length;
		v->size = end;
		return 0;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct nf_piece *nv = realloc(p->v, cap * sizeof *nv);
		if (nv == NULL)
			return -ENOMEM;
		p->v = nv;
		p->cap = cap;
	}
	if (p->n >= UINT32_MAX)
		return -EOVERFLOW;
	p->v[p->n++] = (struct nf_piece){.out = v->size, .logical = logical, .length = length};
	v->count++;
	v->size = end;
	return 0;
}

void nf_pieces_begin(struct nf_pieces *p, struct nf_view *v)
{
	memset(v, 0, sizeof *v);
	v->kind = NF_VIEW_PIECES;
	v->first = (uint32_t)p->n;
}

int nf_pieces_fail(struct nf_pieces *p, struct nf_view *v, int rc)
{
	p->n = v->first;
	memset(v, 0, sizeof *v);
	return rc;
}

int nf_view_span(struct nf_pieces *p, uint64_t logical, uint64_t length, struct nf_view *v)
{
	int rc;

	nf_pieces_begin(p, v);
	rc = nf_pieces_add(p, v, logical, length);
	return rc < 0 ? nf_pieces_fail(p, v, rc) : 0;
}

void nf_view_extent(const struct nf_view *v, uint64_t *offset, uint64_t *bytes)
{
	bool seen = false;

	*offset = 0;
	*bytes = 0;
	if (v->kind != NF_VIEW_PIECES)
		return;
	for (uint32_t i = 0; i < v->count; i++) {
		const struct nf_piece *pc = &v->pieces[v->first + i];
		if (pc->logical == NF_PIECE_ZERO)
			continue;
		if (!seen)
			*offset = pc->logical;
		seen = true;
		*bytes += pc->length;
	}
}

/* The last piece whose start is <= off (count > 0). */
static uint32_t piece_at(const struct nf_piece *pc, uint32_t count, uint64_t off)
{
	uint32_t lo = 0, hi = count;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (pc[mid].out <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

uint32_t *nf_pieces_next_zero(const struct nf_piece *pieces, size_t n)
{
	uint32_t *out;
	uint32_t next = (uint32_t)n;

	if (n >= UINT32_MAX || !(out = malloc((n ? n : 1) * sizeof *out)))
		return NULL;
	for (size_t k = n; k-- > 0;) {
		if (pieces[k].logical == NF_PIECE_ZERO)
			next = (uint32_t)k;
		out[k] = next;
	}
	return out;
}

int64_t nf_view_seek(const struct nf_view *v, uint64_t off, bool data)
{
	uint64_t size = nf_view_st_size(v->kind, v->size);

	if (off >= size || size > INT64_MAX)
		return -ENXIO;
	if (v->kind != NF_VIEW_PIECES || v->count == 0)
		return data ? (int64_t)off : (int64_t)size;
	/* the pieces tile [0, size); two zero pieces never follow each other
	 * (they merge), so SEEK_DATA looks at one piece past the one at off;
	 * SEEK_HOLE jumps to the next zero one by the index (a device image
	 * of a calbin package is thousands of data pieces end to end) */
	const struct nf_piece *pc = v->pieces + v->first;
	uint32_t at = piece_at(pc, v->count, off);
	if (!data && v->next_zero && pc[at].logical != NF_PIECE_ZERO) {
		uint32_t z = v->next_zero[v->first + at];
		return z - v->first < v->count ? (int64_t)v->pieces[z].out : (int64_t)size;
	}
	for (uint32_t i = at; i < v->count; i++) {
		bool zero = pc[i].logical == NF_PIECE_ZERO;
		if (zero != data)
			return (int64_t)(pc[i].out > off ? pc[i].out : off);
	}
	return data ? -ENXIO : (int64_t)size;
}
