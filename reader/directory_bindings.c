/* reader/directory_bindings.c — Bindings and Parts (seed §7.1, §7.2).
 *
 * A Binding is either {"object": ID} (a whole tensor object) or
 * {"parts": [{"object": ID, "range": [begin, end)}, ...]} (C-order element
 * ranges concatenated).  The generic reader cannot know a parameter's shape
 * (that is the binder's job, seed §11.3), so it checks what it can: the
 * form, references to existing tensor objects, 0 <= begin < end <=
 * elements(object.shape), a non-empty list, and an element count in U64. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

static const char *const binding_fields[] = {"object", "parts", NULL};
static const char *const part_fields[] = {"object", "range", NULL};

/* A reference to a tensor object.  Returns the model index, or -1 (reported
 * unless the object exists in the directory but was left out). */
static int64_t tensor_ref(const struct nf_rec *rc, json_t *v, const char *field)
{
	struct nf_build *b = rc->b;
	const char *id;
	if (!nf_val_id(rc, field, v, &id))
		return -1;
	int64_t k = nf_object_find(b->a, id);
	if (k < 0) {
		if (!nf_build_id_known(b, id))
			nf_dir_error(b, rc->w, "BINDING_REF_MISSING", "seed §7.1: %s names object \"%s\", "
				     "which the objects table does not have", field, id);
		/* else: the object was left out for its own error; so is this. */
		return -1;
	}
	if (b->a->objects[k].kind != NF_OBJ_TENSOR) {
		nf_dir_error(b, rc->w, "BINDING_REF_KIND", "seed §7.1: bindings and parts reference "
			     "tensor objects; \"%s\" is a resource", id);
		return -1;
	}
	return k;
}

static bool parse_part(const struct nf_rec *rc, json_t *v, struct nf_part *p)
{
	struct nf_build *b = rc->b;
	if (!json_is_object(v)) {
		nf_dir_error(b, rc->w, "FIELD_TYPE", "seed §7.1: a Part is an object; it is %s",
			     nf_json_type_name(b, v));
		return false;
	}
	bool ok = nf_rec_members(rc, part_fields, NULL);
	json_t *ov = nf_rec_get(rc, "object", true);
	json_t *rv = nf_rec_get(rc, "range", true);
	int64_t k = ov ? tensor_ref(rc, ov, "object") : -1;
	if (!rv)
		return false;
	if (!json_is_array(rv) || json_array_size(rv) != 2) {
		nf_dir_error(b, rc->w, "FIELD_TYPE", "seed §7.1: range is [begin, end], two U64; it is %s"
			     "%s", nf_json_type_name(b, rv), json_is_array(rv) ? " of another length" : "");
		return false;
	}
	uint64_t begin = 0, end = 0;
	ok &= nf_val_u64(rc, "range[0]", json_array_get(rv, 0), false, &begin);
	ok &= nf_val_u64(rc, "range[1]", json_array_get(rv, 1), false, &end);
	if (!ok || k < 0)
		return false;
	const struct nf_object *o = &b->a->objects[k];
	if (begin == end) {
		nf_dir_error(b, rc->w, "PART_RANGE_EMPTY", "seed §7.1: 0 <= begin < end; range [%" PRIu64
			     ", %" PRIu64 ") is empty", begin, end);
		return false;
	}
	if (begin > end) {
		nf_dir_error(b, rc->w, "PART_RANGE_REVERSED", "seed §7.1: 0 <= begin < end; range [%"
			     PRIu64 ", %" PRIu64 ") is reversed", begin, end);
		return false;
	}
	if (end > o->elements) {
		nf_dir_error(b, rc->w, "PART_RANGE_OUT_OF_BOUNDS", "seed §7.1: end <= elements(object."
			     "shape); range [%" PRIu64 ", %" PRIu64 ") but %s has %" PRIu64 " elements",
			     begin, end, o->id, o->elements);
		return false;
	}
	p->object = (uint32_t)k;
	p->begin = begin;
	p->end = end;
	return true;
}

