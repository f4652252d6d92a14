/* fs/ninfer/read.c — reads of the NInfer family's views: DECODED, NPY and
 * SAFETENSORS (fs/family.h's read), and which backing files they show.
 *
 * The decoders (decoded.h, safetensors.h) take a fetcher that queues
 * object-relative spans; this one turns them into logical spans of the
 * set, queues them on the request (nf_rd_queue: the extent map cuts them
 * into segments) and reads all of a FUSE request's in one engine read
 * (nf_rd_run); their scratch is the thread's work area (nf_rd_scratch). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fs/ninfer/decoded.h"
#include "fs/ninfer/ninfer.h"
#include "fs/ninfer/npy.h"
#include "fs/ninfer/safetensors.h"
#include "fs/ninfer/tree.h"

struct fetch_arg {
	const struct nf_artifact *a;
	struct nf_rd *rd;
};

/* The struct nf_fetcher of decoded.h: a span of object `object` -> a
 * logical span queued on the request; run: every span of the request in
 * one engine read (issue 15); scratch: the thread's work area. */
static int fetch_queue(void *arg, uint32_t object, uint64_t offset, uint64_t length, uint8_t *dst)
{
	struct fetch_arg *fa = arg;
	const struct nf_object *o;
	uint64_t lo;

	if (object >= fa->a->nobjects)
		return -EINVAL;
	o = &fa->a->objects[object];
	if (offset > o->bytes || length > o->bytes - offset ||
	    __builtin_add_overflow(o->offset, offset, &lo))
		return -EINVAL;
	return nf_rd_queue(fa->rd, lo, length, dst);
}

static int fetch_run(void *arg)
{
	return nf_rd_run(((struct fetch_arg *)arg)->rd);
}

static void *fetch_scratch(void *arg, size_t n)
{
	return nf_rd_scratch(((struct fetch_arg *)arg)->rd, n);
}

static int check_read(ssize_t got, size_t len)
{
	if (got < 0)
		return (int)got;
	return (size_t)got == len ? 0 : -EIO;
}

/* Bytes [off, off + len) of an NPY view (off + len <= its size): the
 * preamble, made again from the record into scratch when the range
 * touches it, then the decoded bytes, one plan (nf_decoded_read). */
static int read_npy(const struct nf_ninfer *n, struct nf_rd *rd, const struct nf_node *node,
		    const struct nf_view *v, const struct nf_dview *dv, const struct nf_fetcher *f,
		    uint64_t off, size_t len, char *out)
{
	const struct nf_artifact *a = n->a;
	uint64_t hlen = v->at;

	if (off < hlen) {
		const uint64_t *shape;
		uint32_t rank;
		char *h;
		size_t k = hlen - off < len ? (size_t)(hlen - off) : len;

		if (node->role == NF_ROLE_DECODED_OBJECT) {
			rank = a->objects[node->ref].rank;
			shape = a->objects[node->ref].shape;
		} else {
			rank = a->bindings[node->ref].rank;
			shape = a->bindings[node->ref].shape;
		}
		if (hlen > SIZE_MAX || (h = nf_rd_scratch(rd, (size_t)hlen)) == NULL)
			return -ENOMEM;
		if (nf_npy_header(dv->dtype, rank, shape, h, hlen) != hlen)
			return -EIO;   /* the record changed its preamble: cannot be */
		memcpy(out, h + off, k);
		out += k;
		len -= k;
		off = hlen;
	}
	if (len == 0)
		return 0;
	return check_read(nf_decoded_read(a, dv->parts, dv->nparts, dv->dtype, f, off - hlen, len,
					  (uint8_t *)out), len);
}

