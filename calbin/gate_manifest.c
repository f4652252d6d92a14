/* calbin/gate_manifest.c — Gate B for the root manifest (seed §3, §9 Gate B
 * "必填 key/type -> submodel count/name").
 *
 * The keys and types of issue 12's conventions: model_name, seq_len,
 * one_model_cfg with exactly the submodels prefill and decode, each with
 * model_path, input_shape, model_info (§3.2), device_cfg and calcc_env_cfg
 * (§3.3).  The supply-chain keys (§3.4) are Gate E's: only their types are
 * checked here. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "calbin/internal.h"

enum want { W_STR, W_INT, W_POSINT, W_NUM, W_BOOL, W_MAP, W_LIST, W_SHAPE };

static const char *want_name(enum want w)
{
	switch (w) {
	case W_STR: return "a string";
	case W_INT: return "an integer";
	case W_POSINT: return "a positive integer";
	case W_NUM: return "a number";
	case W_BOOL: return "a boolean";
	case W_MAP: return "a mapping";
	case W_LIST: return "a list";
	case W_SHAPE: return "a list of non-negative integers";
	}
	return "?";
}

static bool is_shape(const json_t *v)
{
	if (!json_is_array(v))
		return false;
	size_t i;
	json_t *d;
	json_array_foreach(v, i, d)
		if (!json_is_integer(d) || json_integer_value(d) < 0)
			return false;
	return true;
}

static bool fits(const json_t *v, enum want w)
{
	switch (w) {
	case W_STR: return json_is_string(v) && json_string_length(v) > 0;
	case W_INT: return json_is_integer(v) && json_integer_value(v) >= 0;
	case W_POSINT: return json_is_integer(v) && json_integer_value(v) > 0;
	case W_NUM: return json_is_number(v);
	case W_BOOL: return json_is_boolean(v);
	case W_MAP: return json_is_object(v);
	case W_LIST: return json_is_array(v);
	case W_SHAPE: return is_shape(v);
	}
	return false;
}

static char *path2(const char *a, const char *b)
{
	char *s = NULL;
	if (!a || !*a)
		return strdup(b);
	return asprintf(&s, "%s.%s", a, b) < 0 ? NULL : s;
}

/* Check obj.key against w; the value or NULL.  missing_code NULL: optional. */
static json_t *need(struct cb_build *b, const json_t *obj, const char *obj_path, uint64_t obj_line,
		    const char *key, enum want w, const char *section, bool required)
{
	json_t *v = json_object_get(obj, key);
	char *path = path2(obj_path, key);
	if (!path) {
		b->r->oom = true;
		return NULL;
	}
	if (!v) {
		if (required) {
			CB_ERR(b->r, 'B', "MANIFEST_KEY_MISSING", b->manifest_file, obj_line, path,
			       "seed %s: the required key '%s' is missing (%s)", section, path,
			       want_name(w));
			b->manifest_ok = false;
		}
	} else if (!fits(v, w)) {
		CB_ERR(b->r, 'B', "MANIFEST_KEY_TYPE", b->manifest_file,
		       cb_yaml_line(&b->manifest_doc, obj, key), path,
		       "seed %s: '%s' must be %s", section, path, want_name(w));
		b->manifest_ok = false;
		v = NULL;
	}
	free(path);
	return v;
}

static uint64_t line_of(struct cb_build *b, const json_t *obj, const char *key)
{
	return cb_yaml_line(&b->manifest_doc, obj, key);
}

