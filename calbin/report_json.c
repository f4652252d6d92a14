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

static json_t *u64j(uint64_t v)
{
	return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

static void put(json_t *o, const char *k, json_t *v)
{
	json_object_set_new(o, k, v ? v : json_null());
}

static json_t *hexj(uint64_t v)
{
	char s[24];
	snprintf(s, sizeof s, "0x%" PRIx64, v);
	return json_string(s);
}

static json_t *dims_json(uint32_t rank, const uint64_t *dims)
{
	json_t *a = json_array();
	for (uint32_t i = 0; a && i < rank; i++)
		json_array_append_new(a, u64j(dims[i]));
	return a;
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
		put(o, "gate", g ? json_string(g) : json_null());
		put(o, "code", json_string(f->code));
		put(o, "severity", json_string(nf_severity_name(f->severity)));
		const char *cls = nf_class_name(f->klass);
		put(o, "class", cls ? json_string(cls) : json_null());
		put(w, "file", nf_json_text(f->file));
		put(w, "line", f->line ? u64j(f->line) : json_null());
		put(w, "key", nf_json_text(f->key));
		put(o, "where", w);
		if (pub) {
			char *s = cb_sanitize(f->evidence ? f->evidence : "");
			put(o, "evidence", nf_json_text(s));
			free(s);
		} else {
			put(o, "evidence", nf_json_text(f->evidence));
		}
		json_array_append_new(a, o);
	}
	if (r->oom && a) {
		json_t *o = json_object();
		put(o, "gate", json_null());
		put(o, "code", json_string("OUT_OF_MEMORY"));
		put(o, "severity", json_string("error"));
		put(o, "class", json_string("ERROR"));
		json_t *w = json_object();
		put(w, "file", json_null());
		put(w, "line", json_null());
		put(w, "key", json_null());
		put(o, "where", w);
		put(o, "evidence", json_string("some findings could not be recorded"));
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
		put(x, "status", json_string(gate_status(p, r, *g)));
		put(x, "errors", u64j(nf_report_count_gate(r, *g, NF_SEV_ERROR)));
		put(x, "warnings", u64j(nf_report_count_gate(r, *g, NF_SEV_WARNING)));
		put(x, "infos", u64j(nf_report_count_gate(r, *g, NF_SEV_INFO)));
		if (*g == 'F') {
			put(x, "reason", json_string("a static tool never runs the device: CreateCalbin -> "
						     "enumerate -> configure -> golden belong to an "
						     "independent runner (seed §9 Gate F)"));
			json_t *cf = json_array();
			for (size_t i = 0; cf && i < r->count; i++) {
				const struct nf_finding *f = &r->items[i];
				if (f->severity != NF_SEV_WARNING || !f->gate)
					continue;
				json_t *e = json_object();
				put(e, "code", json_string(f->code));
				const char *cls = nf_class_name(f->klass);
				put(e, "class", cls ? json_string(cls) : json_null());
				put(e, "file", nf_json_text(f->file));
				json_array_append_new(cf, e);
			}
			put(x, "carry_forward", cf);
		}
		put(o, gate_name(*g), x);
	}
	return o;
}

