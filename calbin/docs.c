/* calbin/docs.c — the generated documents of a mounted package (issue 13;
 * man ninferfs.5, CALBIN PACKAGES): manifest.json, memory.json and, per
 * submodel, metadata.json, io.json, ops.json, ops/<op>.json,
 * profparts/chip<N> and commands/<engine>_chip<N>_<ping|pong>.json.  Each
 * is made from the model cb_package_open() built (nothing is parsed
 * again) and, with `pub`, follows the public report's rule (seed §11): no
 * address and no absolute source path. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "calbin/internal.h"
#include "calbin/mount.h"

/* The MAX entries of one list in memory.json (a hostile metadata file of a
 * million lines must not make a document of a million entries); a list
 * cut so ends with {"truncated": N}. */
#define LIST_MAX 65536

static json_t *mask_json(const uint32_t m[3])
{
	char s[32];
	snprintf(s, sizeof s, "%08" PRIx32 " %08" PRIx32 " %08" PRIx32, m[0], m[1], m[2]);
	return json_string(s);
}

/* A document of a value the package keeps (not copied, not freed). */
static char *dump_borrowed(const json_t *v)
{
	return v ? nf_json_document(json_incref((json_t *)v), JSON_INDENT(2)) : NULL;
}

static const struct cb_submodel *sub_at(const struct cb_package *p, size_t s)
{
	return s < p->nsubmodels ? &p->submodels[s] : NULL;
}

static const char *path_of(const struct cb_package *p, int i)
{
	const struct cb_file *f = cb_file_at(p, i);
	return f ? f->path : NULL;
}

/* ---- manifest.json ------------------------------------------------------------ */

static bool has_hex_number(const char *s)
{
	for (const char *x = strstr(s, "0x"); x; x = strstr(x + 1, "0x")) {
		char c = x[2];
		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
			return true;
	}
	return false;
}

/* The public rule on a string of the manifest: an absolute path (or one
 * climbing out with "../") is "<path>", a 0x number "0x?"; anything else
 * (names, digests, commits) stays. */
static json_t *public_string(const char *s)
{
	if (s[0] == '/' || strncmp(s, "../", 3) == 0)
		return json_string("<path>");
	if (!has_hex_number(s))
		return nf_json_text(s);
	char *c = cb_sanitize(s);
	json_t *v = c ? nf_json_text(c) : NULL;
	free(c);
	return v;
}

/* A copy of v with the rule applied to every string, keys kept. */
static json_t *public_copy(const json_t *v, unsigned depth)
{
	if (depth > 256)
		return json_null();
	if (json_is_string(v))
		return public_string(json_string_value(v));
	if (json_is_array(v)) {
		json_t *a = json_array();
		size_t i;
		const json_t *x;
		json_array_foreach(v, i, x)
			if (a)
				json_array_append_new(a, public_copy(x, depth + 1));
		return a;
	}
	if (json_is_object(v)) {
		json_t *o = json_object();
		const char *k;
		const json_t *x;
		json_object_foreach((json_t *)v, k, x)
			if (o)
				nf_json_put(o, k, public_copy(x, depth + 1));
		return o;
	}
	return json_deep_copy(v);
}

char *cb_manifest_json(const struct cb_package *p, bool pub)
{
	if (!p->manifest)
		return NULL;
	if (pub)
		return nf_json_document(public_copy(p->manifest, 0), JSON_INDENT(2));
	return dump_borrowed(p->manifest);
}

/* ---- memory.json --------------------------------------------------------------- */

