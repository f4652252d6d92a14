/* fs/calbin/xattr.c — user.calbin.* (man ninferfs.5, Extended attributes
 * of a calbin package).
 *
 * Values are made on demand from the immutable package and images (no
 * storage, no locks): on a params/ file its map line as the line writes
 * it (file, offset, size, vaddr, chip_mask, domain) and its line number;
 * on a devices/ file its image (the blocks that show in it, the
 * reservation, the chip's bit, the lines, the overlaps and their winners);
 * on ops/<op>.json the op's shapes; on a package/ file what it is.  No
 * value exceeds NF_XATTR_VALUE_MAX: the overlap list keeps its first
 * entries and ends with {"truncated": N} (memory.json has them all), the
 * shapes of an op of thousands of tensors are cut as fs/attrs.h says (the
 * op's file has them). */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/attrs.h"
#include "fs/calbin/cbmount.h"

#define PFX "user.calbin."

static const char *const param_attrs[] = {PFX "file", PFX "offset", PFX "size", PFX "vaddr",
					  PFX "chip_mask", PFX "domain", PFX "line"};
static const char *const device_attrs[] = {PFX "file", PFX "offset", PFX "size", PFX "vaddr",
					   PFX "chip_mask", PFX "domain", PFX "lines",
					   PFX "overlaps"};
static const char *const op_attrs[] = {PFX "shapes"};
static const char *const pkg_attrs[] = {PFX "kind"};

/* The names a node has (n of them). */
static const char *const *names_of(const struct nf_node *nd, size_t *n)
{
	switch (nd->role) {
	case CBM_ROLE_PARAM:
		*n = sizeof param_attrs / sizeof *param_attrs;
		return param_attrs;
	case CBM_ROLE_DEVICE:
		*n = sizeof device_attrs / sizeof *device_attrs;
		return device_attrs;
	case CBM_ROLE_OP:
		*n = 1;
		return op_attrs;
	case CBM_ROLE_PKG_FILE:
		*n = 1;
		return pkg_attrs;
	default:
		*n = 0;
		return NULL;
	}
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	char *s = NULL;
	va_list ap;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static char *mask_text(const uint32_t m[3])
{
	return fmt("%08" PRIx32 " %08" PRIx32 " %08" PRIx32, m[0], m[1], m[2]);
}

/* A growing JSON text. */
struct text {
	char *s;
	size_t len, cap;
	bool oom;
};

static void put(struct text *t, const char *s, size_t n)
{
	if (t->oom)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		while (cap < t->len + n + 1)
			cap *= 2;
		char *ns = realloc(t->s, cap);
		if (!ns) {
			t->oom = true;
			return;
		}
		t->s = ns;
		t->cap = cap;
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len] = '\0';
}

/* user.calbin.file of an image: a JSON list of the package paths of its
 * pieces' blocks, in path order (files[] is sorted by path). */
static char *image_files(const struct nf_calbin *c, const struct cb_image *img)
{
	const struct cb_package *p = c->p;
	bool *used = calloc(p->nfiles ? p->nfiles : 1, 1);
	json_t *a = json_array();
	char *s = NULL;

	for (size_t i = 0; used && i < img->npieces; i++) {
		int fi = p->maps[img->pieces[i].map].file_index;
		if (fi >= 0)
			used[fi] = true;
	}
	for (size_t i = 0; used && a && i < p->nfiles; i++)
		if (used[i])
			json_array_append_new(a, nf_json_text(p->files[i].path));
	if (used && a)
		s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	free(used);
	return s;
}

/* user.calbin.overlaps: memory.json's device_overlaps of this image, as
 * many as fit in NF_XATTR_VALUE_MAX bytes, then {"truncated": N}. */
