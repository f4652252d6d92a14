/* calbin/gate_supply.c — Gate E: supply chain (seed §3.4, §9 Gate E), the
 * service checks (§8) and Gate F (§9 Gate F).
 *
 * Gate E: what is missing makes the package "may run, must not be called
 * reproducible" (BLOCKED_REPRODUCIBILITY, §10): the ONNX (recomputed when
 * it is delivered at the root under the basename of model_path), the
 * compiler and TVM commits, the compiler container digest, the quant and
 * calibration manifests, the oplib and calbin schema versions and the
 * runtime/driver/firmware compatibility.  Golden hashes without a tensor /
 * layer / file mapping are a warning.
 *
 * Service (§8): vocab vs the logits' last dimension (ERROR), a tokenizer or
 * config context above the calbin's (WARNING_SERVICE: the service enforces
 * the calbin's), BOS/EOS/PAD defined.
 *
 * Gate F is never run by a static tool: RUNTIME_NOT_RUN names the runner's
 * steps and every static warning its report must carry forward. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calbin/internal.h"

#define BLOCKED NF_CLASS_BLOCKED_REPRODUCIBILITY

static bool hex_of(const char *s, size_t min, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	if (n < min || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static uint64_t mline(const struct cb_build *b, const json_t *obj, const char *key)
{
	return cb_yaml_line(&b->manifest_doc, obj, key);
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void onnx(struct cb_build *b)
{
	struct cb_package *p = b->p;
	const json_t *root = p->manifest;
	const json_t *hashes = json_object_get(root, "onnx_hash");
	if (!json_array_size(hashes)) {
		CB_WARN(b->r, 'E', BLOCKED, "SUPPLY_ONNX_HASH_MISSING", b->manifest_file,
			mline(b, root, "onnx_hash"), "onnx_hash",
			"seed §3.4, §9 Gate E: no onnx_hash: the ONNX the package came from is not "
			"named, the package must not be called reproducible");
	}
	size_t i;
	json_t *h;
	json_array_foreach(hashes, i, h) {
		if (!hex_of(json_string_value(h), 64, 64))
			CB_WARN(b->r, 'E', BLOCKED, "SUPPLY_FIELD_INVALID", b->manifest_file,
				cb_yaml_line_at(&b->manifest_doc, hashes, i), "onnx_hash",
				"seed §3.4: onnx_hash[%zu] is not 64 lowercase hex digits", i);
	}
	/* onnx_hash[k] belongs to the k-th submodel of one_model_cfg. */
	const json_t *omc = json_object_get(root, "one_model_cfg");
	const char *k;
	json_t *cfg;
	size_t idx = 0;
	const char *reported[8];
	size_t nrep = 0;
	json_object_foreach((json_t *)omc, k, cfg) {
		const char *mp = cb_json_str(cfg, "model_path");
		const char *want = json_string_value(json_array_get(hashes, idx));
		size_t my = idx++;
		if (!mp)
			continue;
		const char *base = basename_of(mp);
		int fi = cb_package_find(p, base);
		const struct cb_file *f = cb_file_at(p, fi);
		if (!f || !S_ISREG(f->type) || f->escapes) {
			bool seen = false;
			for (size_t r = 0; r < nrep; r++)
				seen |= strcmp(reported[r], base) == 0;
			if (!seen && nrep < 8) {
				reported[nrep++] = base;
				CB_WARN(b->r, 'E', BLOCKED, "SUPPLY_ONNX_MISSING", b->manifest_file,
					mline(b, cfg, "model_path"), "model_path",
					"seed §3.1, §3.4: the ONNX '%s' is not delivered at the package root: "
					"onnx_hash cannot be recomputed; the package may run but must not be "
					"called reproducible", base);
			}
			continue;
		}
		if (!f->sha256[0]) {
			bool seen = false;
			for (size_t r = 0; r < nrep; r++)
				seen |= strcmp(reported[r], base) == 0;
			if (seen || nrep == 8)
				continue;
			reported[nrep++] = base;
			CB_INFO(b->r, 'E', "SUPPLY_ONNX_NOT_VERIFIED", f->path, 0, NULL,
				"seed §3.4: the ONNX is larger than %llu MiB; fast mode did not recompute "
				"its hash (run with --hash)", CB_FAST_HASH_LIMIT >> 20);
			continue;
		}
		if (want && strcmp(f->sha256, want) != 0)
			CB_ERR(b->r, 'E', "SUPPLY_ONNX_HASH", f->path, 0, NULL,
			       "seed §3.4: SHA-256 of the delivered ONNX is %s; onnx_hash[%zu] says %s",
			       f->sha256, my, want);
	}
}

static void need_field(struct cb_build *b, const json_t *obj, const char *key, const char *path,
		       const char *code, const char *why)
{
	const json_t *v = json_object_get(obj, key);
	if (!json_is_string(v) || !json_string_length(v))
		CB_WARN(b->r, 'E', BLOCKED, code, b->manifest_file, mline(b, obj, key), path,
			"seed §3.4, §9 Gate E: %s is missing (%s): the package must not be called "
			"reproducible", path, why);
}

