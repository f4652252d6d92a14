/* calbin/report_json.c — validation.json (seed §11) and memory.json.
 *
 * The seed's shape — schema, package, model, submodels with inputs and
 * outputs, memory, graph with op counts and a histogram, supply_chain,
 * findings, verdict — plus what issue 12 adds: tool, gates (per gate
 * passed / failed / not_run and counts; F with its reason and the
 * warnings a runtime report must carry forward), reproducible, and each
 * finding's gate, class and where {file, line, key}.
 *
 * The public variant (§11: "分享给业务/客户的净化版去掉 vaddr、源绝对路径和命令
 * 地址") drops every vaddr field, the overlap list, argv, and rewrites the
 * evidence: a 0x number becomes "0x?", a bare number of 9 or more digits
 * (an address written without 0x, quoted from a malformed line)
 * "<number>", and an absolute path (or one that climbs out with "../")
 * "<path>". */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nf_version.h"
#include "calbin/internal.h"

/* Reproducible: a readable package with a manifest (the supply chain is
 * declared there) and no BLOCKED_REPRODUCIBILITY finding (§10). */
bool cb_reproducible(const struct cb_package *p, const struct nf_report *r)
{
	return p && p->readable && p->manifest &&
	       !nf_report_count_class(r, NF_CLASS_BLOCKED_REPRODUCIBILITY);
}

/* ---- sanitizing --------------------------------------------------------------- */

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* An absolute path, or one that climbs out ("../"), starts here. */
static bool path_start(const char *s, size_t i)
{
	bool up = s[i] == '.' && s[i + 1] == '.' && s[i + 2] == '/';
	if (!up && (s[i] != '/' || !s[i + 1] || s[i + 1] == ' '))
		return false;
	/* "a/../b" inside a relative path stays: only a path that starts
	 * with "../" climbs out. */
	return i == 0 || s[i - 1] == ' ' || s[i - 1] == '\'' || s[i - 1] == '"' || s[i - 1] == '(' ||
	       s[i - 1] == '=' || s[i - 1] == ':';
}

static bool is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* A run of hex digits at s[i] that could be an address written without
 * 0x (a malformed line quoted in evidence): 9 or more digits, standing
 * alone, and not a 64-digit SHA-256.  Its length, or 0. */
static size_t bare_number(const char *s, size_t i)
{
	if (i > 0 && is_alnum(s[i - 1]))
		return 0;
	size_t j = i;
	while (is_hex(s[j]))
		j++;
	if (is_alnum(s[j]) || j - i < 9 || j - i == 64)
		return 0;
	return j - i;
}

/* evidence without addresses and absolute paths (malloc'd). */
char *cb_sanitize(const char *s)
{
	size_t n = strlen(s), k = 0;
	char *out = malloc(n * 2 + 8);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t bare = bare_number(s, i);
		if (bare) {
			i += bare;
			memcpy(out + k, "<number>", 8);
			k += 8;
		} else if (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X') && is_hex(s[i + 2]) &&
		    (i == 0 || !is_hex(s[i - 1]))) {
			i += 2;
			while (is_hex(s[i]))
				i++;
			memcpy(out + k, "0x?", 3);
			k += 3;
		} else if (path_start(s, i) && (i == 0 || s[i - 1] != '/')) {
			while (s[i] && s[i] != ' ' && s[i] != '\'' && s[i] != '"' && s[i] != ')' &&
			       s[i] != ',')
				i++;
			memcpy(out + k, "<path>", 6);
			k += 6;
		} else {
			out[k++] = s[i++];
		}
	}
	out[k] = '\0';
	return out;
}

/* ---- parts ---------------------------------------------------------------------- */

static const char *gate_name(char g)
{
	switch (g) {
	case 'A': return "A";
	case 'B': return "B";
	case 'C': return "C";
	case 'D': return "D";
	case 'E': return "E";
	case 'F': return "F";
	case 'S': return "service";
	}
	return NULL;
}