static char *image_overlaps(const struct nf_calbin *c, const struct cb_image *img)
{
	struct text t = {0};
	/* room for the marker: {"truncated": 18446744073709551615}] */
	const size_t reserve = 48;

	put(&t, "[", 1);
	for (size_t i = 0; i < img->noverlaps; i++) {
		const struct cb_image_overlap *o = &img->overlaps[i];
		char e[256];
		int n = snprintf(e, sizeof e, "%s{\"vaddr\": \"0x%" PRIx64 "\", \"offset\": %" PRIu64
				 ", \"bytes\": %" PRIu64 ", \"lines\": %zu, \"wins\": %" PRIu64 "}",
				 i ? ", " : "", img->vaddr + o->offset, o->offset, o->length, o->lines,
				 c->p->maps[o->wins].line);
		if (t.len + (size_t)n + reserve > NF_XATTR_VALUE_MAX) {
			char m[64];
			int k = snprintf(m, sizeof m, ", {\"truncated\": %zu}", img->noverlaps - i);
			put(&t, m, (size_t)k);
			break;
		}
		put(&t, e, (size_t)n);
	}
	put(&t, "]", 1);
	if (t.oom) {
		free(t.s);
		return NULL;
	}
	return t.s;
}

static char *param_value(const struct nf_calbin *c, const struct nf_node *nd, size_t k)
{
	const struct cb_map *m = &c->p->maps[nd->ref];

	switch (k) {
	case 0: return strdup(c->p->files[m->file_index].path);
	case 1: return fmt("0x%" PRIx64, m->offset);
	case 2: return fmt("0x%" PRIx64, m->size);
	case 3: return fmt("0x%016" PRIx64, m->vaddr);
	case 4: return mask_text(m->mask);
	case 5: return strdup(cb_domain_name((enum cb_domain)m->domain));
	default: return fmt("%" PRIu64, m->line);
	}
}

static char *device_value(const struct nf_calbin *c, const struct nf_node *nd, size_t k)
{
	const struct cb_image *img = &c->images[nd->ref];
	uint32_t bit[3] = {0, 0, 0};

	switch (k) {
	case 0: return image_files(c, img);
	case 1: return strdup("0x0");
	case 2: return fmt("0x%" PRIx64, img->size);
	case 3: return fmt("0x%016" PRIx64, img->vaddr);
	case 4:
		bit[2 - img->chip / 32] = UINT32_C(1) << (img->chip % 32);
		return mask_text(bit);
	case 5: return strdup(cb_domain_name(img->domain));
	case 6: return fmt("%zu", img->nlines);
	default: return image_overlaps(c, img);
	}
}

int cbm_xattr_get(void *state, uint32_t node, const char *name, char **value, size_t *len)
{
	const struct nf_calbin *c = state;
	const struct nf_node *nd = &c->tree->nodes[node];
	size_t n, k;
	const char *const *names = names_of(nd, &n);
	char *v = NULL;

	for (k = 0; k < n && strcmp(names[k], name); k++)
		;
	if (k == n)
		return -ENODATA;
	switch (nd->role) {
	case CBM_ROLE_PARAM:
		v = param_value(c, nd, k);
		break;
	case CBM_ROLE_DEVICE:
		v = device_value(c, nd, k);
		break;
	case CBM_ROLE_OP:
		v = cb_op_shapes(c->p, nd->ref, nd->ref2);
		if (v && strlen(v) > NF_XATTR_VALUE_MAX) {
			char *cut = nf_attr_string(v, len);
			free(v);
			v = cut;
		}
		break;
	case CBM_ROLE_PKG_FILE:
		v = strdup(cb_kind_name(c->p->files[nd->ref].kind));
		break;
	default:
		return -ENODATA;
	}
	if (!v)
		return -ENOMEM;
	*value = v;
	*len = strlen(v);
	return 0;
}

int cbm_xattr_list(void *state, uint32_t node, char **list, size_t *len)
{
	const struct nf_calbin *c = state;
	size_t n, total = 0;
	const char *const *names = names_of(&c->tree->nodes[node], &n);

	for (size_t k = 0; k < n; k++)
		total += strlen(names[k]) + 1;
	char *out = malloc(total ? total : 1);
	if (!out)
		return -ENOMEM;
	size_t at = 0;
	for (size_t k = 0; k < n; k++) {
		size_t l = strlen(names[k]) + 1;
		memcpy(out + at, names[k], l);
		at += l;
	}
	*list = out;
	*len = total;
	return 0;
}