static json_t *package_json(const struct cb_package *p)
{
	json_t *o = json_object();
	put(o, "name", nf_json_text(p->name));
	put(o, "sha256_manifest", p->sums_sha256[0] ? json_string(p->sums_sha256) : json_null());
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
		put(e, "path", nf_json_text(f->path));
		put(e, "kind", json_string(cb_kind_name(f->kind)));
		put(e, "bytes", u64j(f->size));
		put(e, "sha256", f->sha256[0] ? json_string(f->sha256) : json_null());
		static const char *const hs[] = {"not_verified", "verified", "mismatch", "computed",
						 "unreadable"};
		put(e, "integrity", json_string(hs[f->hash]));
		if (f->escapes)
			put(e, "not_followed", json_true());
		json_array_append_new(list, e);
	}
	put(o, "files", u64j(files));
	put(o, "bytes", u64j(bytes));
	json_t *counts = json_object();
	for (int k = 0; k < CB_KIND_COUNT; k++)
		if (by[k])
			put(counts, cb_kind_name((enum cb_kind)k), u64j(by[k]));
	put(o, "counts", counts);
	put(o, "hash_mode", json_string(p->hash_all ? "hash" : "fast"));
	put(o, "integrity", json_string(p->sums_index < 0 ? "not_proven"
					: proven == regular ? "verified" : "partial"));
	put(o, "file_list", list);
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
	put(o, "name", nf_json_text(name ? name : p->name));
	put(o, "arch", nf_json_text(p->top.model_arch));
	put(o, "type", nf_json_text(p->top.model_type));
	put(o, "batch", json_deep_copy(json_object_get(mi, "batch_num")));
	put(o, "max_seq", json_deep_copy(json_object_get(p->manifest, "seq_len")));
	put(o, "chips", p->chips ? u64j(p->chips) : json_null());
	put(o, "cores_per_chip", p->cores ? u64j(p->cores) : json_null());
	put(o, "layers", json_deep_copy(json_object_get(p->hf_config, "num_hidden_layers")));
	put(o, "q_heads", json_deep_copy(json_object_get(mi, "q0_head_num")));
	put(o, "kv_heads", json_deep_copy(json_object_get(mi, "k0_head_num")));
	put(o, "head_dim", json_deep_copy(json_object_get(mi, "k0_head_dim")));
	put(o, "vocab", json_deep_copy(json_object_get(p->hf_config, "vocab_size")));
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
		put(h, k, json_integer(v ? json_integer_value(v) + 1 : 1));
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
		put(o, "name", nf_json_text(x->name));
		put(o, "shape", dims_json(x->rank, x->dims));
		put(o, "dtype", nf_json_text(x->dtype));
		put(o, "bytes", u64j(x->size));
		if (!pub) {
			put(o, "vaddr_ping", hexj(x->ping));
			put(o, "vaddr_pong", hexj(x->pong));
		}
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *commands_json(const struct cb_package *p, const struct cb_submodel *s)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < s->ncommands; i++) {
		const struct cb_commands *c = &s->commands[i];
		json_t *o = json_object(), *t = json_object();
		put(o, "file", nf_json_text(p->files[c->file_index].path));
		put(o, "engine", json_string(c->engine == CB_ENGINE_PLD ? "pld" : "cpu"));
		put(o, "chip", json_integer(c->chip));
		put(o, "buffer", json_string(c->pong ? "pong" : "ping"));
		put(o, "parsed", json_boolean(c->parsed));
		put(o, "commands", u64j(c->count));
		put(o, "data_bytes", u64j(c->data_bytes));
		for (size_t k = 0; t && k < c->ntypes; k++) {
			json_t *x = json_object();
			put(x, "commands", u64j(c->types[k].count));
			put(x, "data_bytes", u64j(c->types[k].data_bytes));
			put(t, c->types[k].type, x);
		}
		put(o, "by_type", t);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *submodels_json(const struct cb_package *p, bool pub)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < p->nsubmodels; i++) {
		const struct cb_submodel *s = &p->submodels[i];
		json_t *o = json_object();
		put(o, "name", nf_json_text(s->dir));
		put(o, "kind", json_string(s->kind == CB_SUB_PREFILL ? "prefill" : "decode"));
		put(o, "smodel_type", nf_json_text(s->meta.smodel_type));
		put(o, "inputs", bufs_json(s, false, pub));
		put(o, "outputs", bufs_json(s, true, pub));
		put(o, "ops", u64j(s->nops));
		json_t *pp = json_object();
		bool refused = false;
		for (size_t c = 0; pp && c < s->nprofparts; c++) {
			char k[32];
			snprintf(k, sizeof k, "chip%zu", c);
			put(pp, k, s->profparts[c].file_index >= 0 ? u64j(s->profparts[c].count)
								  : json_null());
			refused |= s->profparts[c].refused;
		}
		put(o, "profparts", pp);
		put(o, "partition_report", json_string(refused ? "refused" : "ok"));
		put(o, "graph_layers", u64j(s->graph_layers));
		put(o, "address_union_bytes", s->union_valid ? u64j(s->union_bytes) : json_null());
		put(o, "commands", commands_json(p, s));
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
		put(x, "total", u64j(m->param_bytes_by_chip[c]));
		for (int d = 0; d < CB_DOMAIN_COUNT; d++)
			put(x, cb_domain_name((enum cb_domain)d), u64j(m->param_bytes_by_chip_domain[c][d]));
		put(chip, k, x);
	}
	uint64_t total = 0;
	for (size_t i = 0; i < m->nblocks; i++) {
		const struct cb_block_cover *bc = &m->blocks[i];
		json_t *x = json_object();
		put(x, "file_bytes", u64j(bc->file_bytes));
		put(x, "mapped_bytes", u64j(bc->mapped_bytes));
		put(x, "uncovered_bytes", u64j(bc->uncovered_bytes));
		put(x, "uncovered_ranges", u64j(bc->uncovered_ranges));
		put(x, "duplicate_bytes", u64j(bc->duplicate_bytes));
		put(x, "duplicate_ranges", u64j(bc->duplicate_ranges));
		put(file, p->files[bc->file_index].path, x);
		total += bc->file_bytes;
	}
	put(pb, "by_chip", chip);
	put(pb, "by_file", file);
	put(pb, "total_file_bytes", u64j(total));
	put(o, "parameter_bytes", pb);
	put(o, "kv_bytes", m->kv_valid ? u64j(m->kv_bytes) : json_null());
	put(o, "kv_bytes_per_chip", m->kv_valid && m->kv_bytes_per_chip ? u64j(m->kv_bytes_per_chip)
								       : json_null());
	if (m->kv_valid) {
		json_t *kv = json_object();
		put(kv, "formula", json_string("layers * kv_heads * 2 * head_dim * max_seq * dtype_bytes"));
		put(kv, "layers", u64j(m->kv_layers));
		put(kv, "kv_heads", u64j(m->kv_heads));
		put(kv, "head_dim", u64j(m->kv_head_dim));
		put(kv, "max_seq", u64j(m->kv_max_seq));
		put(kv, "dtype_bytes", u64j(m->kv_dtype_bytes));
		put(o, "kv", kv);
	}
	json_t *res = json_object();
	for (int d = 0; d < CB_DOMAIN_COUNT; d++) {
		const struct cb_reservation *r = &p->reservations[d];
		if (!r->present)
			continue;
		json_t *x = json_object();
		if (!pub)
			put(x, "vaddr", hexj(r->vaddr));
		put(x, "size", u64j(r->size));
		put(res, cb_domain_name((enum cb_domain)d), x);
	}
	put(o, "reservations", res);
	put(o, "reservations_scope", json_string("per chip: the same logical ranges on every chip "
						 "(seed §4.2: a structural inference the vendor must "
						 "confirm)"));
	json_t *u = json_object();
	for (size_t i = 0; i < p->nsubmodels; i++)
		put(u, p->submodels[i].kind == CB_SUB_PREFILL ? "prefill" : "decode",
		    p->submodels[i].union_valid ? u64j(p->submodels[i].union_bytes) : json_null());
	put(o, "address_union", u);
	put(o, "address_union_note", json_string("static address coverage of the op I/O YAML, not "
						 "peak live memory (seed §6)"));
	put(o, "overlaps", u64j(m->noverlaps));
	if (!pub) {
		json_t *ov = json_array();
		for (size_t i = 0; ov && i < m->noverlaps; i++) {
			const struct cb_overlap *x = &m->overlaps[i];
			json_t *e = json_object();
			put(e, "chip", u64j(x->chip));
			put(e, "domain", json_string(cb_domain_name(x->domain)));
			put(e, "line_a", u64j(p->maps[x->map_a].line));
			put(e, "line_b", u64j(p->maps[x->map_b].line));
			put(e, "vaddr", hexj(x->vaddr));
			put(e, "bytes", u64j(x->bytes));
			json_array_append_new(ov, e);
		}
		put(o, "overlap_list", ov);
	}
	put(o, "capacity_report", json_string(m->capacity_refused ? "refused" : "ok"));
	put(o, "device_memory_required_mb", p->top.has_mem_required ? u64j(p->top.mem_required_mb)
								   : json_null());
	return o;
}

