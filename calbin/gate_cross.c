/* calbin/gate_cross.c — Gate C: cross-reference (seed §3.1, §3.2, §4, §5,
 * §6, §7, §9 Gate C).
 *
 *   model name / batch / context / chip count agree everywhere;
 *   input shapes, dtypes and byte sizes (product(shape) * dtype == size);
 *   layers (past_key_i/past_value_i paired, 0..L-1), heads, head_dim
 *   against config.json, the graph and the KV inputs;
 *   command and ELF declarations -> files, masks, ping/pong, ELF machine;
 *   profpart op -> graph op;
 *   parameter map -> file range, mask, domain; overlaps reported (§4.3 5).
 * Each rule reads only parts of the model that were read; a part missing
 * was reported where it went missing. */
#include <elf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calbin/internal.h"

#define MAX_OVERLAPS_KEPT 100000

static const char *const sub_name[2] = {"prefill", "decode"};

static uint64_t mline(const struct cb_build *b, const json_t *obj, const char *key)
{
	return cb_yaml_line(&b->manifest_doc, obj, key);
}

static char *keyf(struct cb_build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *keyf(struct cb_build *b, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		b->r->oom = true;
		return NULL;
	}
	return s;
}

static const json_t *info_of(const struct cb_build *b, int k)
{
	return json_object_get(b->cfg[k], "model_info");
}

static const char *meta_path(const struct cb_package *p, const struct cb_submodel *s)
{
	return s->meta_index >= 0 ? p->files[s->meta_index].path : s->dir;
}

/* The manifest's cfg of a submodel's kind, when the manifest has it. */
static const json_t *cfg_of(const struct cb_build *b, const struct cb_submodel *s)
{
	return b->cfg[s->kind];
}

/* ---- names, batch, context, chips ------------------------------------------- */

static void names(struct cb_build *b)
{
	struct cb_package *p = b->p;
	const char *mname = cb_json_str(p->manifest, "model_name");
	const char *ref = mname ? mname : p->name;
	uint64_t l = mline(b, p->manifest, "model_name");
	if (mname && strcmp(p->name, mname) != 0)
		CB_ERR(b->r, 'C', "CROSS_MODEL_NAME", b->manifest_file, l, "model_name",
		       "seed §3.4, §10: model_name '%s' is not the package directory's name '%s'",
		       mname, p->name);
	if (p->manifest_index >= 0) {
		const char *m = p->files[p->manifest_index].path;
		size_t n = strlen(m) - 5;
		if (strlen(ref) != n || strncmp(m, ref, n) != 0)
			CB_ERR(b->r, 'C', "CROSS_MODEL_NAME", m, 0, NULL,
			       "seed §3.4: the root manifest's stem is not the model name '%s'", ref);
	}
	if (p->top.model_arch && strcmp(p->top.model_arch, ref) != 0)
		CB_ERR(b->r, 'C', "CROSS_MODEL_NAME", p->files[p->top_meta_index].path,
		       p->top.line_model_arch, "model_arch",
		       "seed §4.1, §10: model_arch '%s' is not the model name '%s'", p->top.model_arch,
		       ref);
	for (size_t i = 0; i < p->nsubmodels; i++) {
		const struct cb_submodel *s = &p->submodels[i];
		if (s->meta.model_arch && strcmp(s->meta.model_arch, ref) != 0)
			CB_ERR(b->r, 'C', "CROSS_MODEL_NAME", meta_path(p, s), s->meta.line_model_arch,
			       "model_arch", "seed §5.1, §10: model_arch '%s' is not the model name '%s'",
			       s->meta.model_arch, ref);
		size_t n = strlen(ref);
		if (strncmp(s->dir, ref, n) != 0 || s->dir[n] != '_')
			CB_ERR(b->r, 'C', "CROSS_MODEL_NAME", s->dir, 0, NULL,
			       "issue 12 conventions: the submodel directory is not named "
			       "'%s_%s_<k>'", ref, sub_name[s->kind]);
	}
}

static bool get_u64(const json_t *obj, const char *key, uint64_t *v)
{
	return cb_json_u64(json_object_get(obj, key), v);
}