static json_t *findings_json(const struct nf_report *r, bool pub)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < r->count; i++) {
		const struct nf_finding *f = &r->items[i];
		json_t *o = json_object(), *w = json_object();
		if (!o || !w) {
			json_decref(o);
			json_decref(w);
			break;
		}
		const char *g = gate_name(f->gate);
		nf_json_put(o, "gate", g ? json_string(g) : json_null());
		nf_json_put(o, "code", json_string(f->code));
		nf_json_put(o, "severity", json_string(nf_severity_name(f->severity)));
		const char *cls = nf_class_name(f->klass);
		nf_json_put(o, "class", cls ? json_string(cls) : json_null());
		nf_json_put(w, "file", nf_json_text(f->file));
		nf_json_put(w, "line", f->line ? nf_json_u64(f->line) : json_null());
		nf_json_put(w, "key", nf_json_text(f->key));
		nf_json_put(o, "where", w);
		if (pub) {
			char *s = cb_sanitize(f->evidence ? f->evidence : "");
			nf_json_put(o, "evidence", nf_json_text(s));
			free(s);
		} else {
			nf_json_put(o, "evidence", nf_json_text(f->evidence));
		}
		json_array_append_new(a, o);
	}
	if (r->oom && a) {
		json_t *o = json_object();
		nf_json_put(o, "gate", json_null());
		nf_json_put(o, "code", json_string("OUT_OF_MEMORY"));
		nf_json_put(o, "severity", json_string("error"));
		nf_json_put(o, "class", json_string("ERROR"));
		json_t *w = json_object();
		nf_json_put(w, "file", json_null());
		nf_json_put(w, "line", json_null());
		nf_json_put(w, "key", json_null());
		nf_json_put(o, "where", w);
		nf_json_put(o, "evidence", json_string("some findings could not be recorded"));
		json_array_append_new(a, o);
	}
	return a;
}

static const char *gate_status(const struct cb_package *p, const struct nf_report *r, char g)
{
	if (g == 'F')
		return "not_run";
	if (!p || !p->readable)
		return g == 'A' ? "failed" : "not_run";
	return nf_report_count_gate(r, g, NF_SEV_ERROR) ? "failed" : "passed";
}

static json_t *gates_json(const struct cb_package *p, const struct nf_report *r)
{
	json_t *o = json_object();
	static const char order[] = "ABCDESF";
	for (const char *g = order; o && *g; g++) {
		json_t *x = json_object();
		nf_json_put(x, "status", json_string(gate_status(p, r, *g)));
		nf_json_put(x, "errors", nf_json_u64(nf_report_count_gate(r, *g, NF_SEV_ERROR)));
		nf_json_put(x, "warnings", nf_json_u64(nf_report_count_gate(r, *g, NF_SEV_WARNING)));
		nf_json_put(x, "infos", nf_json_u64(nf_report_count_gate(r, *g, NF_SEV_INFO)));
		if (*g == 'F') {
			nf_json_put(x, "reason", json_string("a static tool never runs the device: CreateCalbin -> "
						     "enumerate -> configure -> golden belong to an "
						     "independent runner (seed §9 Gate F)"));
			json_t *cf = json_array();
			for (size_t i = 0; cf && i < r->count; i++) {
				const struct nf_finding *f = &r->items[i];
				if (f->severity != NF_SEV_WARNING || !f->gate)
					continue;
				json_t *e = json_object();
				nf_json_put(e, "code", json_string(f->code));
				const char *cls = nf_class_name(f->klass);
				nf_json_put(e, "class", cls ? json_string(cls) : json_null());
				nf_json_put(e, "file", nf_json_text(f->file));
				json_array_append_new(cf, e);
			}
			nf_json_put(x, "carry_forward", cf);
		}
		nf_json_put(o, gate_name(*g), x);
	}
	return o;
}