static void check_submodel(struct cb_build *b, json_t *cfg, const char *name, uint64_t line)
{
	char *base = path2("one_model_cfg", name);
	if (!base) {
		b->r->oom = true;
		return;
	}
	need(b, cfg, base, line, "model_path", W_STR, "§3.1", true);
	json_t *shape = need(b, cfg, base, line, "input_shape", W_MAP, "§3.1", true);
	if (shape) {
		char *sp = path2(base, "input_shape");
		const char *k;
		json_t *v;
		json_object_foreach(shape, k, v)
			if (sp && !is_shape(v))
				need(b, shape, sp, 0, k, W_SHAPE, "§3.1", true);
		if (sp && !json_object_get(shape, "input_ids"))
			need(b, shape, sp, line_of(b, cfg, "input_shape"), "input_ids", W_SHAPE, "§3.1",
			     true);
		if (sp && !json_object_get(shape, "position_ids"))
			need(b, shape, sp, line_of(b, cfg, "input_shape"), "position_ids", W_SHAPE,
			     "§3.1", true);
		free(sp);
	}
	static const struct {
		const char *key;
		enum want w;
	} info[] = {
		{"batch_num", W_POSINT}, {"q0_head_num", W_POSINT}, {"k0_head_num", W_POSINT},
		{"v_head_num", W_POSINT}, {"theta_base", W_NUM}, {"max_seq_len", W_POSINT},
		{"is_encoder", W_BOOL}, {"is_prefill", W_BOOL}, {"alibi", W_BOOL},
	};
	json_t *mi = need(b, cfg, base, line, "model_info", W_MAP, "§3.2", true);
	if (mi) {
		char *mp = path2(base, "model_info");
		uint64_t ml = line_of(b, cfg, "model_info");
		for (size_t i = 0; mp && i < sizeof info / sizeof *info; i++)
			need(b, mi, mp, ml, info[i].key, info[i].w, "§3.2", true);
		/* "*_head_dim": at least one, every one a positive integer. */
		bool dim = false;
		const char *k;
		json_t *v;
		json_object_foreach(mi, k, v) {
			size_t n = strlen(k);
			if (n > 9 && strcmp(k + n - 9, "_head_dim") == 0) {
				dim = true;
				if (mp)
					need(b, mi, mp, ml, k, W_POSINT, "§3.2", true);
			}
		}
		if (!dim && mp)
			need(b, mi, mp, ml, "k0_head_dim", W_POSINT, "§3.2 (*_head_dim)", true);
		free(mp);
	}
	json_t *dc = need(b, cfg, base, line, "device_cfg", W_MAP, "§3.3", true);
	if (dc) {
		char *dp = path2(base, "device_cfg");
		uint64_t dl = line_of(b, cfg, "device_cfg");
		if (dp) {
			json_t *c = need(b, dc, dp, dl, "chip_nums", W_POSINT, "§3.3", true);
			if (c && json_integer_value(c) > CB_MAX_CHIPS) {
				CB_ERR(b->r, 'B', "MANIFEST_KEY_TYPE", b->manifest_file,
				       line_of(b, dc, "chip_nums"), "device_cfg.chip_nums",
				       "seed §4.3: chip_nums %" JSON_INTEGER_FORMAT " exceeds the %d "
				       "chips a mask can name", json_integer_value(c), CB_MAX_CHIPS);
				b->manifest_ok = false;
			}
			need(b, dc, dp, dl, "calcore_num", W_POSINT, "§3.3", true);
		}
		free(dp);
	}
	static const char *const env[] = {
		"with_codegen", "with_op_case", "with_c_oplib", "use_auto_alloc",
		"enable_flash_attention", "enable_one_token", "dynamic_d2d", "has_loaded_onnx",
		"has_optimized_graph",
	};
	json_t *ec = need(b, cfg, base, line, "calcc_env_cfg", W_MAP, "§3.3", true);
	if (ec) {
		char *ep = path2(base, "calcc_env_cfg");
		uint64_t el = line_of(b, cfg, "calcc_env_cfg");
		for (size_t i = 0; ep && i < sizeof env / sizeof *env; i++)
			need(b, ec, ep, el, env[i], W_BOOL, "§3.3", true);
		free(ep);
	}
	free(base);
}