static void batch_context(struct cb_build *b)
{
	struct cb_package *p = b->p;
	uint64_t B = 0, S = 0, v;
	bool hasB = get_u64(info_of(b, 0), "batch_num", &B) || get_u64(info_of(b, 1), "batch_num", &B);
	bool hasS = get_u64(p->manifest, "seq_len", &S);
	const char *top = p->top_meta_index >= 0 ? p->files[p->top_meta_index].path : NULL;
	for (int k = 0; k < 2; k++) {
		const json_t *mi = info_of(b, k);
		if (hasB && get_u64(mi, "batch_num", &v) && v != B)
			CB_ERR(b->r, 'C', "CROSS_BATCH", b->manifest_file, mline(b, mi, "batch_num"),
			       k ? "one_model_cfg.decode.model_info.batch_num"
				 : "one_model_cfg.prefill.model_info.batch_num",
			       "seed §3.2, §10: batch_num %" PRIu64 " where the other submodel has %"
			       PRIu64, v, B);
		if (hasS && get_u64(mi, "max_seq_len", &v) && v != S)
			CB_ERR(b->r, 'C', "CROSS_CONTEXT", b->manifest_file, mline(b, mi, "max_seq_len"),
			       k ? "one_model_cfg.decode.model_info.max_seq_len"
				 : "one_model_cfg.prefill.model_info.max_seq_len",
			       "seed §3.4, §10: max_seq_len %" PRIu64 " is not seq_len %" PRIu64, v, S);
	}
	if (hasB && p->top.has_n_batch && p->top.n_batch != B)
		CB_ERR(b->r, 'C', "CROSS_BATCH", top, p->top.line_n_batch, "n_batch",
		       "seed §4.1, §10: n_batch %" PRIu64 " is not the manifest's batch_num %" PRIu64,
		       p->top.n_batch, B);
	if (hasS && p->top.has_max_seq && p->top.max_seq_len != S)
		CB_ERR(b->r, 'C', "CROSS_CONTEXT", top, p->top.line_max_seq, "max_seq_len",
		       "seed §4.1, §10: max_seq_len %" PRIu64 " is not the manifest's seq_len %" PRIu64,
		       p->top.max_seq_len, S);
	for (size_t i = 0; i < p->nsubmodels; i++) {
		const struct cb_submodel *s = &p->submodels[i];
		if (hasB && s->meta.has_n_batch && s->meta.n_batch != B)
			CB_ERR(b->r, 'C', "CROSS_BATCH", meta_path(p, s), s->meta.line_n_batch, "n_batch",
			       "seed §5.1, §10: n_batch %" PRIu64 " is not the manifest's batch_num %"
			       PRIu64, s->meta.n_batch, B);
	}
	/* Input shapes (§3.1): ids [B, S] for prefill, [B, 1] for decode; KV
	 * [B, kv_heads, 0, head_dim] for prefill, [B, kv_heads, S-1, head_dim]
	 * for decode. */
	for (int k = 0; k < 2; k++) {
		const json_t *shape = json_object_get(b->cfg[k], "input_shape");
		const char *name;
		json_t *dims;
		size_t more[3] = {0, 0, 0};   /* KV inputs past the first per code */
		static const char *const codes[3] = {"CROSS_INPUT_SHAPE", "CROSS_BATCH", "CROSS_CONTEXT"};
		json_object_foreach((json_t *)shape, name, dims) {
			if (!json_is_array(dims))
				continue;
			bool past = strncmp(name, "past_", 5) == 0;
			size_t rank = json_array_size(dims);
			uint64_t d0 = 0, dseq = 0;
			cb_json_u64(json_array_get(dims, 0), &d0);
			cb_json_u64(json_array_get(dims, past ? 2 : 1), &dseq);
			uint64_t want_seq = k == 0 ? (past ? 0 : S) : (past ? (S ? S - 1 : 0) : 1);
			int bad = rank != (past ? 4u : 2u) ? 0 : hasB && d0 != B ? 1
				  : hasS && dseq != want_seq ? 2 : -1;
			if (bad < 0)
				continue;
			/* 96 KV inputs share one shape: the first names the problem. */
			if (past && more[bad]++)
				continue;
			char *key = keyf(b, "one_model_cfg.%s.input_shape.%s", sub_name[k], name);
			uint64_t l = mline(b, shape, name);
			if (bad == 0)
				CB_ERR(b->r, 'C', codes[0], b->manifest_file, l, key,
				       "seed §3.1: %s has rank %zu, not %u", name, rank, past ? 4 : 2);
			else if (bad == 1)
				CB_ERR(b->r, 'C', codes[1], b->manifest_file, l, key,
				       "seed §3.1, §10: %s has batch %" PRIu64 ", not %" PRIu64, name, d0, B);
			else
				CB_ERR(b->r, 'C', codes[2], b->manifest_file, l, key,
				       "seed §3.1, §10: %s has %" PRIu64 " tokens where the %s graph of a %"
				       PRIu64 "-token context has %" PRIu64, name, dseq, sub_name[k], S,
				       want_seq);
			free(key);
		}
		for (int c = 0; c < 3; c++)
			if (more[c] > 1) {
				char *key = keyf(b, "one_model_cfg.%s.input_shape", sub_name[k]);
				CB_ERR(b->r, 'C', codes[c], b->manifest_file, mline(b, b->cfg[k], "input_shape"),
				       key, "seed §3.1: %zu more KV inputs of the %s graph have the same "
				       "problem", more[c] - 1, sub_name[k]);
				free(key);
			}
	}
}

static void chips(struct cb_build *b)
{
	struct cb_package *p = b->p;
	uint64_t c[2] = {0, 0}, k[2] = {0, 0};
	bool hc[2], hk[2];
	for (int i = 0; i < 2; i++) {
		const json_t *dc = json_object_get(b->cfg[i], "device_cfg");
		hc[i] = get_u64(dc, "chip_nums", &c[i]);
		hk[i] = get_u64(dc, "calcore_num", &k[i]);
	}
	if (hc[0] && hc[1] && c[0] != c[1])
		CB_ERR(b->r, 'C', "CROSS_CHIPS", b->manifest_file,
		       mline(b, json_object_get(b->cfg[1], "device_cfg"), "chip_nums"),
		       "one_model_cfg.decode.device_cfg.chip_nums",
		       "seed §3.3, §10: chip_nums %" PRIu64 " where prefill has %" PRIu64, c[1], c[0]);
	if (hk[0] && hk[1] && k[0] != k[1])
		CB_ERR(b->r, 'C', "CROSS_CHIPS", b->manifest_file,
		       mline(b, json_object_get(b->cfg[1], "device_cfg"), "calcore_num"),
		       "one_model_cfg.decode.device_cfg.calcore_num",
		       "seed §3.3: calcore_num %" PRIu64 " where prefill has %" PRIu64, k[1], k[0]);
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct cb_file *f = &p->files[i];
		if (f->chip >= 0 && (unsigned)f->chip >= p->chips && p->chips)
			CB_ERR(b->r, 'C', "CROSS_CHIPS", f->path, 0, NULL,
			       "seed §3.3: the name says chip %d; device_cfg.chip_nums is %u", f->chip,
			       p->chips);
		else if (f->core >= 0 && (unsigned)f->core >= p->cores && p->cores)
			CB_ERR(b->r, 'C', "CROSS_CHIPS", f->path, 0, NULL,
			       "seed §3.3: the name says core %d; device_cfg.calcore_num is %u", f->core,
			       p->cores);
	}
}

/* ---- layers and heads --------------------------------------------------------- */