static json_t *package_json(const struct cb_package *p)
{
	json_t *o = json_object();
	nf_json_put(o, "name", nf_json_text(p->name));
	nf_json_put(o, "sha256_manifest", p->sums_sha256[0] ? json_string(p->sums_sha256) : json_null());
	size_t files = 0, by[CB_KIND_COUNT] = {0}, proven = 0, regular = 0;
	uint64_t bytes = 0;
	json_t *list = json_array();
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct cb_file *f = &p->files[i];
		by[f->kind]++;
		if (S_ISDIR(f->type))
			continue;
		files++;
		bytes += f->size;
		regular += S_ISREG(f->type) && !f->escapes && p->sums_index != (int)i;
		proven += f->hash == CB_HASH_OK;
		json_t *e = json_object();
		nf_json_put(e, "path", nf_json_text(f->path));
		nf_json_put(e, "kind", json_string(cb_kind_name(f->kind)));
		nf_json_put(e, "bytes", nf_json_u64(f->size));
		nf_json_put(e, "sha256", f->sha256[0] ? json_string(f->sha256) : json_null());
		static const char *const hs[] = {"not_verified", "verified", "mismatch", "computed",
						 "unreadable"};
		nf_json_put(e, "integrity", json_string(hs[f->hash]));
		if (f->escapes)
			nf_json_put(e, "not_followed", json_true());
		json_array_append_new(list, e);
	}
	nf_json_put(o, "files", nf_json_u64(files));
	nf_json_put(o, "bytes", nf_json_u64(bytes));
	json_t *counts = json_object();
	for (int k = 0; k < CB_KIND_COUNT; k++)
		if (by[k])
			nf_json_put(counts, cb_kind_name((enum cb_kind)k), nf_json_u64(by[k]));
	nf_json_put(o, "counts", counts);
	nf_json_put(o, "hash_mode", json_string(p->hash_all ? "hash" : "fast"));
	nf_json_put(o, "integrity", json_string(p->sums_index < 0 ? "not_proven"
					: proven == regular ? "verified" : "partial"));
	nf_json_put(o, "file_list", list);
	return o;
}

static const json_t *model_info(const struct cb_package *p)
{
	const json_t *omc = json_object_get(p->manifest, "one_model_cfg");
	const json_t *mi = json_object_get(json_object_get(omc, "prefill"), "model_info");
	return mi ? mi : json_object_get(json_object_get(omc, "decode"), "model_info");
}

static json_t *model_json(const struct cb_package *p)
{
	json_t *o = json_object();
	const json_t *mi = model_info(p);
	const char *name = cb_json_str(p->manifest, "model_name");
	nf_json_put(o, "name", nf_json_text(name ? name : p->name));
	nf_json_put(o, "arch", nf_json_text(p->top.model_arch));
	nf_json_put(o, "type", nf_json_text(p->top.model_type));
	nf_json_put(o, "batch", json_deep_copy(json_object_get(mi, "batch_num")));
	nf_json_put(o, "max_seq", json_deep_copy(json_object_get(p->manifest, "seq_len")));
	nf_json_put(o, "chips", p->chips ? nf_json_u64(p->chips) : json_null());
	nf_json_put(o, "cores_per_chip", p->cores ? nf_json_u64(p->cores) : json_null());
	nf_json_put(o, "layers", json_deep_copy(json_object_get(p->hf_config, "num_hidden_layers")));
	nf_json_put(o, "q_heads", json_deep_copy(json_object_get(mi, "q0_head_num")));
	nf_json_put(o, "kv_heads", json_deep_copy(json_object_get(mi, "k0_head_num")));
	nf_json_put(o, "head_dim", json_deep_copy(json_object_get(mi, "k0_head_dim")));
	nf_json_put(o, "vocab", json_deep_copy(json_object_get(p->hf_config, "vocab_size")));
	return o;
}

static char *op_kind(const char *name)
{
	size_t n = strlen(name);
	size_t k = n;
	while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9')
		k--;
	if (k < n && k > 0 && name[k - 1] == '_')
		n = k - 1;
	return strndup(name, n);
}

static json_t *histogram(const struct cb_submodel *s)
{
	json_t *h = json_object();
	for (size_t i = 0; h && i < s->nops; i++) {
		char *k = op_kind(s->ops[i].name);
		if (!k)
			continue;
		json_t *v = json_object_get(h, k);
		nf_json_put(h, k, json_integer(v ? json_integer_value(v) + 1 : 1));
		free(k);
	}
	return h;
}