/* contract §2 shape rule for a parts binding. */
static void parts_shape(struct nf_build *b, struct nf_binding *out)
{
	uint64_t K = 0;
	bool rows = true;
	for (uint32_t i = 0; i < out->nparts && rows; i++) {
		const struct nf_part *p = &out->parts[i];
		const struct nf_object *o = &b->a->objects[p->object];
		if (o->rank != 2 || (K && o->shape[1] != K) || p->begin % o->shape[1] ||
		    p->end % o->shape[1])
			rows = false;
		else
			K = o->shape[1];
	}
	uint64_t *shape = nf_arena_calloc(b->ar, 2, sizeof *shape);
	if (!shape)
		return;
	out->whole_rows = rows;
	if (rows) {
		shape[0] = out->elements / K;
		shape[1] = K;
		out->rank = 2;
	} else {
		shape[0] = out->elements;
		out->rank = 1;
	}
	out->shape = shape;
}

bool nf_parse_binding(struct nf_build *b, const struct nf_where *w, json_t *v, const char *name,
		      struct nf_binding *out)
{
	struct nf_rec rc = {.b = b, .w = w, .what = "a Binding (seed §7.1)", .obj = v};
	memset(out, 0, sizeof *out);
	if (!json_is_object(v)) {
		nf_dir_error(b, w, "FIELD_TYPE", "seed §7.1: a Binding is an object; it is %s",
			     nf_json_type_name(b, v));
		return false;
	}
	bool ok = nf_rec_members(&rc, binding_fields, NULL);
	json_t *ov = json_object_get(v, "object");
	json_t *pv = json_object_get(v, "parts");
	if ((ov != NULL) == (pv != NULL)) {
		nf_dir_error(b, w, "BINDING_FORM", "seed §7.1: a Binding has exactly one of \"object\" "
			     "and \"parts\"; it has %s", ov ? "both" : "neither");
		return false;
	}
	out->name = nf_arena_strdup(b->ar, name);
	if (ov) {
		int64_t k = tensor_ref(&rc, ov, "object");
		if (k < 0 || !ok)
			return false;
		const struct nf_object *o = &b->a->objects[k];
		struct nf_part *p = nf_arena_calloc(b->ar, 1, sizeof *p);
		if (!p)
			return false;
		*p = (struct nf_part){.object = (uint32_t)k, .begin = 0, .end = o->elements};
		out->whole = true;
		out->nparts = 1;
		out->parts = p;
		out->elements = o->elements;
		out->rank = o->rank;
		out->shape = o->shape;
		return true;
	}
	if (!json_is_array(pv)) {
		nf_dir_error(b, w, "FIELD_TYPE", "seed §7.1: parts is a non-empty array; it is %s",
			     nf_json_type_name(b, pv));
		return false;
	}
	size_t n = json_array_size(pv);
	if (n == 0) {
		nf_dir_error(b, w, "BINDING_PARTS_EMPTY", "seed §7.1: parts is a non-empty array; it "
			     "is []");
		return false;
	}
	if (n > UINT32_MAX) {
		nf_dir_error(b, w, "BINDING_PARTS_EMPTY", "%zu parts; at most %u are supported", n,
			     UINT32_MAX);
		return false;
	}
	struct nf_part *parts = nf_arena_calloc(b->ar, n, sizeof *parts);
	if (!parts)
		return false;
	uint64_t elements = 0;
	bool overflow = false;
	for (size_t i = 0; i < n; i++) {
		char tail[1024];
		snprintf(tail, sizeof tail, "%s.parts[%zu]", w->tail ? w->tail : "", i);
		struct nf_where pw = *w;
		pw.tail = tail;
		struct nf_rec prc = {.b = b, .w = &pw, .what = "a Part (seed §7.1)",
				     .obj = json_array_get(pv, i)};
		if (!parse_part(&prc, prc.obj, &parts[i])) {
			ok = false;
			continue;
		}
		if (__builtin_add_overflow(elements, parts[i].end - parts[i].begin, &elements))
			overflow = true;
	}
	if (!ok)
		return false;
	if (overflow) {
		nf_dir_error(b, w, "BINDING_ELEMENTS_OVERFLOW", "seed §1: the element count of the "
			     "parts must be in U64; the sum overflows");
		return false;
	}
	out->nparts = (uint32_t)n;
	out->parts = parts;
	out->elements = elements;
	parts_shape(b, out);
	return out->shape != NULL;
}