static void commits(struct cb_build *b)
{
	const json_t *g = json_object_get(b->p->manifest, "git_commit_id");
	static const char *const keys[] = {"calcc", "lib/tvm"};
	for (int i = 0; i < 2; i++) {
		char path[40];
		snprintf(path, sizeof path, "git_commit_id.%s", keys[i]);
		const char *v = cb_json_str(g, keys[i]);
		if (!v)
			need_field(b, g, keys[i], path, "SUPPLY_COMMIT_MISSING", "the compiler/TVM commit");
		else if (!hex_of(v, 7, 64))
			CB_WARN(b->r, 'E', BLOCKED, "SUPPLY_FIELD_INVALID", b->manifest_file,
				mline(b, g, keys[i]), path, "seed §3.4: %s '%s' is not a hex commit id",
				path, v);
	}
}

static void chain(struct cb_build *b)
{
	const json_t *sc = json_object_get(b->p->manifest, "supply_chain");
	const char *oci = cb_json_str(sc, "compiler_oci_digest");
	if (!oci)
		need_field(b, sc, "compiler_oci_digest", "supply_chain.compiler_oci_digest",
			   "SUPPLY_CONTAINER_MISSING", "the compiler container digest");
	else if (strncmp(oci, "sha256:", 7) != 0 || !hex_of(oci + 7, 64, 64))
		CB_WARN(b->r, 'E', BLOCKED, "SUPPLY_FIELD_INVALID", b->manifest_file,
			mline(b, sc, "compiler_oci_digest"), "supply_chain.compiler_oci_digest",
			"seed §9 Gate E: the OCI digest is not sha256:<64 hex>");
	need_field(b, sc, "compiler_image", "supply_chain.compiler_image", "SUPPLY_CONTAINER_MISSING",
		   "the compiler container image");
	static const struct {
		const char *key, *why;
		bool hash;
	} f[] = {
		{"quant_config_sha256", "the quant config", true},
		{"calibration_manifest_sha256", "the calibration manifest", true},
		{"oplib_version", "the oplib/kernel version", false},
		{"calbin_schema_version", "the calbin schema version (§4.1: calcc_ver is only a "
		 "hint)", false},
	};
	for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
		char path[64];
		snprintf(path, sizeof path, "supply_chain.%s", f[i].key);
		const char *v = cb_json_str(sc, f[i].key);
		if (!v)
			need_field(b, sc, f[i].key, path, "SUPPLY_FIELD_MISSING", f[i].why);
		else if (f[i].hash && !hex_of(v, 64, 64))
			CB_WARN(b->r, 'E', BLOCKED, "SUPPLY_FIELD_INVALID", b->manifest_file,
				mline(b, sc, f[i].key), path, "seed §9 Gate E: %s is not 64 lowercase "
				"hex digits", path);
	}
	const json_t *rc = json_object_get(sc, "runtime_compat");
	static const char *const rk[] = {"chip", "runtime", "driver", "firmware"};
	for (int i = 0; i < 4; i++) {
		char path[64];
		snprintf(path, sizeof path, "supply_chain.runtime_compat.%s", rk[i]);
		need_field(b, rc ? rc : sc, rc ? rk[i] : "runtime_compat", path, "SUPPLY_FIELD_MISSING",
			   "the runtime/driver/firmware/chip compatibility");
	}
}

static void golden(struct cb_build *b)
{
	const json_t *g = json_object_get(b->p->manifest, "golden_hash");
	static const char *const keys[] = {"golden_prefill", "golden_decode"};
	for (int i = 0; i < 2; i++) {
		char path[40];
		snprintf(path, sizeof path, "golden_hash.%s", keys[i]);
		const json_t *list = json_object_get(g, keys[i]);
		if (!json_is_array(list)) {
			need_field(b, g, keys[i], path, "SUPPLY_FIELD_MISSING", "the golden hashes");
			continue;
		}
		size_t bare = 0, j;
		json_t *e;
		json_array_foreach(list, j, e) {
			bool mapped = json_is_object(e) && json_is_string(json_object_get(e, "tensor")) &&
				      json_object_get(e, "layer") && json_is_string(json_object_get(e, "file")) &&
				      hex_of(cb_json_str(e, "sha256"), 64, 64);
			bare += !mapped;
		}
		if (bare)
			CB_WARN(b->r, 'E', NF_CLASS_NONE, "SUPPLY_GOLDEN_UNMAPPED", b->manifest_file,
				mline(b, g, keys[i]), path,
				"seed §3.4: %zu of %zu golden hashes say no tensor, layer and file "
				"({tensor, layer, file, sha256}): a runner cannot tell what they prove",
				bare, json_array_size(list));
	}
}

void cb_gate_supply(struct cb_build *b)
{
	if (!b->p->manifest)
		return;
	onnx(b);
	commits(b);
	chain(b);
	golden(b);
}