static json_t *bufs_json(const struct cb_submodel *s, bool out, bool pub)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < s->meta.nbufs; i++) {
		const struct cb_buf *x = &s->meta.bufs[i];
		if (x->out != out)
			continue;
		json_t *o = json_object();
		nf_json_put(o, "name", nf_json_text(x->name));
		nf_json_put(o, "shape", cb_json_dims(x->rank, x->dims));
		nf_json_put(o, "dtype", nf_json_text(x->dtype));
		nf_json_put(o, "bytes", nf_json_u64(x->size));
		if (!pub) {
			nf_json_put(o, "vaddr_ping", cb_json_hex(x->ping));
			nf_json_put(o, "vaddr_pong", cb_json_hex(x->pong));
		}
		json_array_append_new(a, o);
	}
	return a;
}

json_t *cb_commands_obj(const struct cb_package *p, const struct cb_commands *c)
{
	const struct cb_file *f = cb_file_at(p, c->file_index);
	json_t *o = json_object(), *t = json_object();
	if (!o || !t) {
		json_decref(o);
		json_decref(t);
		return NULL;
	}
	nf_json_put(o, "file", f ? nf_json_text(f->path) : json_null());
	nf_json_put(o, "engine", json_string(c->engine == CB_ENGINE_PLD ? "pld" : "cpu"));
	nf_json_put(o, "chip", json_integer(c->chip));
	nf_json_put(o, "buffer", json_string(c->pong ? "pong" : "ping"));
	nf_json_put(o, "parsed", json_boolean(c->parsed));
	nf_json_put(o, "commands", nf_json_u64(c->count));
	nf_json_put(o, "data_bytes", nf_json_u64(c->data_bytes));
	for (size_t k = 0; k < c->ntypes; k++) {
		json_t *x = json_object();
		nf_json_put(x, "commands", nf_json_u64(c->types[k].count));
		nf_json_put(x, "data_bytes", nf_json_u64(c->types[k].data_bytes));
		nf_json_put(t, c->types[k].type, x);
	}
	nf_json_put(o, "by_type", t);
	return o;
}

static json_t *commands_json(const struct cb_package *p, const struct cb_submodel *s)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < s->ncommands; i++)
		json_array_append_new(a, cb_commands_obj(p, &s->commands[i]));
	return a;
}

static json_t *submodels_json(const struct cb_package *p, bool pub)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < p->nsubmodels; i++) {
		const struct cb_submodel *s = &p->submodels[i];
		json_t *o = json_object();
		nf_json_put(o, "name", nf_json_text(s->dir));
		nf_json_put(o, "kind", json_string(s->kind == CB_SUB_PREFILL ? "prefill" : "decode"));
		nf_json_put(o, "smodel_type", nf_json_text(s->meta.smodel_type));
		nf_json_put(o, "inputs", bufs_json(s, false, pub));
		nf_json_put(o, "outputs", bufs_json(s, true, pub));
		nf_json_put(o, "ops", nf_json_u64(s->nops));
		json_t *pp = json_object();
		bool refused = false;
		for (size_t c = 0; pp && c < s->nprofparts; c++) {
			char k[32];
			snprintf(k, sizeof k, "chip%zu", c);
			nf_json_put(pp, k, s->profparts[c].file_index >= 0 ? nf_json_u64(s->profparts[c].count)
								  : json_null());
			refused |= s->profparts[c].refused;
		}
		nf_json_put(o, "profparts", pp);
		nf_json_put(o, "partition_report", json_string(refused ? "refused" : "ok"));
		nf_json_put(o, "graph_layers", nf_json_u64(s->graph_layers));
		nf_json_put(o, "address_union_bytes", s->union_valid ? nf_json_u64(s->union_bytes) : json_null());
		nf_json_put(o, "commands", commands_json(p, s));
		json_array_append_new(a, o);
	}
	return a;
}