static int cmp_strp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* A binding left out: remember its name (a use naming it is not reported
 * again; the same name twice is a duplicate member). */
static void remember_dropped(struct nf_build *b, const char *name)
{
	if (b->ndropped_bindings == b->cap_dropped_bindings) {
		size_t cap = b->cap_dropped_bindings ? 2 * b->cap_dropped_bindings : 16;
		char **n = realloc(b->dropped_bindings, cap * sizeof *n);
		if (!n) {
			b->ar->failed = true;
			return;
		}
		b->dropped_bindings = n;
		b->cap_dropped_bindings = cap;
	}
	char *copy = nf_arena_strdup(&b->scratch, name);
	if (!copy) {
		b->ar->failed = true;
		return;
	}
	b->dropped_bindings[b->ndropped_bindings++] = copy;
}

bool nf_build_binding_named(const struct nf_build *b, const char *name)
{
	if (nf_binding_find(b->a, name) >= 0)
		return true;
	return b->ndropped_bindings &&
	       bsearch(&name, b->dropped_bindings, b->ndropped_bindings, sizeof(char *), cmp_strp);
}

void nf_build_bindings(struct nf_build *b, struct nf_recs *bindings)
{
	struct nf_artifact *a = b->a;
	size_t n = bindings->count;
	if (n > UINT32_MAX - 1) {
		struct nf_where w = {.table = "root"};
		nf_dir_error(b, &w, "BINDINGS_TOO_MANY", "%zu bindings; at most %u are supported", n,
			     UINT32_MAX - 1);
		return;
	}
	struct nf_binding *out = nf_arena_calloc(b->ar, n ? n : 1, sizeof *out);
	if (!out)
		return;
	uint32_t kept = 0;
	const char *name;
	json_t *v;
	while (nf_recs_next(bindings, &v, &name) == 1) {
		struct nf_where w = {.table = "bindings", .name = name};
		if (name[0] == '\0') {
			nf_dir_error(b, &w, "ID_EMPTY", "seed §7.1: a logical parameter name is a "
				     "non-empty ID; it is \"\"");
			remember_dropped(b, name);
			continue;
		}
		if (nf_parse_binding(b, &w, v, name, &out[kept]))
			kept++;
		else
			remember_dropped(b, name);
	}
	a->bindings = out;
	a->nbindings = kept;
	if (!nf_index_bindings(a))
		b->ar->failed = true;
	if (b->ndropped_bindings)
		qsort(b->dropped_bindings, b->ndropped_bindings, sizeof(char *), cmp_strp);
	/* Member names are unique (jansson refuses a duplicate when it parses
	 * the object as a whole; streamed, it is checked here and the whole
	 * text is then parsed to report it the same way). */
	if (bindings->tree || b->ar->failed)
		return;
	const uint32_t *ix = a->priv->bind_by_name;
	for (uint32_t k = 1; k < kept; k++)
		if (strcmp(out[ix[k]].name, out[ix[k - 1]].name) == 0)
			b->stream_failed = true;
	for (size_t k = 0; k < b->ndropped_bindings; k++)
		if ((k && strcmp(b->dropped_bindings[k], b->dropped_bindings[k - 1]) == 0) ||
		    nf_binding_find(a, b->dropped_bindings[k]) >= 0)
			b->stream_failed = true;
}
