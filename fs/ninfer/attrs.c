/* fs/ninfer/attrs.c — the NInfer attributes that can be long (attrs.h). */
#include "fs/ninfer/attrs.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/ninfer/tree.h"

const char *const nf_str_attr_names[NF_ATTR_NSTR] = {
	"user.ninfer.name", "user.ninfer.object", "user.ninfer.format", "user.ninfer.layout",
};

const struct nf_object *nf_node_object(const struct nf_artifact *a, const struct nf_node *n)
{
	switch (n->role) {
	case NF_ROLE_OBJECT:
	case NF_ROLE_PLANE:
	case NF_ROLE_DECODED_OBJECT:
		return &a->objects[n->ref];
	case NF_ROLE_BINDING:
	case NF_ROLE_DECODED_BINDING:
		return &a->objects[a->bindings[n->ref].parts[0].object];
	case NF_ROLE_RESOURCE:
		return &a->objects[a->components[n->ref].resources[n->ref2].object];
	default:
		return NULL;
	}
}

static const char *node_name(const struct nf_artifact *a, const struct nf_node *n)
{
	switch (n->role) {
	case NF_ROLE_OBJECT:
	case NF_ROLE_PLANE:
	case NF_ROLE_DECODED_OBJECT:
		return a->objects[n->ref].id;
	case NF_ROLE_BINDING:
	case NF_ROLE_DECODED_BINDING:
		return a->bindings[n->ref].name;
	case NF_ROLE_RESOURCE:
		return a->components[n->ref].resources[n->ref2].role;
	case NF_ROLE_COMPONENT:
		return a->components[n->ref].id;
	default:
		return NULL;
	}
}

const char *nf_node_string(const struct nf_artifact *a, const struct nf_node *n,
			   enum nf_str_attr which)
{
	const struct nf_object *o;

	if (which == NF_ATTR_NAME)
		return node_name(a, n);
	o = nf_node_object(a, n);
	if (o == NULL)
		return NULL;
	switch (which) {
	case NF_ATTR_OBJECT:
		return n->role == NF_ROLE_RESOURCE ? o->id : NULL;
	case NF_ATTR_FORMAT:
		return o->format;
	case NF_ATTR_LAYOUT:
		return o->layout;
	default:
		return NULL;
	}
}

static const char *file_path(const struct nf_artifact *a, uint32_t f)
{
	return a->files[f].path ? a->files[f].path : a->entry_name;
}

size_t nf_segment_entry_bound(const struct nf_artifact *a, uint32_t f)
{
	/* {"file":F,"path":P,"file_offset":O,"length":L}, and a comma; a
	 * JSON escape takes at most 6 bytes a byte */
	return 64 + 10 + 6 * strlen(file_path(a, f)) + 2 + 20 + 20;
}

struct seg_out {
	const struct nf_artifact *a;
	char **paths;         /* per file: its path as a JSON string, made once */
	char *buf;
	size_t len, cap, max, kept, left;
	bool full;            /* stopped emitting: only counting */
	int err;
};

static int out_put(struct seg_out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		char *b;
		while (cap < o->len + n + 1)
			cap *= 2;
		b = realloc(o->buf, cap);
		if (b == NULL)
			return -ENOMEM;
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
	return 0;
}

/* room kept for ',{"truncated":N}]' */
#define MARKER_ROOM 40

static int out_segment(struct seg_out *o, const struct nf_segment *s)
{
	char head[64], tail[64];
	int h, t;

	if (o->full) {
		o->left++;
		return 0;
	}
	if (o->paths[s->file] == NULL) {
		json_t *j = json_string(file_path(o->a, s->file));
		o->paths[s->file] = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
		json_decref(j);
		if (o->paths[s->file] == NULL)
			return -ENOMEM;
	}
	h = snprintf(head, sizeof head, "%s{\"file\":%" PRIu32 ",\"path\":", o->kept ? "," : "",
		     s->file);
	t = snprintf(tail, sizeof tail, ",\"file_offset\":%" PRIu64 ",\"length\":%" PRIu64 "}",
		     s->file_offset, s->length);
	size_t n = (size_t)h + strlen(o->paths[s->file]) + (size_t)t;
	if (o->max && o->len + n + MARKER_ROOM > o->max) {
		o->full = true;
		o->left++;
		return 0;
	}
	if (out_put(o, head, (size_t)h) < 0 || out_put(o, o->paths[s->file], strlen(o->paths[s->file])) < 0 ||
	    out_put(o, tail, (size_t)t) < 0)
		return -ENOMEM;
	o->kept++;
	return 0;
}

static int out_span(struct seg_out *o, uint64_t logical, uint64_t length)
{
	ssize_t n = nf_range_map(o->a, logical, length, NULL, 0);
	struct nf_segment *segs;
	int rc = 0;

	if (n <= 0)
		return (int)n;
	segs = calloc((size_t)n, sizeof *segs);
	if (segs == NULL)
		return -ENOMEM;
	n = nf_range_map(o->a, logical, length, segs, (size_t)n);
	for (ssize_t i = 0; rc == 0 && i < n; i++)
		rc = out_segment(o, &segs[i]);
	free(segs);
	return n < 0 ? (int)n : rc;
}

static char *segments(const struct nf_artifact *a, const struct nf_view *v,
		      const struct nf_dview *dv, size_t max, size_t *len, bool *cut);

char *nf_segments_json(const struct nf_artifact *a, const struct nf_view *v,
		       const struct nf_dview *dv, size_t max, size_t *len, bool *cut)
{
	/* whole when the whole fits: the cut reserves room for its marker,
	 * which a list that fits does not need */
	char *s = segments(a, v, dv, 0, len, cut);

	if (s == NULL || max == 0 || *len <= max)
		return s;
	free(s);
	return segments(a, v, dv, max, len, cut);
}

static char *segments(const struct nf_artifact *a, const struct nf_view *v,
		      const struct nf_dview *dv, size_t max, size_t *len, bool *cut)
{
	struct seg_out o = {.a = a, .max = max};
	int rc = 0;

	o.paths = calloc(a->nfiles ? a->nfiles : 1, sizeof *o.paths);
	if (o.paths == NULL || out_put(&o, "[", 1) < 0)
		rc = -ENOMEM;
	for (uint32_t i = 0; rc == 0 && v->kind == NF_VIEW_PIECES && i < v->count; i++) {
		const struct nf_piece *pc = &v->pieces[v->first + i];
		if (pc->logical != NF_PIECE_ZERO)
			rc = out_span(&o, pc->logical, pc->length);
	}
	for (uint32_t i = 0; rc == 0 && (v->kind == NF_VIEW_DECODED || v->kind == NF_VIEW_NPY) &&
			     dv && i < dv->nparts; i++) {
		const struct nf_object *ob = &a->objects[dv->parts[i].object];
		if (i == 0 || dv->parts[i].object != dv->parts[i - 1].object)
			rc = out_span(&o, ob->offset, ob->bytes);
	}
	if (rc == 0 && o.left) {
		char m[48];
		int k = snprintf(m, sizeof m, "%s{\"truncated\":%zu}", o.kept ? "," : "", o.left);
		rc = out_put(&o, m, (size_t)k);
	}
	if (rc == 0)
		rc = out_put(&o, "]", 1);
	for (uint32_t f = 0; o.paths && f < a->nfiles; f++)
		free(o.paths[f]);
	free(o.paths);
	if (rc < 0) {
		free(o.buf);
		return NULL;
	}
	*len = o.len;
	if (cut)
		*cut = o.left > 0;
	return o.buf;
}
