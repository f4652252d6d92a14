/* fs/ninfer/xattr.c — the extended attributes of contract §3.
 *
 * Values are computed on demand from the immutable tree and model (no
 * storage, no locks).  user.ninfer.offset/bytes describe the logical
 * payload a file is made of: the first payload offset and the total number
 * of payload bytes (zero fill of standalone row payloads not counted);
 * user.ninfer.segments is the range map of all those bytes, in file order.
 * No value exceeds XATTR_SIZE_MAX: long ones are cut as fs/ninfer/attrs.h
 * says, and their whole bytes are files under xattrs/ (fs/ninfer/tree.c).
 * Names outside "user." never get here (fs/ops.c answers ENOTSUP). */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/ninfer/attrs.h"
#include "fs/ninfer/ninfer.h"
#include "fs/ninfer/tree.h"

#define PFX "user.ninfer."

static const char *const attr_names[] = {
	PFX "kind", PFX "name", PFX "object", PFX "plane", PFX "format", PFX "layout",
	PFX "shape", PFX "dtype", PFX "offset", PFX "bytes", PFX "segments", PFX "artifact_id",
};
#define NATTRS (sizeof attr_names / sizeof attr_names[0])

static const char *kind_name(enum nf_role r)
{
	switch (r) {
	case NF_ROLE_ROOT: return "root";
	case NF_ROLE_DOCUMENT: return "document";
	case NF_ROLE_STATS: return "stats";
	case NF_ROLE_OBJECT: return "object";
	case NF_ROLE_PLANE: return "plane";
	case NF_ROLE_BINDING: return "binding";
	case NF_ROLE_RESOURCE: return "resource";
	case NF_ROLE_COMPONENT: return "component";
	case NF_ROLE_DECODED_BINDING:
	case NF_ROLE_DECODED_OBJECT: return "decoded";
	case NF_ROLE_SAFETENSORS: return "safetensors";
	default: return "directory";
	}
}

static bool is_decoded(const struct nf_node *n)
{
	return n->role == NF_ROLE_DECODED_BINDING || n->role == NF_ROLE_DECODED_OBJECT;
}

static bool has_payload(const struct nf_node *n)
{
	return n->role == NF_ROLE_OBJECT || n->role == NF_ROLE_PLANE ||
	       n->role == NF_ROLE_BINDING || n->role == NF_ROLE_RESOURCE || is_decoded(n);
}

static char *shape_json(uint32_t rank, const uint64_t *shape)
{
	size_t cap = 3 + (size_t)rank * 22, o = 0;
	char *s = malloc(cap);

	if (s == NULL)
		return NULL;
	s[o++] = '[';
	for (uint32_t i = 0; i < rank; i++)
		o += (size_t)snprintf(s + o, cap - o, "%s%" PRIu64, i ? "," : "", shape[i]);
	s[o++] = ']';
	s[o] = '\0';
	return s;
}

/* Decoded files: the source objects of the parts (each once when parts
 * of one object follow each other), whole. */
static void decoded_extent(const struct nf_artifact *a, const struct nf_dview *v, uint64_t *off,
			   uint64_t *bytes)
{
	*off = a->objects[v->parts[0].object].offset;
	*bytes = 0;
	for (uint32_t i = 0; i < v->nparts; i++)
		if (i == 0 || v->parts[i].object != v->parts[i - 1].object)
			*bytes += a->objects[v->parts[i].object].bytes;
}

static char *u64_string(uint64_t v)
{
	char *s;

	return asprintf(&s, "%" PRIu64, v) < 0 ? NULL : s;
}

/* A string attribute (attrs.h: cut past NF_XATTR_STRING_MAX), or NULL. */
static char *string_value(const struct nf_ninfer *fam, const struct nf_node *n,
			  enum nf_str_attr which, int *err)
{
	const char *s = nf_node_string(fam->a, n, which);
	size_t len;
	char *v;

	if (s == NULL)
		return NULL;
	v = nf_attr_string(s, &len);
	if (v == NULL)
		*err = -ENOMEM;
	return v;
}

/* The value of attribute `idx` of node n, malloc'd; NULL + *err.  Every
 * value fits XATTR_SIZE_MAX (attrs.h). */
