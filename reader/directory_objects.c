/* reader/directory_objects.c — the objects table (seed §5).
 *
 * Per record: closed field set, ID, Shape (rank 0..16, positive dims, the
 * product in U64), offset/bytes, alignment (256 for tensors, 1 for raw
 * resources) and bounds inside the logical payload.  Across records (seed
 * §5.3): offset order, unique IDs (tensors and resources share one
 * namespace) and no overlap.  The cross-record checks sort (n log n), so a
 * million objects cost a second at most.
 *
 * Lenient model: a record that is inconsistent on its own, the later of
 * two records with one ID, and the later of two overlapping records are
 * left out; everything else stays, in stored order.  Interpretation
 * problems (format/layout, encoded size) are object-scope findings and
 * never drop the object: its raw bytes stay readable (contract §5). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

static const char *const tensor_fields[] = {"id", "kind", "shape", "format", "layout",
					    "offset", "bytes", "divisors", NULL};
static const char *const resource_fields[] = {"id", "kind", "encoding", "offset", "bytes", NULL};

#define TENSOR_ALIGN 256u  /* seed §5.3, §6.2 */

struct obj_tmp {
	const char *id;    /* NULL when the id itself was bad */
	uint64_t offset, end;
	uint32_t index;    /* stored index */
	bool keep;
	bool have_range;
};