static int by_begin(const void *a, const void *b)
{
	const struct cb_range *x = a, *y = b;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static void truncated(json_t *a, size_t left)
{
	json_t *t = json_object();
	nf_json_put(t, "truncated", nf_json_u64(left));
	json_array_append_new(a, t);
}

/* [[begin, end], ...] of the file bytes of block fi that no valid map line
 * maps (§4.3 rule 6), in file order. */
static json_t *uncovered_list(const struct cb_package *p, int fi)
{
	const struct cb_file *f = cb_file_at(p, fi);
	json_t *a = json_array();
	struct cb_range *v = p->nmaps ? malloc(p->nmaps * sizeof *v) : NULL;
	if (!a || !f || (p->nmaps && !v)) {
		free(v);
		json_decref(a);
		return NULL;
	}
	size_t n = 0, listed = 0, left = 0;
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].valid && p->maps[i].file_index == fi && p->maps[i].size)
			v[n++] = (struct cb_range){p->maps[i].offset, p->maps[i].offset + p->maps[i].size, i};
	if (n > 1)
		qsort(v, n, sizeof *v, by_begin);
	uint64_t reach = 0;
	for (size_t i = 0; i <= n; i++) {
		uint64_t begin = i < n ? v[i].begin : f->size;
		if (begin > reach) {
			if (listed++ < LIST_MAX) {
				json_t *r = json_array();
				json_array_append_new(r, nf_json_u64(reach));
				json_array_append_new(r, nf_json_u64(begin));
				json_array_append_new(a, r);
			} else {
				left++;
			}
		}
		if (i < n && v[i].end > reach)
			reach = v[i].end;
	}
	if (left)
		truncated(a, left);
	free(v);
	return a;
}

static json_t *device_overlaps(const struct cb_package *p, const struct cb_image *imgs, size_t n)
{
	json_t *a = json_array();
	size_t listed = 0, left = 0;
	for (size_t k = 0; a && k < n; k++)
		for (size_t i = 0; i < imgs[k].noverlaps; i++) {
			const struct cb_image_overlap *o = &imgs[k].overlaps[i];
			if (listed++ >= LIST_MAX) {
				left++;
				continue;
			}
			json_t *e = json_object();
			nf_json_put(e, "chip", nf_json_u64(imgs[k].chip));
			nf_json_put(e, "domain", json_string(cb_domain_name(imgs[k].domain)));
			nf_json_put(e, "vaddr", cb_json_hex(imgs[k].vaddr + o->offset));
			nf_json_put(e, "offset", nf_json_u64(o->offset));
			nf_json_put(e, "bytes", nf_json_u64(o->length));
			nf_json_put(e, "lines", nf_json_u64(o->lines));
			nf_json_put(e, "wins", nf_json_u64(p->maps[o->wins].line));
			json_array_append_new(a, e);
		}
	if (a && left)
		truncated(a, left);
	return a;
}

char *cb_mount_memory_json(const struct cb_package *p, const struct cb_image *imgs, size_t n,
			   bool pub)
{
	json_t *o = cb_memory_obj(p, pub);
	if (!o || pub)
		return nf_json_document(o, JSON_INDENT(2));
	json_t *ov = json_object_get(o, "overlap_list");
	size_t i;
	json_t *e;
	/* Pairs in map order: the second (the later line) wins where the two
	 * overlap, unless a later line still covers it (device_overlaps). */
	json_array_foreach(ov, i, e)
		nf_json_put(e, "wins", json_deep_copy(json_object_get(e, "line_b")));
	nf_json_put(o, "overlap_rule", json_string("where map lines overlap on one chip and domain, the "
					   "later line in the file shows in devices/ (man "
					   "ninferfs.5)"));
	json_t *by_file = json_object_get(json_object_get(o, "parameter_bytes"), "by_file");
	for (size_t b = 0; b < p->memory.nblocks; b++) {
		int fi = p->memory.blocks[b].file_index;
		json_t *x = json_object_get(by_file, path_of(p, fi));
		if (x)
			nf_json_put(x, "uncovered_list", uncovered_list(p, fi));
	}
	nf_json_put(o, "device_overlaps", device_overlaps(p, imgs, n));
	return nf_json_document(o, JSON_INDENT(2));
}