/* "past_key_<i>" / "past_value_<i>": kind (0 key, 1 value) and i. */
static bool past_name(const char *s, int *kind, uint64_t *i)
{
	const char *n;
	if (strncmp(s, "past_key_", 9) == 0)
		*kind = 0, n = s + 9;
	else if (strncmp(s, "past_value_", 11) == 0)
		*kind = 1, n = s + 11;
	else
		return false;
	return cb_tok_dec(n, strlen(n), i) && *i < 100000;
}

/* The layers of one submodel's inputs; pairing findings.  Returns L. */
static uint64_t manifest_layers(struct cb_build *b, int k)
{
	const json_t *shape = json_object_get(b->cfg[k], "input_shape");
	uint64_t max = 0, count[2] = {0, 0};
	const char *name;
	json_t *v;
	int kind;
	uint64_t i;
	json_object_foreach((json_t *)shape, name, v) {
		if (!past_name(name, &kind, &i))
			continue;
		count[kind]++;
		if (i + 1 > max)
			max = i + 1;
		char other[40];
		snprintf(other, sizeof other, "%s%" PRIu64, kind ? "past_key_" : "past_value_", i);
		if (!json_object_get(shape, other)) {
			char *key = keyf(b, "one_model_cfg.%s.input_shape.%s", sub_name[k], name);
			CB_ERR(b->r, 'C', "KV_PAIRING", b->manifest_file, mline(b, shape, name), key,
			       "seed §3.1: %s has no %s", name, other);
			free(key);
		}
	}
	uint64_t keys = count[0] > count[1] ? count[0] : count[1];
	if (keys && max != keys) {
		char *key = keyf(b, "one_model_cfg.%s.input_shape", sub_name[k]);
		CB_ERR(b->r, 'C', "KV_PAIRING", b->manifest_file,
		       mline(b, b->cfg[k], "input_shape"), key,
		       "seed §3.1: the KV inputs are numbered up to %" PRIu64 " but there are %" PRIu64
		       " of a kind: the numbering 0..L-1 has gaps", max - 1, keys);
		free(key);
	}
	return count[0];
}

/* Layers the graph uses: distinct past_key_i named by input_N roles. */
static uint64_t graph_layers(struct cb_build *b, const struct cb_submodel *s, uint64_t *kv_bytes)
{
	const json_t *shape = json_object_get(cfg_of(b, s), "input_shape");
	size_t ninputs = json_object_size(shape);
	const char **names = ninputs ? calloc(ninputs, sizeof *names) : NULL;
	if (ninputs && !names) {
		b->r->oom = true;
		return 0;
	}
	size_t j = 0;
	const char *name;
	json_t *v;
	json_object_foreach((json_t *)shape, name, v)
		names[j++] = name;
	bool *seen = calloc(100000, sizeof *seen);
	uint64_t layers = 0;
	size_t bad = 0;
	const char *file = s->opio_index >= 0 ? b->p->files[s->opio_index].path : NULL;
	for (size_t o = 0; seen && o < s->nops; o++)
		for (size_t t = 0; t < s->ops[o].ntensors; t++) {
			const struct cb_tensor *x = &s->ops[o].tensors[t];
			if (x->klass != CB_TENSOR_INPUT)
				continue;
			uint64_t n = 0;
			cb_tok_dec(x->role + 6, strlen(x->role + 6), &n);
			if (!shape)
				continue;
			if (n >= ninputs) {
				if (bad++ < CB_MAX_FINDINGS_PER_FILE) {
					char *key = keyf(b, "%s.%s%s_%" PRIu32, s->ops[o].name,
							 x->out ? "outs" : "args", "", x->index);
					CB_ERR(b->r, 'C', "OPIO_ROLE", file, x->line, key,
					       "seed §6: role '%s' names model input %" PRIu64 "; the "
					       "%s graph has %zu inputs (input_shape, in file order)", x->role,
					       n, sub_name[s->kind], ninputs);
					free(key);
				}
				continue;
			}
			int kind;
			uint64_t i;
			if (past_name(names[n], &kind, &i)) {
				if (kind == 0 && !seen[i]) {
					seen[i] = true;
					layers++;
				}
				if (kv_bytes && !*kv_bytes && x->dtype_bytes)
					*kv_bytes = x->dtype_bytes;
			}
		}
	if (bad > CB_MAX_FINDINGS_PER_FILE)
		CB_ERR(b->r, 'C', "OPIO_ROLE", file, 0, NULL, "%zu more roles name no input",
		       bad - CB_MAX_FINDINGS_PER_FILE);
	free(seen);
	free(names);
	return layers;
}

static void layers(struct cb_build *b)
{
	struct cb_package *p = b->p;
	uint64_t L = 0, Lm[2] = {0, 0};
	bool hasL = get_u64(p->hf_config, "num_hidden_layers", &L);
	for (int k = 0; k < 2; k++)
		if (b->cfg[k])
			Lm[k] = manifest_layers(b, k);
	if (!hasL && b->cfg[0]) {
		L = Lm[0];
		hasL = true;
	}
	for (int k = 0; k < 2 && hasL; k++)
		if (b->cfg[k] && Lm[k] != L) {
			char *key = keyf(b, "one_model_cfg.%s.input_shape", sub_name[k]);
			CB_ERR(b->r, 'C', "CROSS_LAYERS", b->manifest_file,
			       mline(b, b->cfg[k], "input_shape"), key,
			       "seed §3.1: the %s graph has %" PRIu64 " past_key inputs; config.json "
			       "num_hidden_layers is %" PRIu64, sub_name[k], Lm[k], L);
			free(key);
		}
	for (size_t i = 0; i < p->nsubmodels; i++) {
		struct cb_submodel *s = &p->submodels[i];
		if (!s->nops || !cfg_of(b, s))
			continue;
		uint64_t kvb = 0;
		uint64_t g = graph_layers(b, s, &kvb);
		s->graph_layers = g;
		s->kv_dtype_bytes = (unsigned)kvb;
		if (hasL && g != L)
			CB_ERR(b->r, 'C', "CROSS_LAYERS", p->files[s->opio_index].path, 0, NULL,
			       "seed §3.1: the operator graph reads the KV inputs of %" PRIu64 " layers "
			       "(input_N roles naming past_key_i); config.json num_hidden_layers is %"
			       PRIu64, g, L);
	}
}