json_t *cb_memory_obj(const struct cb_package *p, bool pub)
{
	const struct cb_memory *m = &p->memory;
	json_t *o = json_object();
	json_t *pb = json_object(), *chip = json_object(), *file = json_object();
	for (unsigned c = 0; c < p->chips && c < CB_MAX_CHIPS; c++) {
		char k[24];
		snprintf(k, sizeof k, "chip%u", c);
		json_t *x = json_object();
		nf_json_put(x, "total", nf_json_u64(m->param_bytes_by_chip[c]));
		for (int d = 0; d < CB_DOMAIN_COUNT; d++)
			nf_json_put(x, cb_domain_name((enum cb_domain)d),
				    nf_json_u64(m->param_bytes_by_chip_domain[c][d]));
		nf_json_put(chip, k, x);
	}
	uint64_t total = 0;
	for (size_t i = 0; i < m->nblocks; i++) {
		const struct cb_block_cover *bc = &m->blocks[i];
		json_t *x = json_object();
		nf_json_put(x, "file_bytes", nf_json_u64(bc->file_bytes));
		nf_json_put(x, "mapped_bytes", nf_json_u64(bc->mapped_bytes));
		nf_json_put(x, "uncovered_bytes", nf_json_u64(bc->uncovered_bytes));
		nf_json_put(x, "uncovered_ranges", nf_json_u64(bc->uncovered_ranges));
		nf_json_put(x, "duplicate_bytes", nf_json_u64(bc->duplicate_bytes));
		nf_json_put(x, "duplicate_ranges", nf_json_u64(bc->duplicate_ranges));
		nf_json_put(file, p->files[bc->file_index].path, x);
		total += bc->file_bytes;
	}
	nf_json_put(pb, "by_chip", chip);
	nf_json_put(pb, "by_file", file);
	nf_json_put(pb, "total_file_bytes", nf_json_u64(total));
	nf_json_put(o, "parameter_bytes", pb);
	nf_json_put(o, "kv_bytes", m->kv_valid ? nf_json_u64(m->kv_bytes) : json_null());
	bool per_chip = m->kv_valid && m->kv_bytes_per_chip;
	nf_json_put(o, "kv_bytes_per_chip", per_chip ? nf_json_u64(m->kv_bytes_per_chip) : json_null());
	if (m->kv_valid) {
		json_t *kv = json_object();
		nf_json_put(kv, "formula",
			    json_string("layers * kv_heads * 2 * head_dim * max_seq * dtype_bytes"));
		nf_json_put(kv, "layers", nf_json_u64(m->kv_layers));
		nf_json_put(kv, "kv_heads", nf_json_u64(m->kv_heads));
		nf_json_put(kv, "head_dim", nf_json_u64(m->kv_head_dim));
		nf_json_put(kv, "max_seq", nf_json_u64(m->kv_max_seq));
		nf_json_put(kv, "dtype_bytes", nf_json_u64(m->kv_dtype_bytes));
		nf_json_put(o, "kv", kv);
	}
	json_t *res = json_object();
	for (int d = 0; d < CB_DOMAIN_COUNT; d++) {
		const struct cb_reservation *r = &p->reservations[d];
		if (!r->present)
			continue;
		json_t *x = json_object();
		if (!pub)
			nf_json_put(x, "vaddr", cb_json_hex(r->vaddr));
		nf_json_put(x, "size", nf_json_u64(r->size));
		nf_json_put(res, cb_domain_name((enum cb_domain)d), x);
	}
	nf_json_put(o, "reservations", res);
	nf_json_put(o, "reservations_scope", json_string("per chip: the same logical ranges on every chip "
						 "(seed §4.2: a structural inference the vendor must "
						 "confirm)"));
	json_t *u = json_object();
	for (size_t i = 0; i < p->nsubmodels; i++)
		nf_json_put(u, p->submodels[i].kind == CB_SUB_PREFILL ? "prefill" : "decode",
		    p->submodels[i].union_valid ? nf_json_u64(p->submodels[i].union_bytes) : json_null());
	nf_json_put(o, "address_union", u);
	nf_json_put(o, "address_union_note", json_string("static address coverage of the op I/O YAML, not "
						 "peak live memory (seed §6)"));
	nf_json_put(o, "overlaps", nf_json_u64(m->noverlaps));
	if (!pub) {
		json_t *ov = json_array();
		for (size_t i = 0; ov && i < m->noverlaps; i++) {
			const struct cb_overlap *x = &m->overlaps[i];
			json_t *e = json_object();
			nf_json_put(e, "chip", nf_json_u64(x->chip));
			nf_json_put(e, "domain", json_string(cb_domain_name(x->domain)));
			nf_json_put(e, "line_a", nf_json_u64(p->maps[x->map_a].line));
			nf_json_put(e, "line_b", nf_json_u64(p->maps[x->map_b].line));
			nf_json_put(e, "vaddr", cb_json_hex(x->vaddr));
			nf_json_put(e, "bytes", nf_json_u64(x->bytes));
			json_array_append_new(ov, e);
		}
		nf_json_put(o, "overlap_list", ov);
	}
	nf_json_put(o, "capacity_report", json_string(m->capacity_refused ? "refused" : "ok"));
	nf_json_put(o, "device_memory_required_mb",
		    p->top.has_mem_required ? nf_json_u64(p->top.mem_required_mb) : json_null());
	return o;
}

