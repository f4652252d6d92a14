/* tools/sample.c — the built-in sample artifact (`ninfer-pack sample`).
 *
 * A small but realistic two-layer text model (qwen-like config: H=128,
 * I=128, 2 query heads and 2 KV heads of 16, vocabulary 1024) in mixed
 * formats, with the four Text frontend resources:
 *   layer 0 attention  q4 Q/K parent [64,128] + q5 gate/V parent [64,128]
 *                      (seed §12.3 at small scale; 4 parts bindings)
 *   layer 0 o_proj     q8 [128,32]
 *   layer 0 mlp        gate q6 [128,128], up q2 [128,128], down t2 [128,128]
 *   layer 1 attention  one fp8 row-scale parent [128,128] (Q,K,gate,V)
 *   layer 1 o_proj     bf16 [128,32]
 *   layer 1 mlp        gate/up nvfp4 [256,128] with divisors 2, down bf16
 *   norms, embedding   bf16 (embedding tied to the head)
 *   activation divisors fp32 scalars (auxiliaries of the nvfp4 uses)
 *   proposal token ids int32 [64] (an indexed proposal head over the embedding)
 * Values come from a fixed-seed PRNG through the canonical quantizer
 * (nf_encode_f32), so every run writes the same payload; only the
 * artifact_id differs. */
#include "tools/sample.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/codec.h"

#define H 128
#define I 128
#define HEADS 2
#define HD 16
#define VOCAB 1024
#define PROPOSAL_ROWS 64

static const char tokenizer_json[] =
	"{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n"
	"  \"added_tokens\": [\n"
	"    {\"id\": 1021, \"content\": \"<|endoftext|>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, \"special\": true},\n"
	"    {\"id\": 1022, \"content\": \"<|im_start|>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, \"special\": true},\n"
	"    {\"id\": 1023, \"content\": \"<|im_end|>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, \"special\": true}\n"
	"  ],\n"
	"  \"normalizer\": {\"type\": \"NFC\"},\n"
	"  \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, \"use_regex\": true},\n"
	"  \"post_processor\": null,\n"
	"  \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true},\n"
	"  \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, \"byte_fallback\": false,\n"
	"    \"vocab\": {\"!\": 0, \"\\\"\": 1, \"#\": 2, \"h\": 3, \"e\": 4, \"l\": 5, \"o\": 6, \"he\": 7, \"ll\": 8, \"hell\": 9, \"hello\": 10},\n"
	"    \"merges\": [\"h e\", \"l l\", \"he ll\", \"hell o\"]}\n}\n";
static const char tokenizer_config_json[] =
	"{\n  \"add_bos_token\": false,\n  \"add_prefix_space\": false,\n  \"bos_token\": null,\n"
	"  \"eos_token\": \"<|im_end|>\",\n  \"pad_token\": \"<|endoftext|>\",\n"
	"  \"errors\": \"replace\",\n  \"model_max_length\": 32768,\n"
	"  \"split_special_tokens\": false,\n  \"tokenizer_class\": \"Qwen2Tokenizer\",\n"
	"  \"unk_token\": null\n}\n";
static const char chat_template[] =
	"{%- if messages[0]['role'] == 'system' %}\n"
	"    {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n"
	"{%- endif %}\n"
	"{%- for message in messages %}\n"
	"    {%- if message['role'] != 'system' %}\n"
	"        {{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}\n"
	"    {%- endif %}\n"
	"{%- endfor %}\n"
	"{%- if add_generation_prompt %}\n"
	"    {{- '<|im_start|>assistant\\n' }}\n"
	"{%- endif %}\n";
static const char generation_config_json[] =
	"{\n  \"bos_token_id\": 1021,\n  \"do_sample\": true,\n  \"eos_token_id\": [1023, 1021],\n"
	"  \"pad_token_id\": 1021,\n  \"temperature\": 0.6,\n  \"top_k\": 20,\n  \"top_p\": 0.95\n}\n";