static void heads(struct cb_build *b)
{
	const json_t *hf = b->p->hf_config;
	uint64_t qh, kvh, hd, v;
	bool hq = get_u64(hf, "num_attention_heads", &qh);
	bool hkv = get_u64(hf, "num_key_value_heads", &kvh);
	bool hhd = get_u64(hf, "head_dim", &hd);
	const json_t *theta = json_object_get(hf, "rope_theta");
	for (int k = 0; k < 2; k++) {
		const json_t *mi = info_of(b, k);
		if (!mi)
			continue;
		struct {
			const char *key;
			bool has;
			uint64_t want;
			const char *hf;
		} rules[] = {
			{"q0_head_num", hq, qh, "num_attention_heads"},
			{"k0_head_num", hkv, kvh, "num_key_value_heads"},
			{"v_head_num", hkv, kvh, "num_key_value_heads"},
		};
		for (size_t r = 0; r < 3; r++)
			if (rules[r].has && get_u64(mi, rules[r].key, &v) && v != rules[r].want) {
				char *key = keyf(b, "one_model_cfg.%s.model_info.%s", sub_name[k],
						 rules[r].key);
				CB_ERR(b->r, 'C', "CROSS_HEADS", b->manifest_file, mline(b, mi, rules[r].key),
				       key, "seed §3.2: %s %" PRIu64 " is not config.json %s %" PRIu64,
				       rules[r].key, v, rules[r].hf, rules[r].want);
				free(key);
			}
		const char *name;
		json_t *x;
		json_object_foreach((json_t *)mi, name, x) {
			size_t n = strlen(name);
			if (hhd && n > 9 && strcmp(name + n - 9, "_head_dim") == 0 && cb_json_u64(x, &v) &&
			    v != hd) {
				char *key = keyf(b, "one_model_cfg.%s.model_info.%s", sub_name[k], name);
				CB_ERR(b->r, 'C', "CROSS_HEADS", b->manifest_file, mline(b, mi, name), key,
				       "seed §3.2: %s %" PRIu64 " is not config.json head_dim %" PRIu64,
				       name, v, hd);
				free(key);
			}
		}
		const json_t *tb = json_object_get(mi, "theta_base");
		if (json_is_number(theta) && json_is_number(tb) &&
		    json_number_value(theta) != json_number_value(tb)) {
			char *key = keyf(b, "one_model_cfg.%s.model_info.theta_base", sub_name[k]);
			CB_ERR(b->r, 'C', "CROSS_HEADS", b->manifest_file, mline(b, mi, "theta_base"), key,
			       "seed §3.2: theta_base %g is not config.json rope_theta %g",
			       json_number_value(tb), json_number_value(theta));
			free(key);
		}
		/* KV input shapes [B, kv_heads, seq, head_dim] (§3.1). */
		uint64_t kh = 0, kd = 0;
		bool hkh = get_u64(mi, "k0_head_num", &kh);
		bool hkd = get_u64(mi, "k0_head_dim", &kd) || (hhd && (kd = hd, true));
		const json_t *shape = json_object_get(b->cfg[k], "input_shape");
		json_object_foreach((json_t *)shape, name, x) {
			int kind;
			uint64_t i, d1 = 0, d3 = 0;
			if (!past_name(name, &kind, &i) || json_array_size(x) != 4)
				continue;
			cb_json_u64(json_array_get(x, 1), &d1);
			cb_json_u64(json_array_get(x, 3), &d3);
			if ((hkh && d1 != kh) || (hkd && d3 != kd)) {
				char *key = keyf(b, "one_model_cfg.%s.input_shape.%s", sub_name[k], name);
				CB_ERR(b->r, 'C', "CROSS_HEADS", b->manifest_file, mline(b, shape, name), key,
				       "seed §3.1: %s is [_, %" PRIu64 ", _, %" PRIu64 "]; model_info says "
				       "%" PRIu64 " KV heads of %" PRIu64, name, d1, d3, kh, kd);
				free(key);
			}
		}
	}
}