static json_t *supply_json(const struct cb_package *p)
{
	const json_t *root = p->manifest;
	json_t *o = json_object();
	const json_t *h = json_object_get(root, "onnx_hash");
	put(o, "onnx_hash", json_is_array(h) ? json_deep_copy(h) : json_array());
	bool delivered = false;
	for (size_t i = 0; i < p->nfiles; i++)
		delivered |= p->files[i].kind == CB_KIND_ONNX;
	put(o, "onnx_delivered", json_boolean(delivered));
	json_t *c = json_object();
	const json_t *g = json_object_get(root, "git_commit_id");
	put(c, "calcc", json_deep_copy(json_object_get(g, "calcc")));
	put(c, "lib/tvm", json_deep_copy(json_object_get(g, "lib/tvm")));
	put(o, "compiler_commits", c);
	const json_t *sc = json_object_get(root, "supply_chain");
	static const char *const keys[] = {
		"compiler_oci_digest", "compiler_image", "quant_config_sha256",
		"calibration_manifest_sha256", "oplib_version", "calbin_schema_version",
		"runtime_compat",
	};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		put(o, keys[i], json_deep_copy(json_object_get(sc, keys[i])));
	put(o, "calcc_ver", nf_json_text(p->top.calcc_ver));
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
			put(o, key, s->ops_json ? u64j(s->nops) : json_null());
			put(h, k, histogram(s));
		}
	}
	put(o, "op_histogram", h);
	return o;
}