int nf_ninfer_read(void *state, struct nf_rd *rd, uint32_t node, const struct nf_view *v,
		   uint64_t off, size_t len, char *out)
{
	struct nf_ninfer *n = state;
	struct fetch_arg fa = {n->a, rd};
	struct nf_fetcher f = {fetch_queue, fetch_run, fetch_scratch, &fa};
	struct nf_dview dv;
	int rc;

	switch (v->kind) {
	case NF_VIEW_DECODED:
		nf_dview_of(n->a, &n->tree->nodes[node], v, &dv);
		if (dv.error)
			return dv.error;   /* undecodable parts: not a failed read */
		rc = check_read(nf_decoded_read(n->a, dv.parts, dv.nparts, dv.dtype, &f, off, len,
						(uint8_t *)out), len);
		break;
	case NF_VIEW_NPY:
		nf_dview_of(n->a, &n->tree->nodes[node], v, &dv);
		if (dv.error)
			return dv.error;
		rc = read_npy(n, rd, &n->tree->nodes[node], v, &dv, &f, off, len, out);
		break;
	case NF_VIEW_SAFETENSORS:
		rc = n->has_st ? check_read(nf_safetensors_read(&n->st, n->a, &f, off, len,
								(uint8_t *)out), len)
			       : -EIO;
		break;
	default:
		return -EIO;   /* USES is a document made at open: never read here */
	}
	if (rc < 0)
		nf_rd_failed(rd);
	return rc;
}

static bool hits(uint64_t lo, uint64_t len, uint64_t flo, uint64_t fhi)
{
	return len > 0 && lo < fhi && flo < lo + len;
}

bool nf_ninfer_touches(void *state, uint32_t node, const struct nf_view *v, uint32_t file)
{
	const struct nf_ninfer *n = state;
	const struct nf_artifact *a = n->a;
	struct nf_dview dv;

	if (file >= a->nfiles)
		return false;
	uint64_t flo = a->files[file].logical_start, fhi = flo + a->files[file].payload_bytes;
	switch (v->kind) {
	case NF_VIEW_DECODED:
	case NF_VIEW_NPY:
		nf_dview_of(a, &n->tree->nodes[node], v, &dv);
		for (uint32_t k = 0; k < dv.nparts; k++) {
			const struct nf_object *o = &a->objects[dv.parts[k].object];
			if (hits(o->offset, o->bytes, flo, fhi))
				return true;
		}
		return false;
	case NF_VIEW_SAFETENSORS:
		return true;   /* it holds every binding */
	case NF_VIEW_USES:
		return file == 0;   /* read from the entry */
	default:
		return false;
	}
}

/* Adds object o's bytes to the spans: joined to the last span when they
 * follow it in the logical space, else a new span, written when it is
 * one of the first cap.  *k counts the spans, last is the last one. */
static void add_span(struct nf_piece *spans, size_t *k, size_t cap, struct nf_piece *last,
		     const struct nf_object *o)
{
	if (*k && last->logical + last->length == o->offset) {
		last->length += o->bytes;   /* (both inside the set's space: no wrap) */
	} else {
		*last = (struct nf_piece){.logical = o->offset, .length = o->bytes};
		++*k;
	}
	if (*k <= cap)
		spans[*k - 1] = *last;
}

/* A decoded or NPY view reads its objects' bytes in order (a binding of
 * several objects: one after the other), model.safetensors its bindings'
 * in binding order (its data section), which for a set packed in that
 * order is one logical run across the parts.  Whole objects: a binding
 * of slices reads inside them. */
size_t nf_ninfer_view_spans(void *state, uint32_t node, const struct nf_view *v,
			    struct nf_piece *spans, size_t cap)
{
	const struct nf_ninfer *n = state;
	const struct nf_artifact *a = n->a;
	struct nf_piece last = {0};
	struct nf_dview dv;
	size_t k = 0;

	if (v->kind == NF_VIEW_SAFETENSORS) {
		for (uint32_t e = 0; n->has_st && e < n->st.nentries; e++) {
			const struct nf_binding *b = &a->bindings[n->st.entries[e].binding];
			for (uint32_t i = 0; i < b->nparts; i++)
				add_span(spans, &k, cap, &last, &a->objects[b->parts[i].object]);
		}
		return k;
	}
	if (v->kind != NF_VIEW_DECODED && v->kind != NF_VIEW_NPY)
		return 0;
	nf_dview_of(a, &n->tree->nodes[node], v, &dv);
	for (uint32_t i = 0; !dv.error && i < dv.nparts; i++)
		add_span(spans, &k, cap, &last, &a->objects[dv.parts[i].object]);
	return k;
}