static json_t *supply_json(const struct cb_package *p)
{
	const json_t *root = p->manifest;
	json_t *o = json_object();
	const json_t *h = json_object_get(root, "onnx_hash");
	nf_json_put(o, "onnx_hash", json_is_array(h) ? json_deep_copy(h) : json_array());
	bool delivered = false;
	for (size_t i = 0; i < p->nfiles; i++)
		delivered |= p->files[i].kind == CB_KIND_ONNX;
	nf_json_put(o, "onnx_delivered", json_boolean(delivered));
	json_t *c = json_object();
	const json_t *g = json_object_get(root, "git_commit_id");
	nf_json_put(c, "calcc", json_deep_copy(json_object_get(g, "calcc")));
	nf_json_put(c, "lib/tvm", json_deep_copy(json_object_get(g, "lib/tvm")));
	nf_json_put(o, "compiler_commits", c);
	const json_t *sc = json_object_get(root, "supply_chain");
	static const char *const keys[] = {
		"compiler_oci_digest", "compiler_image", "quant_config_sha256",
		"calibration_manifest_sha256", "oplib_version", "calbin_schema_version",
		"runtime_compat",
	};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		nf_json_put(o, keys[i], json_deep_copy(json_object_get(sc, keys[i])));
	nf_json_put(o, "calcc_ver", nf_json_text(p->top.calcc_ver));
	return o;
}

static json_t *graph_json(const struct cb_package *p)
{
	json_t *o = json_object(), *h = json_object();
	for (size_t i = 0; i < p->nsubmodels; i++) {
		const struct cb_submodel *s = &p->submodels[i];
		const char *k = s->kind == CB_SUB_PREFILL ? "prefill" : "decode";
		char key[32];
		snprintf(key, sizeof key, "%s_ops", k);
		if (!json_object_get(o, key)) {
			nf_json_put(o, key, s->ops_json ? nf_json_u64(s->nops) : json_null());
			nf_json_put(h, k, histogram(s));
		}
	}
	nf_json_put(o, "op_histogram", h);
	return o;
}