static int cmp_id(const void *x, const void *y)
{
	const struct obj_tmp *a = *(const struct obj_tmp *const *)x;
	const struct obj_tmp *b = *(const struct obj_tmp *const *)y;
	int c = strcmp(a->id, b->id);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

static int cmp_offset(const void *x, const void *y)
{
	const struct obj_tmp *a = *(const struct obj_tmp *const *)x;
	const struct obj_tmp *b = *(const struct obj_tmp *const *)y;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

/* Shape (seed §1): 0..16 positive U64 dimensions, elements in U64. */
static bool parse_shape(const struct nf_rec *rc, json_t *v, struct nf_object *o)
{
	struct nf_build *b = rc->b;
	if (!json_is_array(v)) {
		nf_dir_error(b, rc->w, "FIELD_TYPE", "seed §1: shape is a list of dimensions; it is %s",
			     nf_json_type_name(b, v));
		return false;
	}
	size_t rank = json_array_size(v);
	if (rank > NF_MAX_RANK) {
		nf_dir_error(b, rc->w, "SHAPE_RANK", "seed §1: a Shape has 0..16 dimensions; this one "
			     "has %zu", rank);
		return false;
	}
	uint64_t *dims = rank ? nf_arena_calloc(b->ar, rank, sizeof *dims) : NULL;
	if (rank && !dims)
		return false;
	uint64_t elements = 1;
	bool ok = true, overflow = false;
	for (size_t k = 0; k < rank; k++) {
		json_t *d = json_array_get(v, k);
		if (json_is_integer(d) && json_integer_value(d) > 0) {
			/* the common case, without formatting a field name */
			dims[k] = (uint64_t)json_integer_value(d);
			if (__builtin_mul_overflow(elements, dims[k], &elements))
				overflow = true;
			continue;
		}
		char field[32];
		snprintf(field, sizeof field, "shape[%zu]", k);
		if (json_is_integer(d) && json_integer_value(d) == 0) {
			nf_dir_error(b, rc->w, "SHAPE_DIM_ZERO", "seed §1: Shape dimensions are positive; "
				     "%s is 0", field);
			ok = false;
			continue;
		}
		if (!nf_val_u64(rc, field, d, true, &dims[k])) {
			ok = false;
			continue;
		}
		if (__builtin_mul_overflow(elements, dims[k], &elements))
			overflow = true;
	}
	if (!ok)
		return false;
	if (overflow) {
		nf_dir_error(b, rc->w, "SHAPE_OVERFLOW", "seed §1: elements(shape) must be in U64; the "
			     "product of the %zu dimensions overflows", rank);
		return false;
	}
	o->rank = (uint32_t)rank;
	o->shape = dims;
	o->elements = elements;
	return true;
}

/* Object scope (contract §5): the codec registry's view of the record. */
static void interpret(struct nf_build *b, const struct nf_where *w, struct nf_object *o)
{
	o->codec_status = nf_geometry_init(&o->geom, o->format, o->layout, o->rank, o->shape,
					   o->divisors);
	o->size_ok = false;
	const char *code = NULL;
	enum nf_severity sev = NF_SEV_ERROR;
	switch (o->codec_status) {
	case NF_CODEC_OK:
		if (o->geom.bytes == o->bytes) {
			o->size_ok = true;
			return;
		}
		nf_finding_at(b, NF_SEV_ERROR, NF_SCOPE_OBJECT, w, "OBJECT_SIZE_MISMATCH",
			      "seed §5.3: bytes must equal the encoded size of (%s, %s, shape); "
			      "that is %" PRIu64 ", bytes is %" PRIu64, o->format, o->layout,
			      o->geom.bytes, o->bytes);
		return;
	case NF_CODEC_UNKNOWN_FORMAT: code = "OBJECT_FORMAT_UNKNOWN"; sev = NF_SEV_WARNING; break;
	case NF_CODEC_UNKNOWN_LAYOUT: code = "OBJECT_LAYOUT_UNKNOWN"; sev = NF_SEV_WARNING; break;
	case NF_CODEC_PAIR_NOT_ALLOWED: code = "OBJECT_PAIR_NOT_ALLOWED"; break;
	case NF_CODEC_BAD_SHAPE: code = "OBJECT_BAD_SHAPE"; break;
	case NF_CODEC_DIVISORS_NOT_ALLOWED: code = "OBJECT_DIVISORS_NOT_ALLOWED"; break;
	case NF_CODEC_BAD_DIVISORS: code = "OBJECT_BAD_DIVISORS"; break;
	case NF_CODEC_OVERFLOW: code = "OBJECT_SIZE_OVERFLOW"; break;
	}
	if (!code)
		code = "OBJECT_BAD_SHAPE";
	nf_finding_at(b, sev, NF_SCOPE_OBJECT, w, code, "seed §6: format %s, layout %s, rank %u, "
		      "divisors %" PRIu64 ": %s", o->format, o->layout, o->rank, o->divisors,
		      nf_codec_status_str(o->codec_status));
}

/* One record; returns true when it is consistent on its own. */
static bool parse_object(struct nf_build *b, json_t *rec, const struct nf_where *w,
			 struct nf_object *o, struct obj_tmp *t)
{
	struct nf_rec rc = {.b = b, .w = w, .what = "an object record (seed §5)", .obj = rec};
	if (!json_is_object(rec)) {
		nf_dir_error(b, w, "FIELD_TYPE", "seed §5: an object record is a JSON object; it is %s",
			     nf_json_type_name(b, rec));
		return false;
	}
	bool ok = true;
	const char *id = NULL;
	if (nf_rec_id(&rc, "id", true, &id) == 1)
		t->id = id;
	else
		ok = false;
	const char *kind = NULL;
	json_t *kv = nf_rec_get(&rc, "kind", true);
	if (!kv)
		return false;
	if (!json_is_string(kv)) {
		nf_dir_error(b, w, "FIELD_TYPE", "seed §5: kind is \"tensor\" or \"resource\"; it is %s",
			     nf_json_type_name(b, kv));
		return false;
	}
	kind = json_string_value(kv);
	if (strcmp(kind, "tensor") == 0) {
		o->kind = NF_OBJ_TENSOR;
		rc.what = "a tensor object (seed §5.1)";
		ok &= nf_rec_members(&rc, tensor_fields, NULL);
	} else if (strcmp(kind, "resource") == 0) {
		o->kind = NF_OBJ_RESOURCE;
		rc.what = "a resource object (seed §5.2)";
		ok &= nf_rec_members(&rc, resource_fields, NULL);
	} else {
		nf_dir_error(b, w, "OBJECT_KIND_UNKNOWN", "seed §5: kind is \"tensor\" or \"resource\"; "
			     "it is \"%s\"", kind);
		return false;
	}

	int rc_off = nf_rec_u64(&rc, "offset", true, false, &o->offset);
	int rc_bytes = nf_rec_u64(&rc, "bytes", true, true, &o->bytes);
	ok &= rc_off == 1 && rc_bytes == 1;
	if (o->kind == NF_OBJ_TENSOR) {
		json_t *sv = nf_rec_get(&rc, "shape", true);
		if (!sv || !parse_shape(&rc, sv, o))
			ok = false;
		const char *format = NULL, *layout = NULL;
		ok &= nf_rec_id(&rc, "format", true, &format) == 1;
		ok &= nf_rec_id(&rc, "layout", true, &layout) == 1;
		o->format = format;
		o->layout = layout;
		o->divisors = 1;
		ok &= nf_rec_u64(&rc, "divisors", false, true, &o->divisors) >= 0;
	} else {
		const char *enc = NULL;
		ok &= nf_rec_id(&rc, "encoding", true, &enc) == 1;
		o->layout = enc;
		o->divisors = 1;
	}
	if (rc_off == 1) {
		t->offset = o->offset;
		t->have_range = true;
		t->end = o->offset;
	}
	if (rc_off == 1 && rc_bytes == 1) {
		if (__builtin_add_overflow(o->offset, o->bytes, &t->end)) {
			nf_dir_error(b, w, "OBJECT_OUT_OF_BOUNDS", "seed §1: offset %" PRIu64 " + bytes %"
				     PRIu64 " exceeds U64", o->offset, o->bytes);
			ok = false;
		} else if (b->files_ok && t->end > b->a->payload_bytes) {
			nf_dir_error(b, w, "OBJECT_OUT_OF_BOUNDS", "seed §5.3: [%" PRIu64 ", %" PRIu64
				     ") must lie in the logical payload [0, %" PRIu64 ")", o->offset,
				     t->end, b->a->payload_bytes);
			ok = false;
		}
		if (o->kind == NF_OBJ_TENSOR && o->offset % TENSOR_ALIGN) {
			nf_dir_error(b, w, "OBJECT_MISALIGNED", "seed §5.3: tensor offsets are multiples "
				     "of 256; offset is %" PRIu64 " (%" PRIu64 " past a multiple)",
				     o->offset, o->offset % TENSOR_ALIGN);
			ok = false;
		}
	}
	if (!ok)
		return false;

	/* Copy the strings out of the JSON tree, which is freed after open. */
	o->id = nf_arena_strdup(b->ar, id);
	o->format = nf_intern(b, o->format);
	o->layout = nf_intern(b, o->layout);
	t->id = o->id;
	o->index = t->index;
	if (o->kind == NF_OBJ_TENSOR) {
		interpret(b, w, o);
	} else {
		o->elements = o->bytes;
		if (strcmp(o->layout, "raw_bytes_v1") == 0) {
			o->codec_status = NF_CODEC_OK;
			o->size_ok = true;
		} else {
			/* seed §11.1: an unknown encoding is reported when the
			 * object is interpreted; its raw bytes stay readable. */
			o->codec_status = NF_CODEC_UNKNOWN_LAYOUT;
			nf_finding_at(b, NF_SEV_WARNING, NF_SCOPE_OBJECT, w, "OBJECT_ENCODING_UNKNOWN",
				      "seed §5.2: resource encoding is raw_bytes_v1; it is \"%s\"",
				      o->layout);
		}
	}
	return true;
}

void nf_build_objects(struct nf_build *b, struct nf_recs *objects)
{
	struct nf_artifact *a = b->a;
	size_t n = objects->count;
	if (n > UINT32_MAX - 1) {
		struct nf_where w = {.table = "root"};
		nf_dir_error(b, &w, "OBJECTS_TOO_MANY", "%zu objects; at most %u are supported", n,
			     UINT32_MAX - 1);
		return;
	}
	struct nf_object *objs = nf_arena_calloc(b->ar, n ? n : 1, sizeof *objs);
	struct obj_tmp *tmp = calloc(n ? n : 1, sizeof *tmp);
	struct obj_tmp **order = calloc(n ? n : 1, sizeof *order);
	if (!objs || !tmp || !order) {
		b->ar->failed = true;
		goto out;
	}

	bool have_prev = false;
	uint64_t prev_offset = 0;
	uint32_t prev_index = 0;
	json_t *rec;
	for (size_t i = 0; i < n && nf_recs_next(objects, &rec, NULL) == 1; i++) {
		struct nf_where w = {.table = "objects", .index = i};
		json_t *idv = json_is_object(rec) ? json_object_get(rec, "id") : NULL;
		if (json_is_string(idv))
			w.name = json_string_value(idv);
		tmp[i].index = (uint32_t)i;
		tmp[i].keep = parse_object(b, rec, &w, &objs[i], &tmp[i]);
		/* A left-out record's id still names it (duplicates, dangling
		 * references), but the record itself is about to be freed. */
		if (!tmp[i].keep && tmp[i].id) {
			tmp[i].id = nf_arena_strdup(&b->scratch, tmp[i].id);
			if (!tmp[i].id)
				b->ar->failed = true;
		}
		/* seed §5.3: objects are listed by increasing offset. */
		if (tmp[i].have_range) {
			if (have_prev && tmp[i].offset < prev_offset)
				nf_dir_error(b, &w, "OBJECT_ORDER", "seed §5.3: objects are listed by "
					     "increasing offset; offset %" PRIu64 " follows objects[%u] at %"
					     PRIu64, tmp[i].offset, prev_index, prev_offset);
			have_prev = true;
			prev_offset = tmp[i].offset;
			prev_index = (uint32_t)i;
		}
	}

	/* Unique IDs in one namespace (seed §5.2, §5.3). */
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (tmp[i].id)
			order[m++] = &tmp[i];
	qsort(order, m, sizeof *order, cmp_id);
	for (size_t k = 1; k < m; k++) {
		if (strcmp(order[k]->id, order[k - 1]->id) != 0)
			continue;
		size_t first = k - 1;
		while (first > 0 && strcmp(order[first - 1]->id, order[k]->id) == 0)
			first--;
		struct nf_where w = {.table = "objects", .index = order[k]->index, .name = order[k]->id};
		nf_dir_error(b, &w, "OBJECT_ID_DUPLICATE", "seed §5.3: object IDs are unique across "
			     "tensors and resources; objects[%u] has the same id",
			     order[first]->index);
		order[k]->keep = false;
	}

	/* Remember every id the directory names (for dangling references). */
	b->all_ids = malloc((m ? m : 1) * sizeof *b->all_ids);
	if (b->all_ids) {
		for (size_t k = 0; k < m; k++)
			if (k == 0 || strcmp(order[k]->id, order[k - 1]->id) != 0)
				b->all_ids[b->nall_ids++] = order[k]->id;
	} else {
		b->ar->failed = true;
	}

	/* No overlap (seed §5.3), checked in offset order so that it holds
	 * even when the listed order was wrong. */
	m = 0;
	bool sorted = true;
	for (size_t i = 0; i < n; i++)
		if (tmp[i].keep) {
			if (m && tmp[i].offset < order[m - 1]->offset)
				sorted = false;
			order[m++] = &tmp[i];
		}
	if (!sorted)
		qsort(order, m, sizeof *order, cmp_offset);
	const struct obj_tmp *frontier = NULL;
	for (size_t k = 0; k < m; k++) {
		struct obj_tmp *t = order[k];
		if (frontier && t->offset < frontier->end) {
			struct nf_where w = {.table = "objects", .index = t->index, .name = t->id};
			nf_dir_error(b, &w, "OBJECT_OVERLAP", "seed §5.3: object byte ranges do not "
				     "overlap; [%" PRIu64 ", %" PRIu64 ") overlaps objects[%u] %s [%"
				     PRIu64 ", %" PRIu64 ")", t->offset, t->end, frontier->index,
				     frontier->id, frontier->offset, frontier->end);
			t->keep = false;
			continue;
		}
		frontier = t;
	}

	/* Compact the kept records in stored order. */
	uint32_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (tmp[i].keep)
			objs[kept++] = objs[i];
	a->objects = objs;
	a->nobjects = kept;
	if (!nf_index_objects(a))
		b->ar->failed = true;
out:
	free(tmp);
	free(order);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

bool nf_build_id_known(const struct nf_build *b, const char *id)
{
	return b->all_ids && bsearch(&id, b->all_ids, b->nall_ids, sizeof *b->all_ids, cmp_str);
}