static void roles(struct cb_build *b)
{
	struct cb_package *p = b->p;
	for (int k = 0; k < 2; k++) {
		const json_t *mi = info_of(b, k);
		const json_t *enc = json_object_get(mi, "is_encoder");
		const json_t *pre = json_object_get(mi, "is_prefill");
		const json_t *alibi = json_object_get(mi, "alibi");
		const json_t *hf_alibi = json_object_get(p->hf_config, "alibi");
		if (json_is_true(enc)) {
			char *key = keyf(b, "one_model_cfg.%s.model_info.is_encoder", sub_name[k]);
			CB_ERR(b->r, 'C', "CROSS_ROLE", b->manifest_file, mline(b, mi, "is_encoder"), key,
			       "seed §3.2: is_encoder is true for a decoder-only llm (model_type llm)");
			free(key);
		}
		if (json_is_boolean(pre) && json_is_true(pre) != (k == 0)) {
			char *key = keyf(b, "one_model_cfg.%s.model_info.is_prefill", sub_name[k]);
			CB_ERR(b->r, 'C', "CROSS_ROLE", b->manifest_file, mline(b, mi, "is_prefill"), key,
			       "seed §3.2: is_prefill is %s in the %s submodel", json_is_true(pre)
			       ? "true" : "false", sub_name[k]);
			free(key);
		}
		if (json_is_boolean(alibi) && json_is_boolean(hf_alibi) &&
		    json_is_true(alibi) != json_is_true(hf_alibi)) {
			char *key = keyf(b, "one_model_cfg.%s.model_info.alibi", sub_name[k]);
			CB_ERR(b->r, 'C', "CROSS_ROLE", b->manifest_file, mline(b, mi, "alibi"), key,
			       "seed §3.2: alibi disagrees with config.json");
			free(key);
		}
	}
	if (p->top.model_type && strcmp(p->top.model_type, "llm") != 0)
		CB_ERR(b->r, 'B', "META_VALUE", p->files[p->top_meta_index].path,
		       p->top.line_model_type, "model_type",
		       "seed §4.1: model_type '%s'; it must be llm", p->top.model_type);
	for (size_t i = 0; i < p->nsubmodels; i++) {
		const struct cb_submodel *s = &p->submodels[i];
		const char *t = s->meta.smodel_type;
		if (!t)
			continue;
		const char *want = s->kind == CB_SUB_PREFILL ? "llm_prefill" : "llm_decode";
		if (strcmp(t, "llm_prefill") != 0 && strcmp(t, "llm_decode") != 0)
			CB_ERR(b->r, 'B', "META_VALUE", meta_path(p, s), s->meta.line_smodel_type,
			       "smodel_type", "seed §5.1: smodel_type '%s' is neither llm_prefill nor "
			       "llm_decode", t);
		else if (strcmp(t, want) != 0)
			CB_WARN(b->r, 'C', NF_CLASS_WARNING_VENDOR, "META_SMODEL_TYPE", meta_path(p, s),
				s->meta.line_smodel_type, "smodel_type",
				"seed §5.1, §10: the %s submodel says smodel_type %s (%s expected): "
				"isolated testing may go on, the vendor must fix it", sub_name[s->kind], t,
				want);
		const char *loc = s->meta.ccu_stack_location;
		if (loc && strcmp(loc, "dram") != 0 && strcmp(loc, "sram") != 0)
			CB_ERR(b->r, 'B', "META_VALUE", meta_path(p, s), 0, "ccu_stack_config",
			       "seed §5.1: ccu_stack_config location '%s' is neither dram nor sram", loc);
	}
}

/* ---- I/O contract (§5.3) ----------------------------------------------------- */

static void io(struct cb_build *b, const struct cb_submodel *s)
{
	const struct cb_package *p = b->p;
	const char *file = meta_path(p, s);
	const json_t *shape = json_object_get(cfg_of(b, s), "input_shape");
	size_t nout = 0;
	for (size_t i = 0; i < s->meta.nbufs; i++) {
		const struct cb_buf *x = &s->meta.bufs[i];
		char *key = keyf(b, "%s.%s", x->out ? "obuf" : "ibuf", x->name);
		nout += x->out;
		for (size_t j = 0; j < i; j++)
			if (s->meta.bufs[j].out == x->out && strcmp(s->meta.bufs[j].name, x->name) == 0)
				CB_ERR(b->r, 'B', "META_DUPLICATE", file, x->line, key,
				       "seed §5.3: %s '%s' was declared on line %" PRIu64, x->out ? "obuf"
				       : "ibuf", x->name, s->meta.bufs[j].line);
		uint64_t want;
		if (!x->dtype_bytes)
			CB_ERR(b->r, 'C', "IO_DTYPE", file, x->line, key,
			       "seed §5.3: type '%s' is not in the dtype table", x->dtype);
		else if (!cb_shape_bytes(x->rank, x->dims, x->dtype_bytes, &want) || want != x->size)
			CB_ERR(b->r, 'C', "IO_SIZE", file, x->line, key,
			       "seed §5.3, §10: product(shape) * %u = %" PRIu64 " bytes for %s, the "
			       "line says size %" PRIu64, x->dtype_bytes, want, x->dtype, x->size);
		if (x->ping == x->pong)
			CB_WARN(b->r, 'C', NF_CLASS_NONE, "IO_PINGPONG", file, x->line, key,
				"seed §5.3: ping and pong vaddr are the same");
		if (!x->out && shape) {
			const json_t *d = json_object_get(shape, x->name);
			bool same = json_array_size(d) == x->rank;
			for (uint32_t r = 0; same && r < x->rank; r++) {
				uint64_t v;
				same = cb_json_u64(json_array_get(d, r), &v) && v == x->dims[r];
			}
			if (!d)
				CB_ERR(b->r, 'C', "CROSS_INPUT_SHAPE", file, x->line, key,
				       "seed §3.1, §5.3: ibuf '%s' is no input of one_model_cfg.%s."
				       "input_shape", x->name, sub_name[s->kind]);
			else if (!same)
				CB_ERR(b->r, 'C', "CROSS_INPUT_SHAPE", file, x->line, key,
				       "seed §3.1, §5.3: ibuf '%s' has another shape than "
				       "one_model_cfg.%s.input_shape.%s", x->name, sub_name[s->kind],
				       x->name);
		}
		free(key);
	}
	if (!s->meta_ok && !s->meta.nbufs)
		return;
	const char *name;
	json_t *v;
	json_object_foreach((json_t *)shape, name, v) {
		if (strncmp(name, "past_", 5) == 0)
			continue;
		bool found = false;
		for (size_t i = 0; i < s->meta.nbufs && !found; i++)
			found = !s->meta.bufs[i].out && strcmp(s->meta.bufs[i].name, name) == 0;
		if (!found) {
			char *key = keyf(b, "ibuf.%s", name);
			CB_ERR(b->r, 'C', "IO_MISSING", file, 0, key,
			       "seed §5.3: the input '%s' of one_model_cfg.%s.input_shape has no ibuf "
			       "line", name, sub_name[s->kind]);
			free(key);
		}
	}
	if (!nout)
		CB_ERR(b->r, 'C', "IO_MISSING", file, 0, "obuf",
		       "seed §5.3: no obuf line (the logits output)");
}

/* ---- declarations, ELF, ping/pong (§5.2) --------------------------------------- */