char *cb_report_json(const struct cb_package *p, const struct nf_report *r, bool pub,
		     const char *tool, int argc, char *const *argv)
{
	json_t *doc = json_object();
	if (!doc)
		return NULL;
	nf_json_put(doc, "schema", json_string("calculet-package-validation/v1"));
	json_t *t = json_object();
	nf_json_put(t, "name", json_string(tool ? tool : "calbin-check"));
	nf_json_put(t, "version", json_string(NF_VERSION));
	if (!pub && argv) {
		json_t *a = json_array();
		for (int i = 0; a && i < argc; i++)
			json_array_append_new(a, nf_json_text(argv[i]));
		nf_json_put(t, "argv", a);
	}
	nf_json_put(t, "exit_status", json_integer(nf_report_exit_status(r)));
	nf_json_put(t, "public", json_boolean(pub));
	nf_json_put(doc, "tool", t);
	if (p) {
		nf_json_put(doc, "package", package_json(p));
		nf_json_put(doc, "model", model_json(p));
		nf_json_put(doc, "submodels", submodels_json(p, pub));
		nf_json_put(doc, "memory", cb_memory_obj(p, pub));
		nf_json_put(doc, "graph", graph_json(p));
		nf_json_put(doc, "supply_chain", supply_json(p));
	}
	nf_json_put(doc, "findings", findings_json(r, pub));
	nf_json_put(doc, "gates", gates_json(p, r));
	nf_json_put(doc, "reproducible", json_boolean(cb_reproducible(p, r)));
	nf_json_put(doc, "verdict", json_string(nf_report_verdict(r)));
	return nf_json_document(doc, JSON_INDENT(2));
}

char *cb_memory_json(const struct cb_package *p)
{
	return p ? nf_json_document(cb_memory_obj(p, false), JSON_INDENT(2)) : NULL;
}

/* ---- text ---------------------------------------------------------------------------- */

void cb_report_print_text(FILE *out, const struct cb_package *p, const struct nf_report *r,
			  bool pub)
{
	for (size_t i = 0; i < r->count; i++) {
		const struct nf_finding *f = &r->items[i];
		const char *cls = nf_class_name(f->klass);
		char *ev = pub ? cb_sanitize(f->evidence ? f->evidence : "") : NULL;
		fprintf(out, "%-7s %s  %s [%s%s%s]: %s\n", nf_severity_name(f->severity), f->code,
			f->where, gate_name(f->gate) ? gate_name(f->gate) : "-", cls ? " " : "",
			cls ? cls : "", ev ? ev : f->evidence);
		free(ev);
	}
	if (r->oom)
		fprintf(out, "error   OUT_OF_MEMORY  report: some findings could not be recorded\n");
	fprintf(out, "gates:");
	static const char order[] = "ABCDESF";
	for (const char *g = order; *g; g++) {
		size_t e = nf_report_count_gate(r, *g, NF_SEV_ERROR);
		size_t w = nf_report_count_gate(r, *g, NF_SEV_WARNING);
		fprintf(out, " %s %s", gate_name(*g), gate_status(p, r, *g));
		if (e || w)
			fprintf(out, " (%zu error%s, %zu warning%s)", e, e == 1 ? "" : "s", w,
				w == 1 ? "" : "s");
		fputc(*(g + 1) ? ',' : '\n', out);
	}
	size_t errors = nf_report_count(r, NF_SEV_ERROR, -1);
	size_t warnings = nf_report_count(r, NF_SEV_WARNING, -1);
	bool repro = cb_reproducible(p, r);
	if (p && p->readable) {
		size_t files = 0;
		for (size_t i = 0; i < p->nfiles; i++)
			files += !S_ISDIR(p->files[i].type);
		fprintf(out, "%s: %zu files, %u chip%s", pub ? p->name : p->root_path, files, p->chips,
			p->chips == 1 ? "" : "s");
		for (size_t i = 0; i < p->nsubmodels; i++)
			fprintf(out, ", %s %zu ops", p->submodels[i].kind == CB_SUB_PREFILL ? "prefill"
										   : "decode",
				p->submodels[i].nops);
		if (p->memory.kv_valid)
			fprintf(out, ", KV %" PRIu64 " bytes", p->memory.kv_bytes);
		fprintf(out, "; %zu error%s, %zu warning%s; reproducible: %s; %s\n", errors,
			errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s", repro ? "yes" : "no",
			nf_report_verdict(r));
	} else {
		fprintf(out, "%s: not readable as a package; %zu error%s: %s\n",
			p ? (pub ? p->name : p->root_path) : "?", errors, errors == 1 ? "" : "s", nf_report_verdict(r));
	}
}