/* ---- submodel metadata ---------------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
	return s ? nf_json_text(s) : json_null();
}

static json_t *buf_json(const struct cb_buf *x, bool pub, const json_t *expect)
{
	json_t *o = json_object();
	nf_json_put(o, "name", nf_json_text(x->name));
	nf_json_put(o, "shape", cb_json_dims(x->rank, x->dims));
	nf_json_put(o, "dtype", nf_json_text(x->dtype));
	nf_json_put(o, "dtype_bytes", x->dtype_bytes ? nf_json_u64(x->dtype_bytes) : json_null());
	uint64_t bytes;
	bool known = x->dtype_bytes && cb_shape_bytes(x->rank, x->dims, x->dtype_bytes, &bytes);
	nf_json_put(o, "bytes", nf_json_u64(x->size));
	nf_json_put(o, "size_ok", known ? json_boolean(bytes == x->size) : json_null());
	if (expect)
		nf_json_put(o, "input_shape", json_deep_copy(expect));
	if (!pub) {
		nf_json_put(o, "vaddr_ping", cb_json_hex(x->ping));
		nf_json_put(o, "vaddr_pong", cb_json_hex(x->pong));
	}
	nf_json_put(o, "line", nf_json_u64(x->line));
	return o;
}

char *cb_submodel_metadata_json(const struct cb_package *p, size_t si, bool pub)
{
	const struct cb_submodel *s = sub_at(p, si);
	if (!s)
		return NULL;
	const struct cb_submeta *m = &s->meta;
	json_t *o = json_object();
	if (!o)
		return NULL;
	nf_json_put(o, "file", str_or_null(path_of(p, s->meta_index)));
	nf_json_put(o, "model_arch", str_or_null(m->model_arch));
	nf_json_put(o, "smodel_type", str_or_null(m->smodel_type));
	nf_json_put(o, "n_batch", m->has_n_batch ? nf_json_u64(m->n_batch) : json_null());
	nf_json_put(o, "calc_mchip", str_or_null(m->calc_mchip));
	nf_json_put(o, "calc_utype", str_or_null(m->calc_utype));
	nf_json_put(o, "workload", m->has_workload ? nf_json_u64(m->workload) : json_null());
	nf_json_put(o, "ccu_stack_location", str_or_null(m->ccu_stack_location));
	json_t *lines = json_object();
	if (m->line_model_arch)
		nf_json_put(lines, "model_arch", nf_json_u64(m->line_model_arch));
	if (m->line_smodel_type)
		nf_json_put(lines, "smodel_type", nf_json_u64(m->line_smodel_type));
	if (m->line_n_batch)
		nf_json_put(lines, "n_batch", nf_json_u64(m->line_n_batch));
	nf_json_put(o, "lines", lines);
	json_t *decls = json_array();
	for (size_t i = 0; decls && i < m->ndecls; i++) {
		const struct cb_decl *d = &m->decls[i];
		json_t *e = json_object();
		nf_json_put(e, "file", nf_json_text(d->file));
		nf_json_put(e, "kind", json_string(d->elf ? "elf" : "command"));
		nf_json_put(e, "location", str_or_null(d->location));
		nf_json_put(e, "chip_mask", mask_json(d->mask));
		nf_json_put(e, "present", json_boolean(d->file_index >= 0));
		nf_json_put(e, "line", nf_json_u64(d->line));
		json_array_append_new(decls, e);
	}
	nf_json_put(o, "declarations", decls);
	json_t *icsr = json_array();
	for (size_t i = 0; icsr && i < m->nicsrs; i++) {
		json_t *e = json_object();
		nf_json_put(e, "name", nf_json_text(m->icsrs[i].name));
		if (!pub)
			nf_json_put(e, "offset", cb_json_hex(m->icsrs[i].offset));
		nf_json_put(e, "line", nf_json_u64(m->icsrs[i].line));
		json_array_append_new(icsr, e);
	}
	nf_json_put(o, "icsr", icsr);
	json_t *ib = json_array(), *ob = json_array();
	for (size_t i = 0; ib && ob && i < m->nbufs; i++)
		json_array_append_new(m->bufs[i].out ? ob : ib, buf_json(&m->bufs[i], pub, NULL));
	nf_json_put(o, "ibuf", ib);
	nf_json_put(o, "obuf", ob);
	return nf_json_document(o, JSON_INDENT(2));
}

/* one_model_cfg.<prefill|decode>.input_shape of the submodel. */
static const json_t *input_shapes(const struct cb_package *p, const struct cb_submodel *s)
{
	const json_t *omc = json_object_get(p->manifest, "one_model_cfg");
	const char *k = s->kind == CB_SUB_PREFILL ? "prefill" : "decode";
	return json_object_get(json_object_get(omc, k), "input_shape");
}