struct rng { uint64_t s; };

static uint64_t next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* roughly normal: sum of four uniforms, centred, unit variance */
static float normal(struct rng *r)
{
	double s = 0;
	for (int i = 0; i < 4; i++)
		s += (double)(next(r) >> 11) / 9007199254740992.0;
	return (float)((s - 2.0) * sqrt(3.0));
}

struct builder {
	struct nf_sample *s;
	size_t cap;
	struct rng r;
	uint64_t end;
	int err;
};

static int push(struct builder *b, json_t *record, uint8_t *buf, uint64_t bytes, bool tensor)
{
	struct nf_sample *s = b->s;
	if (!record || !buf) {
		json_decref(record);
		free(buf);
		return -ENOMEM;
	}
	if (s->nobjects == b->cap) {
		size_t nc = b->cap ? 2 * b->cap : 32;
		struct nf_write_object *o = realloc(s->objects, nc * sizeof *o);
		if (o)
			s->objects = o;
		uint8_t **bb = realloc(s->bufs, nc * sizeof *bb);
		if (bb)
			s->bufs = bb;
		json_t **rr = realloc(s->records, nc * sizeof *rr);
		if (rr)
			s->records = rr;
		if (!o || !bb || !rr) {
			json_decref(record);
			free(buf);
			return -ENOMEM;
		}
		b->cap = nc;
	}
	size_t i = s->nobjects++;
	memset(&s->objects[i], 0, sizeof s->objects[i]);
	s->objects[i].record = record;
	s->objects[i].source = NF_SRC_MEMORY;
	s->objects[i].data = buf;
	s->objects[i].bytes = bytes;
	s->bufs[i] = buf;
	s->records[i] = record;
	if (tensor)
		b->end = (b->end + 255) / 256 * 256;
	b->end += bytes;
	return 0;
}

/* A tensor of `format` with values scale*normal()+bias (or `given`). */
static void tensor(struct builder *b, const char *id, const char *format, uint32_t rank,
		   const uint64_t *shape, uint64_t divisors, float scale, float bias, const float *given)
{
	if (b->err)
		return;
	enum nf_format f = nf_format_from_name(format);
	const char *layout = f == NF_FORMAT_NVFP4 ? "block_scale_k16_m128x4_v1"
			     : f == NF_FORMAT_FP8_E4M3FN_ROW_BF16 ? "row_scale_v1"
			     : (f == NF_FORMAT_BF16 || f == NF_FORMAT_FP32 || f == NF_FORMAT_INT32)
				     ? "contiguous_le_v1"
				     : "row_split_k128_v1";
	struct nf_geometry g;
	if (nf_geometry_init(&g, format, layout, rank, shape, divisors) != NF_CODEC_OK) {
		b->err = -EINVAL;
		return;
	}
	float *v = malloc(g.elements * sizeof *v);
	uint8_t *buf = calloc(1, g.bytes);
	json_t *shp = json_array();
	for (uint32_t i = 0; shp && i < rank; i++)
		json_array_append_new(shp, json_integer((json_int_t)shape[i]));
	json_t *rec = json_pack("{s:s,s:o,s:s,s:s}", "id", id, "shape", shp, "format", format, "layout", layout);
	if (rec && divisors != 1)
		json_object_set_new(rec, "divisors", json_integer((json_int_t)divisors));
	if (rec)
		json_object_set_new(rec, "kind", json_string("tensor"));
	if (!v || !buf || !rec) {
		free(v);
		free(buf);
		json_decref(rec);
		b->err = -ENOMEM;
		return;
	}
	for (uint64_t i = 0; i < g.elements; i++)
		v[i] = given ? given[i] : scale * normal(&b->r) + bias;
	int rc = nf_encode_f32(&g, v, buf);
	free(v);
	if (rc) {
		free(buf);
		json_decref(rec);
		b->err = rc;
		return;
	}
	b->err = push(b, rec, buf, g.bytes, true);
}