static bool mask_is_chip(const uint32_t m[3], int chip)
{
	for (unsigned c = 0; c < CB_MAX_CHIPS; c++)
		if (cb_mask_has(m, c) != ((int)c == chip))
			return false;
	return true;
}

static void decls(struct cb_build *b, struct cb_submodel *s)
{
	struct cb_package *p = b->p;
	const char *file = meta_path(p, s);
	bool *declared = calloc(p->nfiles ? p->nfiles : 1, sizeof *declared);
	if (!declared) {
		b->r->oom = true;
		return;
	}
	for (size_t i = 0; i < s->meta.ndecls; i++) {
		struct cb_decl *d = &s->meta.decls[i];
		const char *key = d->file;
		char *path = keyf(b, "%s/%s", s->dir, d->file);
		if (!path)
			break;
		int fi = strchr(d->file, '/') ? -1 : cb_package_find(p, path);
		const struct cb_file *f = cb_file_at(p, fi);
		d->file_index = fi;
		if (strchr(d->file, '/'))
			CB_ERR(b->r, 'C', "DECL_NAME", file, d->line, key,
			       "seed §5.2: a declared file is a name in the submodel directory, not a "
			       "path");
		else if (!f || f->escapes)
			CB_ERR(b->r, 'C', "DECL_FILE_MISSING", file, d->line, key,
			       "seed §5.2: the declared file '%s' does not exist", path);
		else if (f->size == 0)
			CB_ERR(b->r, 'C', "DECL_FILE_EMPTY", file, d->line, key,
			       "seed §5.2: the declared file '%s' is empty", path);
		if (f && declared[fi])
			CB_ERR(b->r, 'B', "META_DUPLICATE", file, d->line, key,
			       "seed §5.2: '%s' is declared twice", d->file);
		if (f)
			declared[fi] = true;
		bool kind_ok = !f || (d->elf ? f->kind == CB_KIND_CCU_ELF
					    : f->kind == CB_KIND_CPU_CMD || f->kind == CB_KIND_PLD_CMD);
		if (f && !kind_ok)
			CB_ERR(b->r, 'C', "DECL_NAME", file, d->line, key,
			       "issue 12 conventions: a %s declaration names '%s', which is not a %s",
			       d->elf ? "ELF" : "command", d->file, d->elf ? "ccu<core>_chip<n>.elf"
			       : "{cpu,pld}_chip<n>_{ping,pong}.bin");
		else if (f && f->chip >= 0 && !mask_is_chip(d->mask, f->chip))
			CB_ERR(b->r, 'C', "DECL_MASK", file, d->line, key,
			       "seed §5.2: chip mask %08x %08x %08x, but the name says chip %d",
			       d->mask[0], d->mask[1], d->mask[2], f->chip);
		if (d->elf && strcmp(d->location, "dram") != 0 && strcmp(d->location, "sram") != 0)
			CB_ERR(b->r, 'B', "META_VALUE", file, d->line, key,
			       "seed §5.2: location '%s' is neither dram nor sram", d->location);
		free(path);
	}
	/* Files the metadata does not declare; ping without pong. */
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct cb_file *f = &p->files[i];
		if (f->submodel < 0 || &p->submodels[f->submodel] != s || f->escapes)
			continue;
		bool cmd = f->kind == CB_KIND_CPU_CMD || f->kind == CB_KIND_PLD_CMD;
		if ((cmd || f->kind == CB_KIND_CCU_ELF) && !declared[i] && s->meta_ok)
			CB_WARN(b->r, 'C', NF_CLASS_NONE, "DECL_UNDECLARED", f->path, 0, NULL,
				"seed §5.2: %s does not declare this file", file);
		if (cmd) {
			char *other = strdup(f->path);
			if (!other) {
				b->r->oom = true;
				continue;
			}
			char *at = strstr(other, f->pong ? "_pong.bin" : "_ping.bin");
			if (at)
				memcpy(at + 1, f->pong ? "ping" : "pong", 4);
			if (at && cb_package_find(p, other) < 0)
				CB_ERR(b->r, 'C', "PINGPONG_INCOMPLETE", f->path, 0, NULL,
				       "seed §5.2: '%s' has no '%s' beside it", f->path, other);
			free(other);
		}
	}
	free(declared);
}

static const char *machine_name(unsigned m)
{
	switch (m) {
	case EM_RISCV: return "RISC-V";
	case EM_X86_64: return "x86-64";
	case EM_386: return "i386";
	case EM_AARCH64: return "AArch64";
	case EM_ARM: return "ARM";
	default: return "another machine";
	}
}

static void elf_roles(struct cb_build *b)
{
	const struct cb_package *p = b->p;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct cb_file *f = &p->files[i];
		if (!f->elf || !f->elf->ok)
			continue;
		unsigned want_m, want_t;
		const char *role;
		if (f->kind == CB_KIND_CCU_ELF)
			want_m = EM_RISCV, want_t = ET_EXEC, role = "a CCU program (RISC-V ET_EXEC)";
		else if (f->isa == CB_ISA_RISCV)
			want_m = EM_RISCV, want_t = ET_DYN, role = "a *_riscv.so (RISC-V ET_DYN)";
		else
			want_m = EM_X86_64, want_t = ET_DYN, role = "a *_x86.so (x86-64 ET_DYN)";
		if (f->elf->machine != want_m || f->elf->type != want_t)
			CB_ERR(b->r, 'C', "ELF_MACHINE", f->path, 0, NULL,
			       "seed §5.2: e_machine %u (%s), e_type %u; the file is %s", f->elf->machine,
			       machine_name(f->elf->machine), f->elf->type, role);
	}
}

/* ---- profparts (§7.1) ------------------------------------------------------------ */

static int by_name(const void *a, const void *b, void *arg)
{
	char **ops = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(ops[x], ops[y]);
	return c ? c : (x < y ? -1 : x > y);
}