char *cb_submodel_io_json(const struct cb_package *p, size_t si, bool pub)
{
	const struct cb_submodel *s = sub_at(p, si);
	if (!s)
		return NULL;
	json_t *o = json_object();
	if (!o)
		return NULL;
	nf_json_put(o, "submodel", nf_json_text(s->dir));
	nf_json_put(o, "kind", json_string(s->kind == CB_SUB_PREFILL ? "prefill" : "decode"));
	nf_json_put(o, "file", str_or_null(path_of(p, s->meta_index)));
	const json_t *shapes = input_shapes(p, s);
	json_t *in = json_array(), *out = json_array();
	for (size_t i = 0; in && out && i < s->meta.nbufs; i++) {
		const struct cb_buf *x = &s->meta.bufs[i];
		const json_t *want = x->out ? NULL : json_object_get(shapes, x->name);
		json_array_append_new(x->out ? out : in, buf_json(x, pub, x->out ? NULL
							 : want ? want : json_null()));
	}
	nf_json_put(o, "inputs", in);
	nf_json_put(o, "outputs", out);
	return nf_json_document(o, JSON_INDENT(2));
}

/* ---- ops ------------------------------------------------------------------------ */

char *cb_submodel_ops_json(const struct cb_package *p, size_t si)
{
	const struct cb_submodel *s = sub_at(p, si);
	if (!s || !s->ops_json)
		return NULL;
	return dump_borrowed(s->ops_json);
}

char *cb_op_json(const struct cb_package *p, size_t si, size_t op)
{
	const struct cb_submodel *s = sub_at(p, si);
	if (!s || op >= s->nops || !s->ops_json)
		return NULL;
	return dump_borrowed(json_object_get(s->ops_json, s->ops[op].name));
}

char *cb_op_shapes(const struct cb_package *p, size_t si, size_t op)
{
	const struct cb_submodel *s = sub_at(p, si);
	if (!s || op >= s->nops)
		return NULL;
	const struct cb_op *x = &s->ops[op];
	json_t *o = json_object();
	for (size_t t = 0; o && t < x->ntensors; t++) {
		char k[32];
		snprintf(k, sizeof k, "%s_%" PRIu32, x->tensors[t].out ? "outs" : "args",
			 x->tensors[t].index);
		nf_json_put(o, k, cb_json_dims(x->tensors[t].rank, x->tensors[t].dims));
	}
	char *text = json_dumps(o, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(o);
	return text;
}

/* ---- commands and profparts ----------------------------------------------------------- */

char *cb_commands_doc_name(const struct cb_package *p, size_t si, size_t ci)
{
	const struct cb_submodel *s = sub_at(p, si);
	if (!s || ci >= s->ncommands)
		return NULL;
	const struct cb_commands *c = &s->commands[ci];
	char *name = NULL;
	if (asprintf(&name, "%s_chip%d_%s.json", c->engine == CB_ENGINE_PLD ? "pld" : "cpu", c->chip,
		     c->pong ? "pong" : "ping") < 0)
		return NULL;
	return name;
}

char *cb_commands_doc_json(const struct cb_package *p, size_t si, size_t ci)
{
	const struct cb_submodel *s = sub_at(p, si);
	if (!s || ci >= s->ncommands)
		return NULL;
	const struct cb_commands *c = &s->commands[ci];
	json_t *o = cb_commands_obj(p, c);
	if (!o)
		return NULL;
	/* the mount's document adds the binary dump beside the text one */
	bool counted = c->bin_index >= 0 && c->bin_count != UINT64_MAX;
	nf_json_put(o, "binary", str_or_null(path_of(p, c->bin_index)));
	nf_json_put(o, "binary_commands", counted ? nf_json_u64(c->bin_count) : json_null());
	return nf_json_document(o, JSON_INDENT(2));
}

char *cb_profparts_text(const struct cb_package *p, size_t si, size_t chip, size_t *len)
{
	const struct cb_submodel *s = sub_at(p, si);
	if (!s || chip >= s->nprofparts || s->profparts[chip].file_index < 0)
		return NULL;
	const struct cb_profparts *pp = &s->profparts[chip];
	size_t n = 0;
	for (size_t i = 0; i < pp->count; i++)
		n += strlen(pp->ops[i]) + 1;
	char *out = malloc(n + 1), *w = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < pp->count; i++) {
		size_t l = strlen(pp->ops[i]);
		memcpy(w, pp->ops[i], l);
		w[l] = '\n';
		w += l + 1;
	}
	*w = '\0';
	*len = n;
	return out;
}