static char *attr_value(const struct nf_ninfer *fam, uint32_t idx_node, size_t idx, int *err)
{
	const struct nf_node *n = &fam->tree->nodes[idx_node];
	const struct nf_artifact *a = fam->a;
	const struct nf_object *o = nf_node_object(a, n);
	uint64_t off, bytes;
	const char *nm = attr_names[idx] + strlen(PFX);

	*err = -ENODATA;
	if (strcmp(nm, "kind") == 0)
		return strdup(n->kind == NF_VIEW_NPY ? "npy" : kind_name(n->role));
	if (strcmp(nm, "artifact_id") == 0)
		return n->role == NF_ROLE_ROOT ? strdup(a->artifact_id_hex) : NULL;
	if (strcmp(nm, "name") == 0)
		return string_value(fam, n, NF_ATTR_NAME, err);
	if (strcmp(nm, "object") == 0)
		return string_value(fam, n, NF_ATTR_OBJECT, err);
	if (strcmp(nm, "plane") == 0)
		return n->role == NF_ROLE_PLANE ? strdup(o->geom.planes[n->ref2].name) : NULL;
	if (strcmp(nm, "dtype") == 0) {
		if (is_decoded(n))
			return strdup(nf_dtype_name((enum nf_dtype)n->tag[0]));
		return n->role == NF_ROLE_SAFETENSORS ? strdup(nf_dtype_name(fam->opt->dtype)) : NULL;
	}
	if (o == NULL)
		return NULL;
	if (strcmp(nm, "format") == 0)
		return string_value(fam, n, NF_ATTR_FORMAT, err);
	if (strcmp(nm, "layout") == 0)
		return string_value(fam, n, NF_ATTR_LAYOUT, err);
	if (strcmp(nm, "shape") == 0) {
		if (n->role == NF_ROLE_BINDING || n->role == NF_ROLE_DECODED_BINDING)
			return shape_json(a->bindings[n->ref].rank, a->bindings[n->ref].shape);
		return o->kind == NF_OBJ_TENSOR ? shape_json(o->rank, o->shape) : NULL;
	}
	if (!has_payload(n))
		return NULL;
	struct nf_view view;
	struct nf_dview dv;
	nf_tree_view(fam->tree, idx_node, &view);
	if (is_decoded(n)) {
		nf_dview_of(a, n, &view, &dv);
		decoded_extent(a, &dv, &off, &bytes);
	} else {
		nf_view_extent(&view, &off, &bytes);
	}
	if (strcmp(nm, "offset") == 0)
		return u64_string(off);
	if (strcmp(nm, "bytes") == 0)
		return u64_string(bytes);
	if (strcmp(nm, "segments") == 0) {
		size_t len;
		char *v = nf_segments_json(a, &view, is_decoded(n) ? &dv : NULL, NF_XATTR_VALUE_MAX,
					   &len, NULL);
		if (v == NULL)
			*err = -ENOMEM;
		return v;
	}
	return NULL;
}

int nf_ninfer_xattr_get(void *state, uint32_t node, const char *name, char **value, size_t *len)
{
	const struct nf_ninfer *fam = state;

	for (size_t i = 0; i < NATTRS; i++) {
		if (strcmp(name, attr_names[i]) == 0) {
			int err;
			char *v = attr_value(fam, node, i, &err);
			if (v == NULL)
				return err;
			*value = v;
			*len = strlen(v);
			return 0;
		}
	}
	return -ENODATA;
}

int nf_ninfer_xattr_list(void *state, uint32_t node, char **list, size_t *len)
{
	const struct nf_ninfer *fam = state;
	size_t cap = 0, o = 0;
	char *out;

	for (size_t i = 0; i < NATTRS; i++)
		cap += strlen(attr_names[i]) + 1;
	out = malloc(cap);
	if (out == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < NATTRS; i++) {
		int err;
		char *v = attr_value(fam, node, i, &err);
		if (v == NULL)
			continue;
		free(v);
		memcpy(out + o, attr_names[i], strlen(attr_names[i]) + 1);
		o += strlen(attr_names[i]) + 1;
	}
	*list = out;
	*len = o;
	return 0;
}