static void profparts(struct cb_build *b, struct cb_submodel *s)
{
	const struct cb_package *p = b->p;
	for (size_t c = 0; c < s->nprofparts; c++) {
		struct cb_profparts *pp = &s->profparts[c];
		if (pp->file_index < 0)
			continue;
		const char *file = p->files[pp->file_index].path;
		size_t unknown = 0;
		for (size_t i = 0; s->ops_json && i < pp->count; i++) {
			if (json_object_get(s->ops_json, pp->ops[i]))
				continue;
			pp->refused = true;
			if (unknown++ < CB_MAX_FINDINGS_PER_FILE)
				CB_ERR(b->r, 'C', "PROFPART_UNKNOWN_OP", file, pp->lines[i], pp->ops[i],
				       "seed §7.1, §10: op '%s' is not in the %s op I/O YAML: the "
				       "partition report is refused", pp->ops[i], sub_name[s->kind]);
		}
		if (unknown > CB_MAX_FINDINGS_PER_FILE)
			CB_ERR(b->r, 'C', "PROFPART_UNKNOWN_OP", file, 0, NULL, "%zu more unknown ops",
			       unknown - CB_MAX_FINDINGS_PER_FILE);
		size_t *idx = pp->count ? malloc(pp->count * sizeof *idx) : NULL;
		if (pp->count && !idx) {
			b->r->oom = true;
			continue;
		}
		for (size_t i = 0; i < pp->count; i++)
			idx[i] = i;
		if (pp->count > 1)
			qsort_r(idx, pp->count, sizeof *idx, by_name, pp->ops);
		size_t dups = 0;
		for (size_t i = 1; i < pp->count; i++)
			if (strcmp(pp->ops[idx[i]], pp->ops[idx[i - 1]]) == 0 &&
			    dups++ < CB_MAX_FINDINGS_PER_FILE)
				CB_WARN(b->r, 'C', NF_CLASS_NONE, "PROFPART_DUPLICATE", file,
					pp->lines[idx[i]], pp->ops[idx[i]],
					"seed §7.1: op '%s' runs again on chip %zu (first on line %" PRIu64
					")", pp->ops[idx[i]], c, pp->lines[idx[i - 1]]);
		if (dups > CB_MAX_FINDINGS_PER_FILE)
			CB_WARN(b->r, 'C', NF_CLASS_NONE, "PROFPART_DUPLICATE", file, 0, NULL,
				"%zu more repeated names", dups - CB_MAX_FINDINGS_PER_FILE);
		free(idx);
	}
}

/* ---- the parameter map (§4.3) --------------------------------------------------- */

static const char *path_problem(const char *s)
{
	if (!*s)
		return "is empty";
	if (s[0] == '/')
		return "is absolute";
	for (const char *c = s; *c;) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);
		if (n == 0)
			return "has an empty component";
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return "has a '.' or '..' component";
		c += n + (e != NULL);
	}
	return NULL;
}

struct capped {
	size_t n;
};

static bool cap(struct capped *c)
{
	return c->n++ < CB_MAX_FINDINGS_PER_FILE;
}

static void map_line(struct cb_build *b, struct cb_map *m, const char *file, struct capped caps[4])
{
	struct cb_package *p = b->p;
	const char *why = path_problem(m->file);
	int fi = why ? -1 : cb_package_find(p, m->file);
	const struct cb_file *f = cb_file_at(p, fi);
	m->valid = false;
	if (why) {
		if (cap(&caps[0]))
			CB_ERR(b->r, 'C', "MAP_FILE", file, m->line, m->file,
			       "seed §4.3 rule 1: the file name %s", why);
		return;
	}
	if (!f || f->escapes || !S_ISREG(f->type)) {
		if (cap(&caps[0]))
			CB_ERR(b->r, 'C', "MAP_FILE", file, m->line, m->file,
			       "seed §4.3 rule 1: '%s' is not a regular file of the package%s", m->file,
			       f && f->escapes ? " (a symlink that is not followed)" : "");
		return;
	}
	m->file_index = fi;
	bool ok = true;
	if (m->offset > f->size || m->size > f->size - m->offset) {
		ok = false;
		if (cap(&caps[1]))
			CB_ERR(b->r, 'C', "MAP_RANGE", file, m->line, m->file,
			       "seed §4.3 rule 2, §10: [0x%" PRIx64 ", +0x%" PRIx64 ") lies past the end "
			       "of %s (%" PRIu64 " bytes)", m->offset, m->size, m->file, f->size);
	}
	bool zero = !m->mask[0] && !m->mask[1] && !m->mask[2];
	bool beyond = !zero && p->chips && !cb_mask_within(m->mask, p->chips);
	if (zero || beyond) {
		ok = false;
		if (cap(&caps[2]))
			CB_ERR(b->r, 'C', "MAP_MASK", file, m->line, m->file,
			       "seed §4.3 rule 3: chip mask %08x %08x %08x %s", m->mask[0], m->mask[1],
			       m->mask[2], zero ? "is zero" : "names a chip beyond device_cfg.chip_nums");
	}
	m->domain = -1;
	for (int d = 0; d < CB_DOMAIN_COUNT; d++) {
		const struct cb_reservation *r = &p->reservations[d];
		if (r->present && m->vaddr >= r->vaddr && m->vaddr - r->vaddr < r->size)
			m->domain = d;
	}
	uint64_t end;
	const struct cb_reservation *r = m->domain >= 0 ? &p->reservations[m->domain] : NULL;
	if (!r || __builtin_add_overflow(m->vaddr, m->size, &end) ||
	    end - r->vaddr > r->size) {
		ok = false;
		if (cap(&caps[3]))
			CB_ERR(b->r, 'C', "MAP_DOMAIN", file, m->line, m->file,
			       "issue 12 conventions (§4.2): vaddr [0x%" PRIx64 ", +0x%" PRIx64 ") %s",
			       m->vaddr, m->size, r ? "runs past the end of its reservation"
			       : "falls in no reservation (dram_rsvd, sram_rsvd, sync_rsvd)");
	}
	m->valid = ok;
}