static void resource(struct builder *b, const char *id, const char *text)
{
	if (b->err)
		return;
	size_t n = strlen(text);
	uint8_t *buf = malloc(n);
	if (buf)
		memcpy(buf, text, n);
	b->err = push(b, json_pack("{s:s,s:s,s:s}", "id", id, "encoding", "raw_bytes_v1", "kind", "resource"),
		      buf, n, false);
}

static json_t *part(const char *obj, uint64_t b0, uint64_t b1)
{
	return json_pack("{s:[{s:s,s:[I,I]}]}", "parts", "object", obj, "range", (json_int_t)b0, (json_int_t)b1);
}

static json_t *whole(const char *obj) { return json_pack("{s:s}", "object", obj); }

static json_t *use(const char *param, const char *input, const char *policy, json_t *aux)
{
	json_t *u = json_pack("{s:s,s:s}", "parameter", param, "input", input);
	if (u && policy)
		json_object_set_new(u, "activation_policy", json_string(policy));
	if (u && aux)
		json_object_set_new(u, "auxiliaries", aux);
	return u;
}

int nf_sample_build(struct nf_sample *s)
{
	memset(s, 0, sizeof *s);
	struct builder b = {.s = s, .r = {0x73616d706c65ull}};
	const uint64_t q = (uint64_t)HEADS * HD * H;   /* elements of Q (= K = gate = V) */
	uint64_t s_vh[2] = {VOCAB, H}, s_h[1] = {H}, s_hd[1] = {HD}, s_qk[2] = {2 * HEADS * HD, H},
		 s_o[2] = {H, HEADS * HD}, s_ih[2] = {I, H}, s_hi[2] = {H, I},
		 s_att1[2] = {4 * HEADS * HD, H}, s_gu[2] = {2 * I, H}, s_ids[1] = {PROPOSAL_ROWS};

	tensor(&b, "w.embed", "bf16", 2, s_vh, 1, 0.02f, 0, NULL);
	tensor(&b, "w.layers.0.input_norm", "bf16", 1, s_h, 1, 0.05f, 1.0f, NULL);
	tensor(&b, "w.layers.0.attn.qk", "q4_g64_fp16", 2, s_qk, 1, 0.03f, 0, NULL);
	tensor(&b, "w.layers.0.attn.gv", "q5_g64_fp16", 2, s_qk, 1, 0.03f, 0, NULL);
	tensor(&b, "w.layers.0.attn.q_norm", "bf16", 1, s_hd, 1, 0.05f, 1.0f, NULL);
	tensor(&b, "w.layers.0.attn.k_norm", "bf16", 1, s_hd, 1, 0.05f, 1.0f, NULL);
	tensor(&b, "w.layers.0.attn.o", "q8_g32_fp16", 2, s_o, 1, 0.03f, 0, NULL);
	tensor(&b, "w.layers.0.post_norm", "bf16", 1, s_h, 1, 0.05f, 1.0f, NULL);
	tensor(&b, "w.layers.0.mlp.gate", "q6_g64_fp16", 2, s_ih, 1, 0.03f, 0, NULL);
	tensor(&b, "w.layers.0.mlp.up", "q2_g64_fp16", 2, s_ih, 1, 0.03f, 0, NULL);
	tensor(&b, "w.layers.0.mlp.down", "t2_g128_fp16", 2, s_hi, 1, 0.03f, 0, NULL);
	tensor(&b, "w.layers.1.input_norm", "bf16", 1, s_h, 1, 0.05f, 1.0f, NULL);
	tensor(&b, "w.layers.1.attn.qkgv", "fp8_e4m3fn_row_bf16", 2, s_att1, 1, 0.03f, 0, NULL);
	tensor(&b, "w.layers.1.attn.q_norm", "bf16", 1, s_hd, 1, 0.05f, 1.0f, NULL);
	tensor(&b, "w.layers.1.attn.k_norm", "bf16", 1, s_hd, 1, 0.05f, 1.0f, NULL);
	tensor(&b, "w.layers.1.attn.o", "bf16", 2, s_o, 1, 0.03f, 0, NULL);
	tensor(&b, "w.layers.1.post_norm", "bf16", 1, s_h, 1, 0.05f, 1.0f, NULL);
	tensor(&b, "w.layers.1.mlp.gate_up", "nvfp4", 2, s_gu, 2, 0.03f, 0, NULL);
	tensor(&b, "w.layers.1.mlp.down", "bf16", 2, s_hi, 1, 0.03f, 0, NULL);
	tensor(&b, "w.final_norm", "bf16", 1, s_h, 1, 0.05f, 1.0f, NULL);
	{
		float one = 0.0625f;
		tensor(&b, "a.layers.1.mlp.input_divisor", "fp32", 0, NULL, 1, 0, 0, &one);
		float ids[PROPOSAL_ROWS];
		for (int i = 0; i < PROPOSAL_ROWS; i++) {
			int32_t t = (int32_t)(i * 13 % VOCAB);
			memcpy(&ids[i], &t, 4);   /* int32 objects take bit patterns */
		}
		tensor(&b, "w.proposal.token_ids", "int32", 1, s_ids, 1, 0, 0, ids);
	}
	resource(&b, "r.tokenizer", tokenizer_json);
	resource(&b, "r.tokenizer_config", tokenizer_config_json);
	resource(&b, "r.chat_template", chat_template);
	resource(&b, "r.generation_config", generation_config_json);
	if (b.err)
		goto fail;

	json_t *config = json_pack(
		"{s:[s],s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:f,s:f,s:i,s:b,s:b,s:[s,s],s:s}",
		"architectures", "Qwen3_5ForCausalLM", "model_type", "qwen3_5_text", "hidden_size", H,
		"intermediate_size", I, "num_attention_heads", HEADS, "num_key_value_heads", HEADS,
		"head_dim", HD, "num_hidden_layers", 2, "vocab_size", VOCAB, "rms_norm_eps", 1e-6,
		"rope_theta", 1000000.0, "max_position_embeddings", 32768, "tie_word_embeddings", 1,
		"attn_output_gate", 1, "layer_types", "full_attention", "full_attention", "hidden_act", "silu");
	json_t *text = json_pack("{s:o,s:{s:s,s:s,s:s,s:s},s:{s:s,s:i}}", "config", config, "resources",
				 "tokenizer.json", "r.tokenizer", "tokenizer_config.json", "r.tokenizer_config",
				 "chat_template.jinja", "r.chat_template", "generation_config.json",
				 "r.generation_config", "proposal", "domain", "indexed", "rows", PROPOSAL_ROWS);
	json_t *bind = json_object(), *uses = json_array();
	if (!text || !bind || !uses) {
		json_decref(text);
		json_decref(bind);
		json_decref(uses);
		goto nomem;
	}
	json_object_set_new(bind, "text/embed_tokens", whole("w.embed"));
	json_object_set_new(bind, "text/lm_head", whole("w.embed"));
	json_object_set_new(bind, "proposal/head", part("w.embed", 0, (uint64_t)PROPOSAL_ROWS * H));
	json_object_set_new(bind, "proposal/token_ids", whole("w.proposal.token_ids"));
	json_array_append_new(uses, use("text/embed_tokens", "text/token_ids", NULL, NULL));
	for (int l = 0; l < 2; l++) {
		char n[160], o[160], in[160];
		static const char *const roles[4] = {"query", "key", "gate", "value"};
		for (int k = 0; k < 4; k++) {
			snprintf(n, sizeof n, "text/layers/%d/attention/%s", l, roles[k]);
			if (l == 0)
				json_object_set_new(bind, n, part(k < 2 ? "w.layers.0.attn.qk" : "w.layers.0.attn.gv",
								  (uint64_t)(k % 2) * q, (uint64_t)(k % 2 + 1) * q));
			else
				json_object_set_new(bind, n, part("w.layers.1.attn.qkgv", (uint64_t)k * q,
								  (uint64_t)(k + 1) * q));
			snprintf(in, sizeof in, "text/layers/%d/mixer_input", l);
			json_array_append_new(uses, use(n, in, l == 0 ? "A16Only" : "AllowA8", NULL));
		}
#define BIND(suffix, obj)                                                         \
	do {                                                                      \
		snprintf(n, sizeof n, "text/layers/%d/%s", l, suffix);            \
		snprintf(o, sizeof o, "w.layers.%d.%s", l, obj);                  \
		json_object_set_new(bind, n, whole(o));                           \
	} while (0)
		BIND("input_layernorm", "input_norm");
		BIND("attention/q_norm", "attn.q_norm");
		BIND("attention/k_norm", "attn.k_norm");
		BIND("attention/output", "attn.o");
		BIND("post_attention_layernorm", "post_norm");
		BIND("mlp/down", "mlp.down");
		snprintf(n, sizeof n, "text/layers/%d/attention/output", l);
		snprintf(in, sizeof in, "text/layers/%d/attention_product", l);
		json_array_append_new(uses, use(n, in, "AllowA8", NULL));
		if (l == 0) {
			BIND("mlp/gate", "mlp.gate");
			BIND("mlp/up", "mlp.up");
		} else {
			json_object_set_new(bind, "text/layers/1/mlp/gate",
					    part("w.layers.1.mlp.gate_up", 0, (uint64_t)I * H));
			json_object_set_new(bind, "text/layers/1/mlp/up",
					    part("w.layers.1.mlp.gate_up", (uint64_t)I * H, (uint64_t)2 * I * H));
		}
#undef BIND
		snprintf(in, sizeof in, "text/layers/%d/mlp_input", l);
		for (int k = 0; k < 2; k++) {
			snprintf(n, sizeof n, "text/layers/%d/mlp/%s", l, k ? "up" : "gate");
			json_array_append_new(
				uses, use(n, in, l == 0 ? "AllowA8" : "AllowA4",
					  l == 0 ? NULL
						 : json_pack("{s:{s:s}}", "activation_input_divisor", "object",
							     "a.layers.1.mlp.input_divisor")));
		}
		snprintf(n, sizeof n, "text/layers/%d/mlp/down", l);
		snprintf(in, sizeof in, "text/layers/%d/mlp/product", l);
		json_array_append_new(uses, use(n, in, "A16Only", NULL));
	}
	json_object_set_new(bind, "text/final_norm", whole("w.final_norm"));
	json_array_append_new(uses, use("text/lm_head", "text/final_hidden", "AllowA8", NULL));
	json_array_append_new(uses, use("proposal/head", "text/final_hidden", "AllowA8", NULL));

	s->directory = json_pack(
		"{s:{s:o},s:o,s:o,s:{s:s,s:s},s:{s:s,s:s,s:i}}", "components", "text", text, "bindings", bind,
		"uses", uses, "metadata", "name", "ninfer-sample-tiny", "description",
		"synthetic two-layer text model in mixed formats (ninfer-pack sample)", "provenance",
		"generator", "ninfer-pack sample", "recipe",
		"fixed-seed normal values through the canonical quantizer", "seed", 0x6c65);
	if (!s->directory)
		goto nomem;
	s->payload_bytes = b.end;
	/* about four files: parts of a quarter of the payload (seed §2.3 capacities) */
	s->default_max_file_bytes = (b.end / 4 + 4095) / 4096 * 4096 + 8192;
	return 0;
nomem:
	b.err = -ENOMEM;
fail:
	nf_sample_free(s);
	return b.err;
}

void nf_sample_free(struct nf_sample *s)
{
	for (size_t i = 0; i < s->nobjects; i++) {
		free(s->bufs[i]);
		json_decref(s->records[i]);
	}
	free(s->bufs);
	free(s->records);
	free(s->objects);
	json_decref(s->directory);
	memset(s, 0, sizeof *s);
}
