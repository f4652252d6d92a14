/* fs/ninfer/read.c — reads of the NInfer family's views: DECODED and
 * SAFETENSORS (fs/family.h's read), and which backing files they show.
 *
 * The decoders (decoded.h, safetensors.h) take a fetcher that reads
 * object-relative spans; this one turns them into logical spans of the
 * set, queues them on the request (nf_rd_queue: the extent map cuts them
 * into segments) and reads them in one engine read (nf_rd_run). */
#include <errno.h>
#include <stdbool.h>

#include "fs/ninfer/decoded.h"
#include "fs/ninfer/ninfer.h"
#include "fs/ninfer/safetensors.h"
#include "fs/ninfer/tree.h"

struct fetch_arg {
	const struct nf_artifact *a;
	struct nf_rd *rd;
};

/* The struct nf_fetcher of decoded.h: spans of object `object` ->
 * logical spans -> one engine read. */
static int fetch_spans(void *arg, uint32_t object, const struct nf_span *spans, unsigned n,
		       uint8_t *const *bufs)
{
	struct fetch_arg *fa = arg;
	const struct nf_object *o;
	int rc;

	if (object >= fa->a->nobjects)
		return -EINVAL;
	o = &fa->a->objects[object];
	for (unsigned i = 0; i < n; i++) {
		uint64_t lo;

		if (spans[i].offset > o->bytes || spans[i].length > o->bytes - spans[i].offset ||
		    __builtin_add_overflow(o->offset, spans[i].offset, &lo))
			return -EINVAL;
		rc = nf_rd_queue(fa->rd, lo, spans[i].length, bufs[i]);
		if (rc < 0)
			return rc;
	}
	return nf_rd_run(fa->rd);
}

static int check_read(ssize_t got, size_t len)
{
	if (got < 0)
		return (int)got;
	return (size_t)got == len ? 0 : -EIO;
}

int nf_ninfer_read(void *state, struct nf_rd *rd, uint32_t node, const struct nf_view *v,
		   uint64_t off, size_t len, char *out)
{
	struct nf_ninfer *n = state;
	struct fetch_arg fa = {n->a, rd};
	struct nf_fetcher f = {fetch_spans, &fa};
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