/* The types of the supply-chain keys (§3.4); their presence is Gate E's. */
static void supply_types(struct cb_build *b, json_t *root)
{
	need(b, root, "", 0, "onnx_hash", W_LIST, "§3.4", false);
	json_t *g = need(b, root, "", 0, "git_commit_id", W_MAP, "§3.4", false);
	if (g) {
		need(b, g, "git_commit_id", 0, "calcc", W_STR, "§3.4", false);
		need(b, g, "git_commit_id", 0, "lib/tvm", W_STR, "§3.4", false);
	}
	json_t *gh = need(b, root, "", 0, "golden_hash", W_MAP, "§3.4", false);
	if (gh) {
		need(b, gh, "golden_hash", 0, "golden_prefill", W_LIST, "§3.4", false);
		need(b, gh, "golden_hash", 0, "golden_decode", W_LIST, "§3.4", false);
	}
	json_t *sc = need(b, root, "", 0, "supply_chain", W_MAP, "§3.4", false);
	if (sc) {
		static const char *const strs[] = {
			"compiler_oci_digest", "compiler_image", "quant_config_sha256",
			"calibration_manifest_sha256", "oplib_version", "calbin_schema_version",
		};
		for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
			need(b, sc, "supply_chain", 0, strs[i], W_STR, "§3.4", false);
		json_t *rc = need(b, sc, "supply_chain", 0, "runtime_compat", W_MAP, "§3.4", false);
		if (rc) {
			static const char *const rs[] = {"chip", "runtime", "driver", "firmware"};
			for (size_t i = 0; i < 4; i++)
				need(b, rc, "supply_chain.runtime_compat", 0, rs[i], W_STR, "§3.4", false);
		}
	}
}

void cb_gate_manifest(struct cb_build *b)
{
	json_t *root = b->p->manifest;
	if (!root)
		return;
	b->manifest_ok = true;
	if (!json_is_object(root)) {
		CB_ERR(b->r, 'B', "MANIFEST_KEY_TYPE", b->manifest_file, b->manifest_doc.root_line,
		       NULL, "seed §3: the root manifest is not a mapping");
		b->manifest_ok = false;
		json_decref(b->p->manifest);
		b->p->manifest = NULL;
		return;
	}
	need(b, root, "", 0, "model_name", W_STR, "§3.4", true);
	need(b, root, "", 0, "seq_len", W_POSINT, "§3.4", true);
	supply_types(b, root);
	json_t *omc = need(b, root, "", 0, "one_model_cfg", W_MAP, "§3.1", true);
	if (!omc)
		return;
	uint64_t oline = line_of(b, root, "one_model_cfg");
	const char *k;
	json_t *v;
	size_t nprefill = 0, ndecode = 0;
	json_object_foreach(omc, k, v) {
		int kind = strcmp(k, "prefill") == 0 ? 0 : strcmp(k, "decode") == 0 ? 1 : -1;
		uint64_t line = line_of(b, omc, k);
		if (kind < 0) {
			CB_ERR(b->r, 'B', "SUBMODEL_NAME", b->manifest_file, line, "one_model_cfg",
			       "seed §3.1, §10: one_model_cfg has the submodel '%s'; only 'prefill' "
			       "and 'decode' are known", k);
			continue;
		}
		kind == 0 ? nprefill++ : ndecode++;
		if (!json_is_object(v)) {
			need(b, omc, "one_model_cfg", oline, k, W_MAP, "§3.1", true);
			continue;
		}
		b->cfg[kind] = v;
		b->cfg_key[kind] = k;
		check_submodel(b, v, k, line);
	}
	if (nprefill != 1 || ndecode != 1)
		CB_ERR(b->r, 'B', "SUBMODEL_COUNT", b->manifest_file, oline, "one_model_cfg",
		       "seed §10: exactly one prefill and one decode submodel are required; "
		       "one_model_cfg has %zu prefill and %zu decode", nprefill, ndecode);
}