/* ---- service (§8) ------------------------------------------------------------- */

static bool u64_of(const json_t *obj, const char *key, uint64_t *v)
{
	return cb_json_u64(json_object_get(obj, key), v);
}

static void special_tokens(struct cb_build *b, uint64_t vocab, bool has_vocab)
{
	const struct cb_package *p = b->p;
	static const char *const names[] = {"bos", "eos", "pad"};
	for (int i = 0; i < 3; i++) {
		char tok[16], id[16];
		snprintf(tok, sizeof tok, "%s_token", names[i]);
		snprintf(id, sizeof id, "%s_token_id", names[i]);
		const json_t *t = json_object_get(p->tokenizer_config, tok);
		const json_t *ids[2] = {json_object_get(p->generation_config, id),
					json_object_get(p->hf_config, id)};
		bool has = (t && !json_is_null(t)) || json_is_integer(ids[0]) || json_is_integer(ids[1]) ||
			   json_array_size(ids[0]);
		if (!has)
			CB_WARN(b->r, 'S', NF_CLASS_WARNING_SERVICE, "SERVICE_SPECIAL_TOKEN",
				"__Tokenizer/tokenizer_config.json", 0, tok,
				"seed §8: %s is not defined (tokenizer_config.json %s, "
				"generation_config.json or config.json %s)", names[i], tok, id);
		for (int k = 0; k < 2 && has_vocab; k++) {
			uint64_t v;
			if (cb_json_u64(ids[k], &v) && v >= vocab)
				CB_ERR(b->r, 'S', "SERVICE_TOKEN_ID",
				       k ? "__Tokenizer/config.json" : "__Tokenizer/generation_config.json",
				       0, id, "seed §8: %s %" PRIu64 " is not below vocab_size %" PRIu64, id, v,
				       vocab);
		}
	}
}

void cb_gate_service(struct cb_build *b)
{
	struct cb_package *p = b->p;
	uint64_t vocab = 0, S = 0, v;
	bool hv = u64_of(p->hf_config, "vocab_size", &vocab);
	bool hs = u64_of(p->manifest, "seq_len", &S);
	for (size_t i = 0; hv && i < p->nsubmodels; i++) {
		const struct cb_submodel *s = &p->submodels[i];
		for (size_t j = 0; j < s->meta.nbufs; j++) {
			const struct cb_buf *x = &s->meta.bufs[j];
			if (!x->out || !x->rank || x->dims[x->rank - 1] == vocab)
				continue;
			char key[80];
			snprintf(key, sizeof key, "obuf.%.60s", x->name);
			CB_ERR(b->r, 'S', "SERVICE_VOCAB", p->files[s->meta_index].path, x->line, key,
			       "seed §8: the last dimension of %s is %" PRIu64 "; config.json vocab_size is %"
			       PRIu64, x->name, x->dims[x->rank - 1], vocab);
		}
	}
	if (hs) {
		static const struct {
			const char *file, *key;
			int which;
		} ctx[] = {
			{"__Tokenizer/tokenizer_config.json", "model_max_length", 0},
			{"__Tokenizer/config.json", "max_position_embeddings", 1},
		};
		for (int i = 0; i < 2; i++) {
			const json_t *doc = ctx[i].which ? p->hf_config : p->tokenizer_config;
			if (u64_of(doc, ctx[i].key, &v) && v > S)
				CB_WARN(b->r, 'S', NF_CLASS_WARNING_SERVICE, "SERVICE_CONTEXT", ctx[i].file,
					0, ctx[i].key,
					"seed §8, §10: %s %" PRIu64 " is above the calbin context %" PRIu64
					": the service must enforce %" PRIu64 " tokens", ctx[i].key, v, S, S);
		}
	}
	if (p->tokenizer_config || p->generation_config || p->hf_config)
		special_tokens(b, vocab, hv);
}

/* ---- Gate F -------------------------------------------------------------------- */

void cb_gate_runtime(struct cb_build *b)
{
	const struct nf_report *r = b->r;
	char codes[512];
	size_t at = 0, n = 0;
	codes[0] = '\0';
	for (size_t i = 0; i < r->count; i++) {
		const struct nf_finding *f = &r->items[i];
		if (f->severity != NF_SEV_WARNING || !f->gate)
			continue;
		n++;
		if (strstr(codes, f->code) || at + strlen(f->code) + 3 >= sizeof codes)
			continue;
		at += (size_t)snprintf(codes + at, sizeof codes - at, "%s%s", at ? ", " : "", f->code);
	}
	CB_INFO(b->r, 'F', "RUNTIME_NOT_RUN", NULL, 0, NULL,
		"seed §9 Gate F: not run by a static tool (CreateCalbin -> enumerate -> configure -> "
		"golden belong to an independent runner); its report must carry forward %zu static "
		"warning%s%s%s", n, n == 1 ? "" : "s", n ? ": " : "", codes);
}