static char *dump(json_t *doc)
{
	if (!doc)
		return NULL;
	char *s = json_dumps(doc, JSON_INDENT(2));
	json_decref(doc);
	if (!s)
		return NULL;
	size_t n = strlen(s);
	char *out = realloc(s, n + 2);
	if (!out) {
		free(s);
		return NULL;
	}
	out[n] = '\n';
	out[n + 1] = '\0';
	return out;
}

char *cb_report_json(const struct cb_package *p, const struct nf_report *r, bool pub,
		     const char *tool, int argc, char *const *argv)
{
	json_t *doc = json_object();
	if (!doc)
		return NULL;
	put(doc, "schema", json_string("calculet-package-validation/v1"));
	json_t *t = json_object();
	put(t, "name", json_string(tool ? tool : "calbin-check"));
	put(t, "version", json_string(NF_VERSION));
	if (!pub && argv) {
		json_t *a = json_array();
		for (int i = 0; a && i < argc; i++)
			json_array_append_new(a, nf_json_text(argv[i]));
		put(t, "argv", a);
	}
	put(t, "exit_status", json_integer(nf_report_exit_status(r)));
	put(t, "public", json_boolean(pub));
	put(doc, "tool", t);
	if (p) {
		put(doc, "package", package_json(p));
		put(doc, "model", model_json(p));
		put(doc, "submodels", submodels_json(p, pub));
		put(doc, "memory", cb_memory_obj(p, pub));
		put(doc, "graph", graph_json(p));
		put(doc, "supply_chain", supply_json(p));
	}
	put(doc, "findings", findings_json(r, pub));
	put(doc, "gates", gates_json(p, r));
	put(doc, "reproducible", json_boolean(cb_reproducible(p, r)));
	put(doc, "verdict", json_string(nf_report_verdict(r)));
	return dump(doc);
}

char *cb_memory_json(const struct cb_package *p)
{
	return p ? dump(cb_memory_obj(p, false)) : NULL;
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