static int by_begin(const void *a, const void *b)
{
	const struct cb_range *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->tag < y->tag ? -1 : x->tag > y->tag;
}

static void overlaps(struct cb_build *b, const char *file)
{
	struct cb_package *p = b->p;
	struct cb_memory *mem = &p->memory;
	struct cb_range *v = p->nmaps ? malloc(p->nmaps * sizeof *v) : NULL;
	if (p->nmaps && !v) {
		b->r->oom = true;
		return;
	}
	size_t reported = 0, cap_kept = 0, total = 0;
	for (unsigned c = 0; c < p->chips; c++)
		for (int d = 0; d < CB_DOMAIN_COUNT; d++) {
			size_t n = 0;
			for (size_t i = 0; i < p->nmaps; i++) {
				const struct cb_map *m = &p->maps[i];
				if (m->valid && m->domain == d && cb_mask_has(m->mask, c) && m->size)
					v[n++] = (struct cb_range){m->vaddr, m->vaddr + m->size, i};
			}
			if (n > 1)
				qsort(v, n, sizeof *v, by_begin);
			/* Sweep: each range against the furthest-reaching earlier one. */
			size_t far = 0;
			for (size_t i = 1; i < n; i++) {
				if (v[i].begin < v[far].end) {
					uint64_t end = v[i].end < v[far].end ? v[i].end : v[far].end;
					size_t a = v[far].tag < v[i].tag ? v[far].tag : v[i].tag;
					size_t z = v[far].tag < v[i].tag ? v[i].tag : v[far].tag;
					total++;
					if (cap_kept < MAX_OVERLAPS_KEPT) {
						struct cb_overlap *o = reallocarray(mem->overlaps, mem->noverlaps + 1,
										    sizeof *o);
						if (o) {
							mem->overlaps = o;
							o[mem->noverlaps++] = (struct cb_overlap){
								c, (enum cb_domain)d, a, z, v[i].begin,
								end - v[i].begin};
							cap_kept++;
						}
					}
					if (reported++ < 16)
						CB_INFO(b->r, 'C', "MAP_OVERLAP", file, p->maps[z].line,
							p->maps[z].file,
							"seed §4.3 rule 5: on chip %u %s, vaddr [0x%" PRIx64
							", +0x%" PRIx64 ") of this line overlaps line %" PRIu64
							" (reported, not judged: a compiler may declare aliasing "
							"or lifetime reuse)", c, cb_domain_name((enum cb_domain)d),
							v[i].begin, end - v[i].begin, p->maps[a].line);
				}
				if (v[i].end > v[far].end)
					far = i;
			}
		}
	if (reported > 16)
		CB_INFO(b->r, 'C', "MAP_OVERLAP", file, 0, NULL,
			"%zu overlaps in all (the first 16 are listed; memory.overlaps has %zu)", total,
			mem->noverlaps);
	free(v);
}

static void maps(struct cb_build *b)
{
	struct cb_package *p = b->p;
	if (p->top_meta_index < 0)
		return;
	const char *file = p->files[p->top_meta_index].path;
	struct capped caps[4] = {{0}};
	for (size_t i = 0; i < p->nmaps; i++)
		map_line(b, &p->maps[i], file, caps);
	static const char *const codes[4] = {"MAP_FILE", "MAP_RANGE", "MAP_MASK", "MAP_DOMAIN"};
	for (int k = 0; k < 4; k++)
		if (caps[k].n > CB_MAX_FINDINGS_PER_FILE)
			CB_ERR(b->r, 'C', codes[k], file, 0, NULL, "%zu more lines break the rule",
			       caps[k].n - CB_MAX_FINDINGS_PER_FILE);
	overlaps(b, file);
}

/* ---- commands (§7.2) ------------------------------------------------------------ */

static void commands(struct cb_build *b, const struct cb_submodel *s)
{
	const struct cb_package *p = b->p;
	for (size_t i = 0; i < s->ncommands; i++) {
		const struct cb_commands *c = &s->commands[i];
		if (c->bin_index < 0 || !c->parsed || c->bin_count == UINT64_MAX ||
		    !S_ISREG(p->files[c->bin_index].type) || p->files[c->bin_index].escapes ||
		    !p->files[c->bin_index].size)
			continue;
		if (c->bin_count != c->count)
			CB_ERR(b->r, 'C', "CMD_BIN_COUNT", p->files[c->bin_index].path, 0, NULL,
			       "seed §7.2 (issue 12 conventions): the binary holds %" PRIu64 " commands, "
			       "its text dump %s %" PRIu64, c->bin_count, p->files[c->file_index].path,
			       c->count);
	}
}

static void device(struct cb_build *b)
{
	struct cb_package *p = b->p;
	const char *chip = cb_json_str(json_object_get(json_object_get(p->manifest, "supply_chain"),
						       "runtime_compat"), "chip");
	if (!chip || !p->top.ndevices)
		return;
	for (size_t i = 0; i < p->top.ndevices; i++)
		if (strcmp(p->top.devices[i], chip) == 0)
			return;
	CB_ERR(b->r, 'C', "CROSS_DEVICE", p->files[p->top_meta_index].path, p->top.line_device,
	       "device0", "seed §4.1: the compatible chip types do not include "
	       "supply_chain.runtime_compat.chip '%s'", chip);
}

void cb_gate_cross(struct cb_build *b)
{
	struct cb_package *p = b->p;
	names(b);
	batch_context(b);
	chips(b);
	layers(b);
	heads(b);
	roles(b);
	device(b);
	for (size_t i = 0; i < p->nsubmodels; i++) {
		struct cb_submodel *s = &p->submodels[i];
		if (s->meta_ok || s->meta.nbufs)
			io(b, s);
		if (s->meta_ok)
			decls(b, s);
		profparts(b, s);
		commands(b, s);
	}
	elf_roles(b);
	maps(b);
}
