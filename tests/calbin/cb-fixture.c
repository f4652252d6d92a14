/* tests/calbin/cb-fixture.c — writes synthetic Calculet calbin packages
 * with the structure and figures of seed 004's sample, and every hostile
 * variant calbin-check's tests need.
 *
 *   cb-fixture OUTDIR [--variant NAME] [--small] [--full] [--x86-so PATH]
 *   cb-fixture --list
 *
 * The package is OUTDIR/<MODEL>/ (the directory name is the model name);
 * its path is printed.  The figures (seed §2-§7): Qwen3-30B-A3B, batch 1,
 * context 40960, 2 chips x 2 CCU cores, 48 layers, 32 Q heads, 4 KV heads,
 * head_dim 128, vocab 151936; prefill 1496 ops, decode 1398; profparts
 * 1352/1351 and 1254/1253 lines; param_blk0.bin 9,404,557,312 bytes and
 * param_blk1.bin 8,782,227,456 (sparse, with a pattern at the start of
 * every mapped range); DRAM 15,113,064,448 B, SRAM 17,662,336 B and sync
 * 20 B reserved per chip; the prefill op I/O address union 14.091 GiB and
 * the decode's 10.634 GiB.  The PLD command dumps of the prefill hold
 * 444,610 (chip 0) and 444,608 (chip 1) commands of 18.979 / 18.822 GiB in
 * --full mode, 1/100 of that otherwise.  --small shrinks the parameter
 * blocks (every DRAM tensor /1024) for fast tests; the figures then differ
 * only where the blocks do.
 *
 * "clean" (the default) passes with no warning; "sample" is the seed's
 * sample as described (prefill smodel_type llm_decode, 16777216 MB, a
 * 131072-token tokenizer, no ONNX, no supply chain, unmapped golden
 * hashes, no SHA256SUMS); every other variant is clean plus one defect
 * (--list names them).  SHA256SUMS is written last, over the files as
 * they are, so a variant's defect is the only one. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "elfw.h"

#ifndef CB_X86_SO
#define CB_X86_SO ""
#endif

#define MODEL "Qwen3-30B-A3B-bs1-ctx40960-2chip"
#define PREFILL MODEL "_prefill_0"
#define DECODE MODEL "_decode_1"
#define CHIPS 2
#define CORES 2
#define SEQ UINT64_C(40960)
#define HIDDEN UINT64_C(2048)
#define VOCAB UINT64_C(151936)
#define KV_HEADS 4u
#define HEAD_DIM UINT64_C(128)
#define Q_HEADS 32

#define DRAM_BASE UINT64_C(0x100000000)
#define DRAM_SIZE UINT64_C(15113064448)
#define SRAM_BASE UINT64_C(0x10000000)
#define SRAM_SIZE UINT64_C(17662336)
#define SYNC_BASE UINT64_C(0x10000)
#define SYNC_SIZE UINT64_C(20)
#define KV_PER_CHIP UINT64_C(2013265920)       /* 48 * 2 heads * 2 * 128 * 40960 * 2 */
#define KV_PER_LAYER (KV_PER_CHIP / 48) /* K and V of one layer, one chip */
#define DECODE_POOL (UINT64_C(768) << 10)
#define SRAM_SPARE (UINT64_C(1) << 20)        /* prefill leaves 1 MiB of SRAM untouched */

static const char *onnx_path = "/data/vendor/export/qwen3_30b_a3b/qwen3_30b_a3b.onnx";
static const char *onnx_name = "qwen3_30b_a3b.onnx";

/* ---- variants ------------------------------------------------------------------ */

static const struct variant {
	const char *name, *what;
} variants[] = {
	{"clean", "no finding but infos: pass"},
	{"sample", "the seed's sample: vendor, service and reproducibility warnings"},
	{"missing_required", "the prefill's ccu1_chip1.elf removed"},
	{"empty_required", "the decode's cpu_chip0_ping.bin empty"},
	{"symlink_passwd", "__Tokenizer/merges.txt a symlink to /etc/passwd"},
	{"symlink_parent", "hparam.yaml a symlink to ../x"},
	{"symlink_inside", "version.py a symlink to hparam.yaml (inside: accepted)"},
	{"fifo", "a FIFO beside the manifest"},
	{"unknown_file", "an extra notes.txt"},
	{"yaml_syntax", "hparam.yaml with a syntax error on line 3"},
	{"yaml_alias_bomb", "hparam.yaml: a billion-laughs alias bomb"},
	{"yaml_deep", "hparam.yaml: 10,000-deep nesting"},
	{"yaml_tag", "hparam.yaml: a !!python/object tag"},
	{"meta_extra_field", "a parameter-map line with an extra field"},
	{"meta_hex_no_0x", "a parameter-map vaddr without 0x"},
	{"meta_size_hex", "sync_rsvd size in hex"},
	{"map_past_end", "the last param_blk1.bin map line 0x1000 past the end"},
	{"map_zero_mask", "a map line with chip mask 0"},
	{"map_overlap", "two map lines overlapping on chip 0 (reported, not judged)"},
	{"map_missing_file", "a map line naming param_blk2.bin"},
	{"map_duplicate", "a map line repeated (duplicate file range, reported)"},
	{"profpart_unknown_op", "a profparts line naming an op the graph lacks"},
	{"profpart_duplicate", "an op twice in one chip's profparts"},
	{"unknown_dtype", "an op I/O entry of type bfloat17"},
	{"ibuf_off_by_one", "the prefill ibuf input_ids size 163841"},
	{"io_dtype", "the decode obuf of type float8"},
	{"kv_unpaired", "past_key_47 without past_value_47 (prefill)"},
	{"layers47", "47 layers in the graph, 48 in config.json"},
	{"heads_mismatch", "config.json num_key_value_heads 8"},
	{"smodel_type", "the prefill's smodel_type llm_decode"},
	{"batch_mismatch", "the decode metadata n_batch 2"},
	{"context_mismatch", "the root seq_len 32768"},
	{"name_mismatch", "model_arch of the top metadata another name"},
	{"two_prefill", "the decode directory renamed to a second prefill"},
	{"decl_mask", "cpu_chip1_ping.bin declared with chip 0's mask"},
	{"pingpong_missing", "the prefill's pld_chip1_pong.bin removed"},
	{"elf_machine", "ccu0_chip0.elf of the decode is x86-64"},
	{"so_machine", "the *_x86.so is a RISC-V file"},
	{"cmd_count", "a command .bin whose count disagrees with its dump"},
	{"cmd_syntax", "a command dump line with a bad field"},
	{"no_onnx", "no ONNX delivered"},
	{"onnx_hash_wrong", "the delivered ONNX does not match onnx_hash"},
	{"no_container", "supply_chain without compiler_oci_digest"},
	{"golden_unmapped", "golden hashes as bare hex strings"},
	{"mem_unit", "device_memory_required 16777216 MB"},
	{"tokenizer_context", "tokenizer_config model_max_length 131072"},
	{"vocab_mismatch", "config.json vocab_size 152064"},
	{"hash_wrong", "SHA256SUMS with one wrong digest (hparam.yaml)"},
	{"no_hash_manifest", "no SHA256SUMS"},
	{"no_commit", "git_commit_id without lib/tvm"},
	{"manifest_key_missing", "the decode model_info without theta_base"},
	{"manifest_key_type", "the prefill batch_num a string"},
	{"submodel_name", "one_model_cfg with a third submodel 'draft'"},
	{"meta_value", "model_type vlm"},
	{"meta_key_missing", "no calcc_ver line"},
	{"symlink_broken", "version.py a symlink to nothing"},
	{"symlink_dir", "__Tokenizer/again a symlink to its own directory"},
	{"hash_listed_missing", "SHA256SUMS lists ghost.bin"},
	{"hash_uncovered", "SHA256SUMS without version.py"},
	{"hash_syntax", "a SHA256SUMS line with a short digest"},
	{"json_syntax", "generation_config.json not JSON"},
	{"chips_mismatch", "the decode device_cfg chip_nums 4"},
	{"role_conflict", "the decode is_prefill true"},
	{"device_mismatch", "runtime_compat.chip ks2"},
	{"io_pingpong", "the decode obuf with pong = ping"},
	{"io_missing", "the decode without its position_ids ibuf"},
	{"decl_undeclared", "the decode metadata without ccu1_chip0.elf"},
	{"decl_path", "a declaration naming ../x.bin"},
	{"elf_invalid", "the decode's ccu1_chip0.elf not an ELF"},
	{"opio_syntax", "an op I/O entry with three fields"},
	{"opio_role", "an op I/O role input_500"},
	{"profpart_syntax", "a profparts line with a blank"},
	{"map_domain", "a map line outside every reservation"},
	{"cmd_mask", "a command with chip 2's mask (2 chips)"},
	{"cmd_bin_header", "a command .bin without CALCMD01"},
	{"cmd_id_sequence", "a command dump whose ids skip one"},
	{"kv_unknown", "no k0_head_dim and no config.json head_dim"},
	{"kv_heads3", "3 KV heads on 2 chips"},
	{"opio_outside", "an op I/O address in no reservation"},
	{"mem_capacity", "dram_rsvd smaller than parameters + KV"},
	{"onnx_hash_missing", "no onnx_hash"},
	{"field_invalid", "quant_config_sha256 not a digest"},
	{"special_token", "no PAD token anywhere"},
	{"token_id", "generation_config bos_token_id 200000"},
	{"tokenizer_missing", "no __Tokenizer/vocab.json"},
	{"optional_missing", "no version.py"},
	{"pkg_limit", "directories nested 9 deep"},
	{"json_too_large", "a 65 MiB tokenizer_config.json"},
	{"big_file", "a 65 MiB ONNX (sparse): beyond what --fast hashes"},
	{"big_hash_wrong", "a 65 MiB ONNX whose SHA256SUMS digest is wrong"},
};

struct gen {
	char root[4096];       /* the package directory */
	char outdir[4096];
	const char *v;         /* variant name */
	bool small, full;
	const char *x86_so;
	unsigned layers;       /* in the graph */
	unsigned hf_layers;    /* config.json */
	unsigned kv_heads;     /* manifest and config.json */
	uint64_t ws;           /* workspace base (DRAM, after params and KV) */
	uint64_t kv_base;
	char onnx_sha[65];
};

static bool is(const struct gen *g, const char *name)
{
	return strcmp(g->v, name) == 0;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "cb-fixture: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static char *pathf(const struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *pathf(const struct gen *g, const char *fmt, ...)
{
	static char buf[8][8192];
	static int next;
	char rel[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rel, sizeof rel, fmt, ap);
	va_end(ap);
	char *b = buf[next++ % 8];
	snprintf(b, 8192, "%s/%s", g->root, rel);
	return b;
}

static FILE *openw(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		die("%s: %s", path, strerror(errno));
	return f;
}

static void closew(FILE *f, const char *path)
{
	if (ferror(f) || fclose(f) != 0)
		die("%s: write failed", path);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = openw(path);
	fputs(text, f);
	closew(f, path);
}

static void sha256_file(const char *path, char hex[65])
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	static __thread unsigned char buf[1 << 20];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		EVP_DigestUpdate(c, buf, (size_t)n);
	if (n < 0)
		die("%s: read: %s", path, strerror(errno));
	close(fd);
	unsigned char md[32];
	unsigned len = 0;
	EVP_DigestFinal_ex(c, md, &len);
	EVP_MD_CTX_free(c);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
}

/* ---- parameter blocks (§2, §4.3) --------------------------------------------------- */

enum dom { DRAM, SRAM };

struct seg {
	char name[48];
	uint64_t bytes, offset, vaddr;
	enum dom dom;
	const char *dtype;
	int layer;             /* -1: not a layer's */
	int chip;
};

struct segs {
	struct seg *v;
	size_t n, cap;
};

static struct segs segs[CHIPS];

static void add_seg(struct segs *s, int chip, const char *name, int layer, uint64_t bytes,
		    enum dom dom, const char *dtype, uint64_t *off, uint64_t *dv, uint64_t *sv)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 512;
		s->v = realloc(s->v, s->cap * sizeof *s->v);
		if (!s->v)
			die("out of memory");
	}
	struct seg *x = &s->v[s->n++];
	snprintf(x->name, sizeof x->name, "%s", name);
	x->bytes = bytes;
	x->offset = *off;
	x->dom = dom;
	x->dtype = dtype;
	x->layer = layer;
	x->chip = chip;
	x->vaddr = dom == DRAM ? *dv : *sv;
	*off += bytes;
	if (dom == DRAM)
		*dv += bytes;
	else
		*sv += bytes;
}

/* Sizes in bytes (per chip, tensor parallel); --small divides the DRAM ones. */
static uint64_t dram_bytes(const struct gen *g, uint64_t full, uint64_t small)
{
	return g->small ? small : full;
}

static void build_segments(struct gen *g)
{
	for (int c = 0; c < CHIPS; c++) {
		uint64_t off = 0, sv = SRAM_BASE;
		uint64_t embed = dram_bytes(g, VOCAB * HIDDEN * 2, 607744);
		uint64_t dv = DRAM_BASE + (c == 0 ? 0 : embed);
		struct segs *s = &segs[c];
		if (c == 0)
			add_seg(s, c, "embed_tokens", -1, embed, DRAM, "bfloat16", &off, &dv, &sv);
		for (int l = 0; l < 48; l++) {
			add_seg(s, c, "input_layernorm", l, 4096, SRAM, "bfloat16", &off, &dv, &sv);
			add_seg(s, c, "q_proj", l, dram_bytes(g, 8388608, 8192), DRAM, "bfloat16", &off, &dv, &sv);
			add_seg(s, c, "k_proj", l, dram_bytes(g, 1048576, 1024), DRAM, "bfloat16", &off, &dv, &sv);
			add_seg(s, c, "v_proj", l, dram_bytes(g, 1048576, 1024), DRAM, "bfloat16", &off, &dv, &sv);
			add_seg(s, c, "o_proj", l, dram_bytes(g, 8388608, 8192), DRAM, "bfloat16", &off, &dv, &sv);
			add_seg(s, c, "q_norm", l, 256, SRAM, "bfloat16", &off, &dv, &sv);
			add_seg(s, c, "k_norm", l, 256, SRAM, "bfloat16", &off, &dv, &sv);
			add_seg(s, c, "post_attention_layernorm", l, 4096, SRAM, "bfloat16", &off, &dv, &sv);
			add_seg(s, c, "router", l, dram_bytes(g, 524288, 512), DRAM, "bfloat16", &off, &dv, &sv);
			add_seg(s, c, "experts", l, dram_bytes(g, 157073024, 153392), DRAM, "int8", &off, &dv,
				&sv);
		}
		add_seg(s, c, "final_norm", -1, 4096, SRAM, "bfloat16", &off, &dv, &sv);
		add_seg(s, c, "lm_head", -1, dram_bytes(g, VOCAB / 2 * HIDDEN * 2, 303872), DRAM,
			"bfloat16", &off, &dv, &sv);
	}
	/* KV after chip 0's DRAM parameters (the larger), the workspace after it. */
	uint64_t dram_end = 0;
	for (size_t i = 0; i < segs[0].n; i++)
		if (segs[0].v[i].dom == DRAM && segs[0].v[i].vaddr + segs[0].v[i].bytes > dram_end)
			dram_end = segs[0].v[i].vaddr + segs[0].v[i].bytes;
	g->kv_base = dram_end;
	g->ws = dram_end + KV_PER_CHIP;
}

static uint64_t block_size(int c)
{
	uint64_t n = 0;
	for (size_t i = 0; i < segs[c].n; i++)
		n += segs[c].v[i].bytes;
	return n;
}

static void write_blocks(const struct gen *g)
{
	for (int c = 0; c < CHIPS; c++) {
		char *path = pathf(g, "param_blk%d.bin", c);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || ftruncate(fd, (off_t)block_size(c)) < 0)
			die("%s: %s", path, strerror(errno));
		/* A recognizable pattern at the start of every mapped range. */
		for (size_t i = 0; i < segs[c].n; i++) {
			const struct seg *s = &segs[c].v[i];
			unsigned char pat[4096];
			size_t n = s->bytes < sizeof pat ? s->bytes : sizeof pat;
			for (size_t k = 0; k < n; k++)
				pat[k] = (unsigned char)(1 + ((i * 131 + k * 7 + (size_t)c * 29) % 251));
			if (pwrite(fd, pat, n, (off_t)s->offset) != (ssize_t)n)
				die("%s: pwrite: %s", path, strerror(errno));
		}
		if (close(fd) != 0)
			die("%s: close", path);
	}
}

/* ---- metadata text (§4, §5) ---------------------------------------------------------- */

static void write_top_meta(const struct gen *g)
{
	char *path = pathf(g, "model_memory_reserved_info.txt");
	FILE *f = openw(path);
	bool sample = is(g, "sample") || is(g, "mem_unit");
	if (!is(g, "meta_key_missing"))
		fprintf(f, "calcc_ver: v0.1\n");
	fprintf(f, "device0: [ks1]\n");
	fprintf(f, "device_memory_required: %s MB\n", sample ? "16777216" : "16384");
	fprintf(f, "model_arch %s\n", is(g, "name_mismatch") ? "Qwen3-30B-A3B-bs1-ctx32768-2chip" : MODEL);
	fprintf(f, "model_type %s\n", is(g, "meta_value") ? "vlm" : "llm");
	fprintf(f, "n_batch 1\n");
	fprintf(f, "max_seq_len 40960\n");
	uint64_t dram = DRAM_SIZE;
	if (is(g, "mem_capacity"))   /* the parameters fit, parameters + KV do not */
		dram = g->kv_base - DRAM_BASE + KV_PER_CHIP - 4096;
	fprintf(f, "dram_rsvd vaddr 0x%016" PRIx64 " size %" PRIu64 "\n", DRAM_BASE, dram);
	fprintf(f, "sram_rsvd vaddr 0x%016" PRIx64 " size %" PRIu64 "\n", SRAM_BASE, SRAM_SIZE);
	if (is(g, "meta_size_hex"))
		fprintf(f, "sync_rsvd vaddr 0x%016" PRIx64 " size 0x%" PRIx64 "\n", SYNC_BASE, SYNC_SIZE);
	else
		fprintf(f, "sync_rsvd vaddr 0x%016" PRIx64 " size %" PRIu64 "\n", SYNC_BASE, SYNC_SIZE);
	for (int c = 0; c < CHIPS; c++)
		for (size_t i = 0; i < segs[c].n; i++) {
			const struct seg *s = &segs[c].v[i];
			uint64_t size = s->bytes, vaddr = s->vaddr;
			const char *file = c ? "param_blk1.bin" : "param_blk0.bin";
			unsigned mask = 1u << c;
			bool last = i + 1 == segs[c].n;
			if (is(g, "map_past_end") && c == 1 && last)
				size += 0x1000;
			if (is(g, "map_zero_mask") && c == 1 && i == 5)
				mask = 0;
			if (is(g, "map_overlap") && c == 0 && i == 3)
				vaddr = segs[c].v[2].vaddr + 0x100;   /* into the previous DRAM tensor */
			if (is(g, "map_missing_file") && c == 1 && i == 7)
				file = "param_blk2.bin";
			if (is(g, "map_domain") && c == 1 && i == 9)
				vaddr = 0x7000000000ull;
			char line[512];
			snprintf(line, sizeof line, "%s offset 0x%" PRIx64 " vaddr 0x%016" PRIx64
				 " size 0x%" PRIx64 " chip 00000000 00000000 %08x", file, s->offset, vaddr,
				 size, mask);
			if (is(g, "meta_extra_field") && c == 0 && i == 10)
				strcat(line, " alias");
			if (is(g, "meta_hex_no_0x") && c == 0 && i == 11)
				snprintf(line, sizeof line, "%s offset 0x%" PRIx64 " vaddr %016" PRIx64
					 " size 0x%" PRIx64 " chip 00000000 00000000 %08x", file, s->offset,
					 vaddr, size, mask);
			fprintf(f, "%s\n", line);
			if (is(g, "map_duplicate") && c == 0 && i == 20)
				fprintf(f, "%s\n", line);
		}
	closew(f, path);
}

struct bufdef {
	const char *name;
	bool out;
	uint64_t dims[3];
	unsigned rank;
	const char *dtype;
	uint64_t bytes, ping, pong;
};

static void io_buffers(const struct gen *g, bool prefill, struct bufdef b[3])
{
	uint64_t tokens = prefill ? SEQ : 1;
	uint64_t ids = tokens * 4, logits = VOCAB * 2;
	uint64_t at = g->ws;
	uint64_t step = prefill ? ids : 64;
	b[0] = (struct bufdef){"input_ids", false, {1, tokens}, 2, "int32", ids, at, at + step};
	b[1] = (struct bufdef){"position_ids", false, {1, tokens}, 2, "int32", ids, at + 2 * step,
			       at + 3 * step};
	b[2] = (struct bufdef){"logits", true, {1, 1, VOCAB}, 3, "bfloat16", logits, at + 4 * step,
			       at + 4 * step + logits};
}

static void write_sub_meta(const struct gen *g, const char *dir, bool prefill)
{
	char *path = pathf(g, "%s/submodel_memory_reserved_info.txt", dir);
	FILE *f = openw(path);
	bool wrong_type = prefill && (is(g, "sample") || is(g, "smodel_type"));
	fprintf(f, "model_arch %s\n", MODEL);
	fprintf(f, "smodel_type %s\n", prefill && !wrong_type ? "llm_prefill" : "llm_decode");
	fprintf(f, "n_batch %d\n", !prefill && is(g, "batch_mismatch") ? 2 : 1);
	fprintf(f, "calc_mchip mchip\n");
	fprintf(f, "calc_utype [cpu,ccu]\n");
	fprintf(f, "workload 17179869184 Byte\n");
	fprintf(f, "ccu_stack_config location dram\n");
	static const char *const eng[] = {"cpu", "pld"};
	static const char *const pp[] = {"ping", "pong"};
	for (int c = 0; c < CHIPS; c++)
		for (int e = 0; e < 2; e++)
			for (int k = 0; k < 2; k++) {
				unsigned mask = 1u << c;
				if (is(g, "decl_mask") && prefill && c == 1 && e == 0 && k == 0)
					mask = 1;
				fprintf(f, "%s_chip%d_%s.bin chip 00000000 00000000 %08x\n", eng[e], c, pp[k],
					mask);
			}
	for (int c = 0; c < CHIPS; c++)
		for (int core = 0; core < CORES; core++)
			if (!(is(g, "decl_undeclared") && !prefill && c == 0 && core == 1))
				fprintf(f, "ccu%d_chip%d.elf location dram chip 00000000 00000000 %08x\n", core,
					c, 1u << c);
	if (is(g, "decl_path") && prefill)
		fprintf(f, "../x.bin chip 00000000 00000000 00000001\n");
	fprintf(f, "icsr model_entry offset 0x0\n");
	fprintf(f, "icsr ping_pong_sel offset 0x40\n");
	struct bufdef b[3];
	io_buffers(g, prefill, b);
	for (int i = 0; i < 3; i++) {
		char shape[64];
		if (b[i].rank == 2)
			snprintf(shape, sizeof shape, "[%" PRIu64 ",%" PRIu64 "]", b[i].dims[0], b[i].dims[1]);
		else
			snprintf(shape, sizeof shape, "[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", b[i].dims[0],
				 b[i].dims[1], b[i].dims[2]);
		uint64_t size = b[i].bytes;
		const char *dtype = b[i].dtype;
		if (is(g, "ibuf_off_by_one") && prefill && i == 0)
			size++;
		if (is(g, "io_dtype") && !prefill && i == 2)
			dtype = "float8";
		if (is(g, "io_missing") && !prefill && i == 1)
			continue;
		if (is(g, "io_pingpong") && !prefill && i == 2)
			b[i].pong = b[i].ping;
		fprintf(f, "%s %s shape %s type %s vaddr 0x%016" PRIx64 " 0x%016" PRIx64 " size %" PRIu64
			"\n", b[i].out ? "obuf" : "ibuf", b[i].name, shape, dtype, b[i].ping, b[i].pong,
			size);
	}
	closew(f, path);
}

/* ---- the op graph (§6, §7.1) ----------------------------------------------------------- */

struct opgen {
	const struct gen *g;
	bool prefill;
	FILE *yaml;
	FILE *pp[CHIPS];
	unsigned counter[64];
	const char *kinds[64];
	unsigned nkinds;
	unsigned nconst;
	unsigned nops;
	char prev[96];         /* the last op's name (the next op's producer) */
	uint64_t prev_vaddr, prev_dims[3];
	unsigned prev_rank;
	uint64_t cursor, lo, hi;         /* activation tiling in DRAM */
	uint64_t scursor, slo, shi;      /* SRAM scratch tiling (prefill) */
	uint64_t act_bytes;
	unsigned ninputs;      /* inputs in input_shape order */
	const char *inputs[200];
};

static unsigned kind_counter(struct opgen *o, const char *kind)
{
	for (unsigned i = 0; i < o->nkinds; i++)
		if (strcmp(o->kinds[i], kind) == 0)
			return o->counter[i]++;
	o->kinds[o->nkinds] = kind;
	o->counter[o->nkinds] = 1;
	return o->counter[o->nkinds++] - 1;
}

static int input_index(const struct opgen *o, const char *name)
{
	for (unsigned i = 0; i < o->ninputs; i++)
		if (strcmp(o->inputs[i], name) == 0)
			return (int)i;
	return -1;
}

/* The next activation tile of `bytes`: wraps to the start of [lo, hi),
 * the last tile before the end clipped so the tiles cover it exactly. */
static uint64_t tile(uint64_t *cursor, uint64_t lo, uint64_t hi, uint64_t *bytes)
{
	if (*cursor >= hi)
		*cursor = lo;
	uint64_t at = *cursor;
	if (*bytes > hi - at)
		*bytes = hi - at;
	*cursor += *bytes;
	return at;
}

static void tensor(FILE *f, bool *first, const char *key, uint64_t vaddr, const uint64_t *dims,
		   unsigned rank, const char *dtype, const char *role)
{
	fprintf(f, "%s%s: [0x%" PRIx64 ", [", *first ? "" : ", ", key, vaddr);
	for (unsigned i = 0; i < rank; i++)
		fprintf(f, "%s%" PRIu64, i ? ", " : "", dims[i]);
	fprintf(f, "], %s, %s]", dtype, role);
	*first = false;
}

struct arg {
	const struct seg *w;   /* a weight (const) */
	int input;             /* a model input index, -1 */
	uint64_t vaddr, bytes; /* the input's or KV's tensor */
	const uint64_t *dims;
	unsigned rank;
	const char *dtype;
};

static void op(struct opgen *o, const char *kind, bool on_chip0, bool on_chip1,
	       const struct arg *args, unsigned nargs, bool sram_out)
{
	char name[96];
	snprintf(name, sizeof name, "%s_%u", kind, kind_counter(o, kind));
	FILE *f = o->yaml;
	bool first = true;
	fprintf(f, "%s: {", name);
	unsigned a = 0;
	uint64_t hd[3] = {1, o->prefill ? SEQ : 1, HIDDEN};
	if (o->prev[0]) {
		char key[16];
		snprintf(key, sizeof key, "args_%u", a++);
		tensor(f, &first, key, o->prev_vaddr, o->prev_dims, o->prev_rank, "bfloat16", o->prev);
	}
	for (unsigned i = 0; i < nargs; i++) {
		char key[16], role[32];
		snprintf(key, sizeof key, "args_%u", a++);
		const struct arg *x = &args[i];
		if (x->w) {
			uint64_t d = x->w->bytes / (strcmp(x->w->dtype, "int8") == 0 ? 1 : 2);
			const char *dtype = x->w->dtype;
			if (is(o->g, "unknown_dtype") && o->prefill && strcmp(kind, "nbu_matmul_router") == 0 &&
			    x->w->layer == 3)
				dtype = "bfloat17";
			snprintf(role, sizeof role, "const_%u", o->nconst++);
			tensor(f, &first, key, x->w->vaddr, &d, 1, dtype, role);
		} else if (x->input >= 0) {
			snprintf(role, sizeof role, "input_%d", x->input);
			tensor(f, &first, key, x->vaddr, x->dims, x->rank, x->dtype, role);
		} else {
			tensor(f, &first, key, x->vaddr, x->dims, x->rank, x->dtype, "kv_write");
		}
	}
	if (o->prefill && o->nops == 200 && is(o->g, "opio_syntax"))
		fprintf(f, ", args_%u: [0x%" PRIx64 ", [8], int8]", a++, o->lo);
	if (o->prefill && o->nops == 201 && is(o->g, "opio_role"))
		fprintf(f, ", args_%u: [0x%" PRIx64 ", [8], int8, input_500]", a++, o->lo);
	if (o->prefill && o->nops == 202 && is(o->g, "opio_outside"))
		fprintf(f, ", args_%u: [0x7000000000, [8], int8, stray]", a++);
	uint64_t bytes = o->act_bytes;
	uint64_t at = tile(&o->cursor, o->lo, o->hi, &bytes);
	o->prev_vaddr = at;
	if (bytes == o->act_bytes) {
		memcpy(o->prev_dims, hd, sizeof hd);
		o->prev_rank = 3;
	} else {
		o->prev_dims[0] = bytes / 2;
		o->prev_rank = 1;
	}
	tensor(f, &first, "outs_0", at, o->prev_dims, o->prev_rank, "bfloat16", "activation");
	if (sram_out) {
		uint64_t sb = 524288;
		uint64_t sat = tile(&o->scursor, o->slo, o->shi, &sb);
		uint64_t sd = sb / 2;
		tensor(f, &first, "outs_1", sat, &sd, 1, "bfloat16", "sram_scratch");
	}
	fprintf(f, "}\n");
	if (on_chip0)
		fprintf(o->pp[0], "%s\n", name);
	if (on_chip1)
		fprintf(o->pp[1], "%s\n", name);
	if (on_chip0 && is(o->g, "profpart_duplicate") && o->prefill && o->nops == 100)
		fprintf(o->pp[0], "%s\n", name);
	snprintf(o->prev, sizeof o->prev, "%s", name);
	o->nops++;
}

static const struct seg *w(int layer, const char *name)
{
	for (size_t i = 0; i < segs[0].n; i++)
		if (segs[0].v[i].layer == layer && strcmp(segs[0].v[i].name, name) == 0)
			return &segs[0].v[i];
	die("no segment %s of layer %d", name, layer);
}

static void layer_ops(struct opgen *o, unsigned l)
{
	bool p = o->prefill;
	uint64_t pos_dims[2] = {1, p ? SEQ : 1};
	struct bufdef b[3];
	io_buffers(o->g, p, b);
	struct arg pos = {.input = 1, .vaddr = b[1].ping, .dims = pos_dims, .rank = 2, .dtype = "int32"};
	uint64_t kvd[4] = {1, KV_HEADS / CHIPS, SEQ, HEAD_DIM};
	uint64_t kaddr = o->g->kv_base + l * KV_PER_LAYER, vaddr = kaddr + KV_PER_LAYER / 2;
	char kname[32], vname[32];
	snprintf(kname, sizeof kname, "past_key_%u", l);
	snprintf(vname, sizeof vname, "past_value_%u", l);
	struct arg kin = {.input = input_index(o, kname), .vaddr = kaddr, .dims = kvd, .rank = 4,
			  .dtype = "bfloat16"};
	struct arg vin = {.input = input_index(o, vname), .vaddr = vaddr, .dims = kvd, .rank = 4,
			  .dtype = "bfloat16"};
#define W(n) (struct arg){.w = w((int)l, n), .input = -1}
	op(o, "nbu_rmsnorm", true, true, (struct arg[]){W("input_layernorm")}, 1, false);
	op(o, "nbu_matmul_q", true, true, (struct arg[]){W("q_proj")}, 1, false);
	op(o, "nbu_matmul_k", true, true, (struct arg[]){W("k_proj")}, 1, false);
	op(o, "nbu_matmul_v", true, true, (struct arg[]){W("v_proj")}, 1, false);
	op(o, "nbu_rmsnorm_q", true, true, (struct arg[]){W("q_norm")}, 1, false);
	op(o, "nbu_rmsnorm_k", true, true, (struct arg[]){W("k_norm")}, 1, false);
	op(o, "nbu_rope_q", true, true, &pos, 1, false);
	op(o, "nbu_rope_k", true, true, &pos, 1, false);
	op(o, "nbu_reshape_q", true, true, NULL, 0, false);
	if (p)
		op(o, "nbu_transpose_v", true, true, NULL, 0, false);
	op(o, "nbu_kv_write_k", true, true, &kin, 1, false);
	op(o, "nbu_kv_write_v", true, true, &vin, 1, false);
	op(o, "nbu_flash_attention", true, true, (struct arg[]){kin, vin}, 2, p);
	if (p)
		op(o, "nbu_reshape_o", true, true, NULL, 0, false);
	op(o, "nbu_fused_matmul_add_clib", true, true, (struct arg[]){W("o_proj")}, 1, false);
	op(o, "nbu_allreduce", true, true, NULL, 0, false);
	op(o, "nbu_rmsnorm", true, true, (struct arg[]){W("post_attention_layernorm")}, 1, false);
	op(o, "nbu_matmul_router", true, true, (struct arg[]){W("router")}, 1, false);
	op(o, "cpu_softmax_topk", false, false, NULL, 0, false);
	op(o, "cpu_moe_dispatch", false, false, NULL, 0, false);
	op(o, "nbu_moe_gather", true, true, NULL, 0, false);
	op(o, "nbu_moe_gate_up", true, true, (struct arg[]){W("experts")}, 1, false);
	op(o, "nbu_silu_mul", true, true, NULL, 0, false);
	op(o, "nbu_moe_down", true, true, NULL, 0, false);
	op(o, "nbu_moe_scatter", true, true, NULL, 0, false);
	op(o, "cpu_moe_combine", false, false, NULL, 0, false);
	op(o, "nbu_moe_reduce", true, true, NULL, 0, false);
	op(o, "nbu_allreduce", true, true, NULL, 0, false);
	op(o, "nbu_fused_add", true, true, NULL, 0, false);
	op(o, "nbu_cast", true, true, NULL, 0, false);
	op(o, "nbu_copy", true, true, NULL, 0, false);
#undef W
}

static void inputs_of(const struct gen *g, bool prefill, struct opgen *o)
{
	static char names[200][24];
	unsigned n = 0;
	o->inputs[n++] = "input_ids";
	o->inputs[n++] = "position_ids";
	for (unsigned l = 0; l < g->layers; l++) {
		snprintf(names[2 * l], sizeof names[0], "past_key_%u", l);
		snprintf(names[2 * l + 1], sizeof names[0], "past_value_%u", l);
		o->inputs[n++] = names[2 * l];
		if (!(prefill && is(g, "kv_unpaired") && l == 47))
			o->inputs[n++] = names[2 * l + 1];
	}
	o->ninputs = n;
}

static unsigned write_graph(const struct gen *g, const char *dir, bool prefill)
{
	struct opgen o = {.g = g, .prefill = prefill};
	inputs_of(g, prefill, &o);
	char *ypath = pathf(g, "%s/%s_op_io_buf_ptr.yaml", dir, dir);
	o.yaml = openw(ypath);
	char *pp0 = pathf(g, "%s/%s.chip0.profparts", dir, dir);
	char *pp1 = pathf(g, "%s/%s.chip1.profparts", dir, dir);
	o.pp[0] = openw(pp0);
	o.pp[1] = openw(pp1);
	uint64_t sram_params = 0;
	for (size_t i = 0; i < segs[0].n; i++)
		if (segs[0].v[i].dom == SRAM)
			sram_params += segs[0].v[i].bytes;
	o.act_bytes = (prefill ? SEQ : 1) * HIDDEN * 2;
	o.lo = o.cursor = g->ws;
	o.hi = prefill ? DRAM_BASE + DRAM_SIZE : g->ws + DECODE_POOL;
	o.slo = o.scursor = SRAM_BASE + sram_params;
	o.shi = SRAM_BASE + SRAM_SIZE - SRAM_SPARE;
	fprintf(o.yaml, "# %s: op instance -> args_N/outs_N: [vaddr, [dims], dtype, "
		"producer_or_role]\n", dir);
	struct bufdef b[3];
	io_buffers(g, prefill, b);
	uint64_t ids_dims[2] = {1, prefill ? SEQ : 1};
	struct arg ids = {.input = 0, .vaddr = b[0].ping, .dims = ids_dims, .rank = 2, .dtype = "int32"};
	op(&o, "nbu_embedding", true, false,
	   (struct arg[]){ids, {.w = w(-1, "embed_tokens"), .input = -1}}, 2, false);
	for (unsigned l = 0; l < g->layers; l++)
		layer_ops(&o, l);
	op(&o, "nbu_rmsnorm", true, true, (struct arg[]){{.w = w(-1, "final_norm"), .input = -1}}, 1,
	   false);
	op(&o, "nbu_matmul_lm_head", true, true, (struct arg[]){{.w = w(-1, "lm_head"), .input = -1}},
	   1, false);
	op(&o, "nbu_allgather", true, true, NULL, 0, false);
	if (prefill)
		op(&o, "nbu_slice_last", true, true, NULL, 0, false);
	op(&o, "nbu_cast", true, true, NULL, 0, false);
	op(&o, "nbu_output_copy", true, true, NULL, 0, false);
	if (prefill)
		op(&o, "nbu_sync", true, true, NULL, 0, false);
	if (is(g, "profpart_unknown_op") && prefill)
		fprintf(o.pp[1], "nbu_fused_matmul_add_clib_9999\n");
	if (is(g, "profpart_syntax") && !prefill)
		fprintf(o.pp[0], "nbu_cast_0 nbu_cast_1\n");
	closew(o.yaml, ypath);
	closew(o.pp[0], pp0);
	closew(o.pp[1], pp1);
	return o.nops;
}

/* ---- commands (§7.2) -------------------------------------------------------------------- */

static void write_commands(const struct gen *g, const char *dir, const char *eng, int chip,
			   uint64_t n, uint64_t total)
{
	static const char *const pld_types[] = {"PLD_LOAD", "PLD_STORE", "D2D_SEND", "D2D_RECV",
						"PLD_SYNC"};
	static const char *const cpu_types[] = {"CPU_KERNEL", "CPU_SYNC"};
	bool pld = eng[0] == 'p';
	const char *const *types = pld ? pld_types : cpu_types;
	unsigned ntypes = pld ? 5 : 2;
	char *txt = pathf(g, "%s/%s_chip%d_ping.txt", dir, eng, chip);
	char *bin = pathf(g, "%s/%s_chip%d_ping.bin", dir, eng, chip);
	FILE *t = openw(txt), *b = openw(bin);
	setvbuf(t, NULL, _IOFBF, 1 << 20);
	uint32_t count = (uint32_t)n, rec = 48;
	bool bad_count = is(g, "cmd_count") && pld && chip == 0 && strstr(dir, "decode");
	/* cmd_count: a .bin that is whole but one command short of its dump. */
	uint32_t hcount = bad_count ? count - 1 : count;
	bool bad_magic = is(g, "cmd_bin_header") && !pld && chip == 0 && strstr(dir, "prefill");
	fwrite(bad_magic ? "CALCMD00" : "CALCMD01", 1, 8, b);
	fwrite(&hcount, 4, 1, b);
	fwrite(&rec, 4, 1, b);
	uint64_t base = total / n, extra = total % n;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t size = base + (i < extra);
		uint64_t src = DRAM_BASE + (i * 4096) % DRAM_SIZE, dst = g->ws + (i * 8192) % (1ull << 30);
		unsigned ty = (unsigned)(i % ntypes);
		bool tweak = pld && chip == 1 && i == 5 && strstr(dir, "decode");
		unsigned mask = tweak && is(g, "cmd_mask") ? 4u : 1u << chip;
		uint64_t id = tweak && is(g, "cmd_id_sequence") ? i + 1 : i;
		if (is(g, "cmd_syntax") && pld && chip == 1 && i == 7 && strstr(dir, "decode"))
			fprintf(t, "# %s\ncmdId=%" PRIu64 " chipMask95_64=0x00000000 chipMask63_32=0x00000000 "
				"chipMask31_0=0x%08x srcAddr=%" PRIx64 " dstAddr=0x%" PRIx64 " dataSize=%"
				PRIu64 " syncRegIdx=%u\n", types[ty], i, 1u << chip, src, dst, size,
				(unsigned)(i % 16));
		else
			fprintf(t, "# %s\ncmdId=%" PRIu64 " chipMask95_64=0x00000000 chipMask63_32=0x00000000 "
				"chipMask31_0=0x%08x srcAddr=0x%" PRIx64 " dstAddr=0x%" PRIx64 " dataSize=%"
				PRIu64 " syncRegIdx=%u\n", types[ty], id, mask, src, dst, size,
				(unsigned)(i % 16));
		struct {
			uint32_t id, m[3];
			uint64_t src, dst, size;
			uint32_t sync, type;
		} r = {(uint32_t)i, {0, 0, 1u << chip}, src, dst, size, (uint32_t)(i % 16), ty};
		if (i < hcount)
			fwrite(&r, sizeof r, 1, b);
	}
	closew(t, txt);
	closew(b, bin);
	/* pong: the same commands (§7.2: ping/pong are twin products). */
	static const char *const ext[] = {"txt", "bin"};
	for (int k = 0; k < 2; k++) {
		char *from = pathf(g, "%s/%s_chip%d_ping.%s", dir, eng, chip, ext[k]);
		char *to = pathf(g, "%s/%s_chip%d_pong.%s", dir, eng, chip, ext[k]);
		int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (in < 0 || out < 0)
			die("%s: %s", to, strerror(errno));
		char buf[1 << 16];
		ssize_t r;
		while ((r = read(in, buf, sizeof buf)) > 0)
			if (write(out, buf, (size_t)r) != r)
				die("%s: write", to);
		close(in);
		if (close(out) != 0)
			die("%s: close", to);
	}
}

static uint64_t gib(double x)
{
	return (uint64_t)(x * 1073741824.0);
}

static void all_commands(const struct gen *g)
{
	uint64_t div = g->full ? 1 : 100;
	/* seed §7.2: the prefill PLD of chip 0 has 444,610 commands, 18.979 GiB;
	 * chip 1 444,608, 18.822 GiB. */
	write_commands(g, PREFILL, "pld", 0, 444610 / div, gib(18.979) / div);
	write_commands(g, PREFILL, "pld", 1, 444608 / div, gib(18.822) / div);
	write_commands(g, DECODE, "pld", 0, 37202 / div, gib(1.203) / div);
	write_commands(g, DECODE, "pld", 1, 37200 / div, gib(1.198) / div);
	for (int c = 0; c < CHIPS; c++) {
		write_commands(g, PREFILL, "cpu", c, 1440 / (g->full ? 1 : 10), 48ull << 20);
		write_commands(g, DECODE, "cpu", c, 1440 / (g->full ? 1 : 10), 3ull << 20);
	}
}

/* ---- ELF (§5.2) ----------------------------------------------------------------------------- */

static void write_elfs(const struct gen *g, const char *dir, bool prefill)
{
	for (int c = 0; c < CHIPS; c++)
		for (int core = 0; core < CORES; core++) {
			unsigned machine = is(g, "elf_machine") && !prefill && c == 0 && core == 0 ? EM_X86_64
												   : EM_RISCV;
			struct elfw_spec s = {.type = ET_EXEC, .machine = machine};
			char *path = pathf(g, "%s/ccu%d_chip%d.elf", dir, core, c);
			if (elfw_write(path, &s) < 0)
				die("%s: %s", path, strerror(errno));
		}
	if (!prefill)
		return;
	static const char *const needed[] = {"libc.so.6", "libcalc_rt.so"};
	struct elfw_spec so = {.type = ET_DYN, .machine = EM_RISCV, .needed = needed, .nneeded = 2,
			       .soname = "libcalc_cpu_kernels_riscv.so"};
	char *rv = pathf(g, "%s/libcalc_cpu_kernels_riscv.so", dir);
	if (elfw_write(rv, &so) < 0)
		die("%s: %s", rv, strerror(errno));
	char *x86 = pathf(g, "%s/libcalc_cpu_kernels_x86.so", dir);
	if (is(g, "so_machine")) {
		if (elfw_write(x86, &so) < 0)
			die("%s: %s", x86, strerror(errno));
		return;
	}
	if (!g->x86_so || !*g->x86_so)
		die("no x86-64 helper .so to copy (--x86-so PATH)");
	int in = open(g->x86_so, O_RDONLY), out = open(x86, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (in < 0 || out < 0)
		die("%s: %s", in < 0 ? g->x86_so : x86, strerror(errno));
	char buf[1 << 16];
	ssize_t r;
	while ((r = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)r) != r)
			die("%s: write", x86);
	close(in);
	close(out);
}

/* ---- the root manifest (§3) -------------------------------------------------------------------- */

static void shape(FILE *f, const char *name, const uint64_t *d, unsigned n)
{
	fprintf(f, "      %s: [", name);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? ", " : "", d[i]);
	fprintf(f, "]\n");
}

static void manifest_submodel(const struct gen *g, FILE *f, bool prefill)
{
	fprintf(f, "  %s:\n", prefill ? "prefill" : "decode");
	fprintf(f, "    model_path: %s\n", onnx_path);
	fprintf(f, "    input_shape:\n");
	uint64_t tokens = prefill ? SEQ : 1;
	uint64_t ids[2] = {1, tokens};
	shape(f, "input_ids", ids, 2);
	shape(f, "position_ids", ids, 2);
	uint64_t kv[4] = {1, g->kv_heads, prefill ? 0 : SEQ - 1, HEAD_DIM};
	for (unsigned l = 0; l < g->layers; l++) {
		char n[32];
		snprintf(n, sizeof n, "past_key_%u", l);
		shape(f, n, kv, 4);
		if (prefill && is(g, "kv_unpaired") && l == 47)
			continue;
		snprintf(n, sizeof n, "past_value_%u", l);
		shape(f, n, kv, 4);
	}
	fprintf(f, "    model_info:\n");
	if (prefill && is(g, "manifest_key_type"))
		fprintf(f, "      batch_num: one\n");
	else
		fprintf(f, "      batch_num: 1\n");
	fprintf(f, "      q0_head_num: %d\n"
		   "      k0_head_num: %u\n"
		   "      v_head_num: %u\n"
		   "      q0_head_dim: %" PRIu64 "\n", Q_HEADS, g->kv_heads, g->kv_heads, HEAD_DIM);
	if (!is(g, "kv_unknown"))
		fprintf(f, "      k0_head_dim: %" PRIu64 "\n", HEAD_DIM);
	fprintf(f, "      v_head_dim: %" PRIu64 "\n", HEAD_DIM);
	if (!(is(g, "manifest_key_missing") && !prefill))
		fprintf(f, "      theta_base: 1000000.0\n");
	fprintf(f, "      max_seq_len: 40960\n"
		   "      is_encoder: false\n"
		   "      is_prefill: %s\n"
		   "      alibi: false\n", prefill || is(g, "role_conflict") ? "true" : "false");
	fprintf(f, "    device_cfg:\n      chip_nums: %d\n      calcore_num: %d\n",
		!prefill && is(g, "chips_mismatch") ? 4 : CHIPS, CORES);
	fprintf(f, "    calcc_env_cfg:\n"
		   "      with_codegen: true\n"
		   "      with_op_case: true\n"
		   "      with_c_oplib: true\n"
		   "      use_auto_alloc: true\n"
		   "      enable_flash_attention: true\n"
		   "      enable_one_token: true\n"
		   "      dynamic_d2d: %s\n"
		   "      has_loaded_onnx: false\n"
		   "      has_optimized_graph: false\n", prefill ? "true" : "false");
}

static void write_manifest(const struct gen *g)
{
	char *path = pathf(g, "%s.yaml", MODEL);
	FILE *f = openw(path);
	bool sample = is(g, "sample");
	fprintf(f, "# calbin root manifest (seed 004 §3)\n");
	fprintf(f, "model_name: %s\n", MODEL);
	fprintf(f, "seq_len: %d\n", is(g, "context_mismatch") ? 32768 : 40960);
	fprintf(f, "one_model_cfg:\n");
	manifest_submodel(g, f, true);
	manifest_submodel(g, f, false);
	if (is(g, "submodel_name"))
		fprintf(f, "  draft: {}\n");
	if (!is(g, "onnx_hash_missing"))
		fprintf(f, "onnx_hash:\n  - %s\n  - %s\n", g->onnx_sha, g->onnx_sha);
	fprintf(f, "git_commit_id:\n"
		   "  calcc: 575c2d4e9b1f3a7c8d2e6f0a1b3c5d7e9f1a2b3c\n");
	if (!is(g, "no_commit"))
		fprintf(f, "  lib/tvm: 7aebd1c3e5f7091b2d4f6a8c0e2b4d6f8a0c2e4b\n");
	fprintf(f, "golden_hash:\n");
	static const char *const gk[] = {"golden_prefill", "golden_decode"};
	for (int k = 0; k < 2; k++) {
		fprintf(f, "  %s:\n", gk[k]);
		for (int i = 0; i < 2; i++) {
			char h[65];
			for (int j = 0; j < 64; j++)
				h[j] = "0123456789abcdef"[(j * 7 + i * 3 + k * 5) % 16];
			h[64] = 0;
			if (sample || is(g, "golden_unmapped"))
				fprintf(f, "    - %s\n", h);
			else
				fprintf(f, "    - {tensor: %s, layer: %d, file: golden/%s_%d.bin, sha256: %s}\n",
					i ? "logits" : "hidden_states", i ? -1 : 47, gk[k] + 7, i, h);
		}
	}
	if (!sample) {
		fprintf(f, "supply_chain:\n");
		if (!is(g, "no_container"))
			fprintf(f, "  compiler_oci_digest: sha256:"
				   "3f1e0c9b7a5d3e1f2c4b6a8d0e2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f\n");
		fprintf(f, "  compiler_image: registry.example.com/calculet/calcc:0.7.6\n"
			   "  quant_config_sha256: %s\n"
			   "  calibration_manifest_sha256: "
			   "1b2c3d4e5f60718293a4b5c6d7e8f9011b2c3d4e5f60718293a4b5c6d7e8f901\n"
			   "  oplib_version: calc-oplib 0.7.6\n"
			   "  calbin_schema_version: calbin-schema/1\n"
			   "  runtime_compat:\n"
			   "    chip: %s\n"
			   "    runtime: 0.7.6\n"
			   "    driver: 2.3.1\n"
			   "    firmware: 1.9.0\n",
			is(g, "field_invalid") ? "xyz"
			: "9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9",
			is(g, "device_mismatch") ? "ks2" : "ks1");
	}
	closew(f, path);
}

/* ---- tokenizer and the rest (§8) ---------------------------------------------------------- */

static void write_tokenizer(const struct gen *g)
{
	char *dir = pathf(g, "__Tokenizer");
	if (mkdir(dir, 0755) < 0)
		die("%s: %s", dir, strerror(errno));
	char buf[4096];
	snprintf(buf, sizeof buf,
		 "{\n  \"architectures\": [\"Qwen3MoeForCausalLM\"],\n  \"model_type\": \"qwen3_moe\",\n"
		 "  \"hidden_size\": 2048,\n  \"num_hidden_layers\": %u,\n"
		 "  \"num_attention_heads\": 32,\n  \"num_key_value_heads\": %d,\n"
		 "%s  \"vocab_size\": %d,\n  \"max_position_embeddings\": 40960,\n"
		 "  \"rope_theta\": 1000000.0,\n  \"num_experts\": 128,\n  \"num_experts_per_tok\": 8,\n"
		 "  \"moe_intermediate_size\": 768,\n  \"torch_dtype\": \"bfloat16\",\n"
		 "  \"bos_token_id\": 151643,\n  \"eos_token_id\": 151645\n}\n", g->hf_layers,
		 is(g, "heads_mismatch") ? 8 : (int)g->kv_heads,
		 is(g, "kv_unknown") ? "" : "  \"head_dim\": 128,\n", is(g, "vocab_mismatch") ? 152064 : 151936);
	write_text(pathf(g, "__Tokenizer/config.json"), buf);
	snprintf(buf, sizeof buf,
		 "{\n  \"bos_token_id\": %d,\n  \"eos_token_id\": [151645, 151643],\n"
		 "%s  \"do_sample\": true,\n  \"temperature\": 0.7,\n"
		 "  \"top_p\": 0.8,\n  \"top_k\": 20\n}\n", is(g, "token_id") ? 200000 : 151643,
		 is(g, "special_token") ? "" : "  \"pad_token_id\": 151643,\n");
	write_text(pathf(g, "__Tokenizer/generation_config.json"),
		   is(g, "json_syntax") ? "{\"bos_token_id\": 151643,\n\"eos_token_id\": }\n" : buf);
	bool long_ctx = is(g, "sample") || is(g, "tokenizer_context");
	snprintf(buf, sizeof buf,
		 "{\n  \"tokenizer_class\": \"Qwen2Tokenizer\",\n  \"model_max_length\": %d,\n"
		 "  \"bos_token\": null,\n  \"eos_token\": \"<|im_end|>\",\n"
		 "  \"pad_token\": %s,\n  \"add_bos_token\": false,\n"
		 "  \"chat_template\": \"{%% for m in messages %%}<|im_start|>{{ m.role }}\\n"
		 "{{ m.content }}<|im_end|>\\n{%% endfor %%}\"\n}\n", long_ctx ? 131072 : 40960,
		 is(g, "special_token") ? "null" : "\"<|endoftext|>\"");
	write_text(pathf(g, "__Tokenizer/tokenizer_config.json"), buf);
	write_text(pathf(g, "__Tokenizer/tokenizer.json"),
		   "{\n  \"version\": \"1.0\",\n  \"added_tokens\": [\n"
		   "    {\"id\": 151643, \"content\": \"<|endoftext|>\", \"special\": true},\n"
		   "    {\"id\": 151644, \"content\": \"<|im_start|>\", \"special\": true},\n"
		   "    {\"id\": 151645, \"content\": \"<|im_end|>\", \"special\": true}\n  ],\n"
		   "  \"model\": {\"type\": \"BPE\", \"vocab\": {\"!\": 0, \"\\\"\": 1, \"#\": 2}, "
		   "\"merges\": [\"\\u0120 t\"]}\n}\n");
	write_text(pathf(g, "__Tokenizer/vocab.json"), "{\"!\": 0, \"\\\"\": 1, \"#\": 2}\n");
	write_text(pathf(g, "__Tokenizer/merges.txt"), "#version: 0.2\n\xc4\xa0 t\n\xc4\xa0 a\n");
	write_text(pathf(g, "__Tokenizer/special_tokens_map.json"),
		   "{\"eos_token\": \"<|im_end|>\", \"pad_token\": \"<|endoftext|>\"}\n");
	write_text(pathf(g, "__Tokenizer/added_tokens.json"),
		   "{\"<|endoftext|>\": 151643, \"<|im_start|>\": 151644, \"<|im_end|>\": 151645}\n");
	write_text(pathf(g, "__Tokenizer/chat_template.jinja"),
		   "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
		   "{% endfor %}\n");
	write_text(pathf(g, "__Tokenizer/LICENSE"), "Apache License 2.0 (synthetic fixture)\n");
	write_text(pathf(g, "__Tokenizer/README.md"), "# Qwen3-30B-A3B tokenizer (synthetic)\n");
	/* GGUF v3 header, no tensors, no metadata. */
	FILE *f = openw(pathf(g, "__Tokenizer/qwen3-vocab.gguf"));
	uint32_t ver = 3;
	uint64_t zero = 0;
	fwrite("GGUF", 1, 4, f);
	fwrite(&ver, 4, 1, f);
	fwrite(&zero, 8, 1, f);
	fwrite(&zero, 8, 1, f);
	closew(f, "qwen3-vocab.gguf");
}

static void write_hparam(const struct gen *g)
{
	char *path = pathf(g, "hparam.yaml");
	if (is(g, "yaml_syntax")) {
		write_text(path, "model_name: " MODEL "\nbatch: 1\nprompt: [1, 2\nseq_len: 40960\n");
	} else if (is(g, "yaml_alias_bomb")) {
		FILE *f = openw(path);
		fprintf(f, "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
		for (int i = 1; i < 10; i++) {
			fprintf(f, "a%d: &a%d [", i, i);
			for (int k = 0; k < 9; k++)
				fprintf(f, "%s*a%d", k ? ", " : "", i - 1);
			fprintf(f, "]\n");
		}
		closew(f, path);
	} else if (is(g, "yaml_deep")) {
		FILE *f = openw(path);
		fprintf(f, "deep: ");
		for (int i = 0; i < 10000; i++)
			fputc('[', f);
		for (int i = 0; i < 10000; i++)
			fputc(']', f);
		fputc('\n', f);
		closew(f, path);
	} else if (is(g, "yaml_tag")) {
		write_text(path, "model_name: " MODEL "\nrunner: !!python/object:os.system {}\n");
	} else {
		write_text(path, "# runner/golden parameters (seed §2)\nmodel_name: " MODEL "\n"
				 "batch: 1\nseq_len: 40960\nprompt_lengths: [16, 128, 1024, 40960]\n"
				 "golden_dir: golden\n");
	}
}

static void write_onnx(struct gen *g)
{
	char *path = pathf(g, "%s", onnx_name);
	FILE *f = openw(path);
	/* Not a real ONNX: a protobuf-looking header and filler. */
	fputs("\x08\x08\x12\x07pytorch\x1a\x05" "2.3.0", f);
	for (int i = 0; i < 8192; i++)
		fputc((i * 31 + 7) & 0xff, f);
	closew(f, path);
	if ((is(g, "big_file") || is(g, "big_hash_wrong")) && truncate(path, 65 << 20) < 0)
		die("%s: %s", path, strerror(errno));
	sha256_file(path, g->onnx_sha);
	if (is(g, "onnx_hash_wrong")) {
		f = fopen(path, "a");
		fputs("tampered", f);
		fclose(f);
	}
	if (is(g, "no_onnx") || is(g, "sample"))
		unlink(path);
}

/* ---- SHA256SUMS ---------------------------------------------------------------------------------- */

struct sums {
	char (*path)[512];
	char (*hex)[65];
	size_t n, cap;
	size_t next;
	pthread_mutex_t lock;
	const char *root;
};

static void list_files(struct sums *s, const char *root, const char *rel)
{
	char dirpath[4096];
	snprintf(dirpath, sizeof dirpath, "%s%s%s", root, *rel ? "/" : "", rel);
	FILE *p;
	char cmd[8192];
	/* -L: a symlink is listed as what it resolves to (one that leads out
	 * is never opened by calbin-check, whatever its line says). */
	snprintf(cmd, sizeof cmd, "cd '%s' && find -L . -type f ! -name SHA256SUMS 2>/dev/null | sed 's|^\\./||' | "
		 "LC_ALL=C sort", dirpath);
	if (!(p = popen(cmd, "r")))
		die("find: %s", strerror(errno));
	char line[512];
	while (fgets(line, sizeof line, p)) {
		line[strcspn(line, "\n")] = 0;
		if (s->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 128;
			s->path = realloc(s->path, s->cap * sizeof *s->path);
			s->hex = realloc(s->hex, s->cap * sizeof *s->hex);
		}
		snprintf(s->path[s->n++], 512, "%s", line);
	}
	pclose(p);
}

static void *hash_worker(void *arg)
{
	struct sums *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		size_t i = s->next++;
		pthread_mutex_unlock(&s->lock);
		if (i >= s->n)
			return NULL;
		char full[4096];
		snprintf(full, sizeof full, "%s/%s", s->root, s->path[i]);
		sha256_file(full, s->hex[i]);
	}
}

static void write_sums(const struct gen *g)
{
	struct sums s = {.root = g->root};
	pthread_mutex_init(&s.lock, NULL);
	list_files(&s, g->root, "");
	/* The two parameter blocks first, on two threads. */
	pthread_t t;
	pthread_create(&t, NULL, hash_worker, &s);
	hash_worker(&s);
	pthread_join(t, NULL);
	char *path = pathf(g, "SHA256SUMS");
	FILE *f = openw(path);
	if (is(g, "hash_listed_missing"))
		fprintf(f, "%s  ghost.bin\n", s.hex[0]);
	if (is(g, "hash_syntax"))
		fprintf(f, "0123abcd  hparam.yaml\n");
	for (size_t i = 0; i < s.n; i++) {
		if (is(g, "hash_uncovered") && strcmp(s.path[i], "version.py") == 0)
			continue;
		if ((is(g, "hash_wrong") && strcmp(s.path[i], "hparam.yaml") == 0) ||
		    (is(g, "big_hash_wrong") && strcmp(s.path[i], onnx_name) == 0))
			s.hex[i][0] = s.hex[i][0] == '0' ? '1' : '0';
		fprintf(f, "%s  %s\n", s.hex[i], s.path[i]);
	}
	closew(f, path);
	free(s.path);
	free(s.hex);
}

/* ---- variants applied to the tree ------------------------------------------------------------------- */

static void mutate_tree(const struct gen *g)
{
	if (is(g, "missing_required"))
		unlink(pathf(g, "%s/ccu1_chip1.elf", PREFILL));
	if (is(g, "empty_required") && truncate(pathf(g, "%s/cpu_chip0_ping.bin", DECODE), 0) < 0)
		die("truncate: %s", strerror(errno));
	if (is(g, "pingpong_missing"))
		unlink(pathf(g, "%s/pld_chip1_pong.bin", PREFILL));
	if (is(g, "symlink_passwd")) {
		unlink(pathf(g, "__Tokenizer/merges.txt"));
		if (symlink("/etc/passwd", pathf(g, "__Tokenizer/merges.txt")) < 0)
			die("symlink: %s", strerror(errno));
	}
	if (is(g, "symlink_parent")) {
		char x[8192];
		snprintf(x, sizeof x, "%s/x", g->outdir);
		write_text(x, "outside the package\n");
		unlink(pathf(g, "hparam.yaml"));
		if (symlink("../x", pathf(g, "hparam.yaml")) < 0)
			die("symlink: %s", strerror(errno));
	}
	if (is(g, "symlink_inside")) {
		unlink(pathf(g, "version.py"));
		if (symlink("hparam.yaml", pathf(g, "version.py")) < 0)
			die("symlink: %s", strerror(errno));
	}
	if (is(g, "fifo") && mkfifo(pathf(g, "pipe"), 0644) < 0)
		die("mkfifo: %s", strerror(errno));
	if (is(g, "unknown_file"))
		write_text(pathf(g, "notes.txt"), "build notes\n");
	if (is(g, "symlink_broken")) {
		unlink(pathf(g, "version.py"));
		if (symlink("nonexistent.py", pathf(g, "version.py")) < 0)
			die("symlink: %s", strerror(errno));
	}
	if (is(g, "symlink_dir") && symlink(".", pathf(g, "__Tokenizer/again")) < 0)
		die("symlink: %s", strerror(errno));
	if (is(g, "tokenizer_missing"))
		unlink(pathf(g, "__Tokenizer/vocab.json"));
	if (is(g, "optional_missing"))
		unlink(pathf(g, "version.py"));
	if (is(g, "pkg_limit")) {
		char rel[256] = "deep";
		for (int i = 0; i < 9; i++) {
			if (mkdir(pathf(g, "%s", rel), 0755) < 0)
				die("mkdir: %s", strerror(errno));
			strcat(rel, "/d");
		}
	}
	if (is(g, "json_too_large") && truncate(pathf(g, "__Tokenizer/tokenizer_config.json"),
						 65 << 20) < 0)
		die("truncate: %s", strerror(errno));
	if (is(g, "elf_invalid"))
		write_text(pathf(g, "%s/ccu1_chip0.elf", DECODE), "not an ELF file\n");
	if (is(g, "two_prefill")) {
		char to[8192];
		snprintf(to, sizeof to, "%s", pathf(g, "%s_prefill_1", MODEL));
		if (rename(pathf(g, "%s", DECODE), to) < 0)
			die("rename: %s", strerror(errno));
	}
}

int main(int argc, char **argv)
{
	struct gen g = {.v = "clean", .x86_so = CB_X86_SO, .layers = 48, .hf_layers = 48,
			.kv_heads = KV_HEADS};
	const char *out = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--list") == 0) {
			for (size_t k = 0; k < sizeof variants / sizeof *variants; k++)
				printf("%s\t%s\n", variants[k].name, variants[k].what);
			return 0;
		} else if (strcmp(argv[i], "--variant") == 0 && i + 1 < argc) {
			g.v = argv[++i];
		} else if (strcmp(argv[i], "--x86-so") == 0 && i + 1 < argc) {
			g.x86_so = argv[++i];
		} else if (strcmp(argv[i], "--small") == 0) {
			g.small = true;
		} else if (strcmp(argv[i], "--full") == 0) {
			g.full = true;
		} else if (argv[i][0] != '-' && !out) {
			out = argv[i];
		} else {
			fprintf(stderr, "usage: cb-fixture OUTDIR [--variant NAME] [--small] [--full] "
					"[--x86-so PATH] | --list\n");
			return 2;
		}
	}
	if (!out)
		die("no OUTDIR");
	bool known = false;
	for (size_t k = 0; k < sizeof variants / sizeof *variants; k++)
		known |= strcmp(variants[k].name, g.v) == 0;
	if (!known)
		die("unknown variant '%s' (--list)", g.v);
	if (is(&g, "layers47"))
		g.layers = 47;
	if (is(&g, "kv_heads3"))
		g.kv_heads = 3;
	snprintf(g.outdir, sizeof g.outdir, "%s", out);
	snprintf(g.root, sizeof g.root, "%s/%s", out, MODEL);
	mkdir(out, 0755);
	if (mkdir(g.root, 0755) < 0)
		die("%s: %s", g.root, strerror(errno));
	if (mkdir(pathf(&g, PREFILL), 0755) < 0 || mkdir(pathf(&g, DECODE), 0755) < 0)
		die("mkdir: %s", strerror(errno));
	build_segments(&g);
	write_blocks(&g);
	write_onnx(&g);
	write_manifest(&g);
	write_top_meta(&g);
	write_hparam(&g);
	write_text(pathf(&g, "version.py"), "__version__ = \"0.7.6\"\ncalcc_commit = "
					  "\"575c2d4e9b1f3a7c8d2e6f0a1b3c5d7e9f1a2b3c\"\n");
	write_tokenizer(&g);
	static const char *const dirs[2] = {PREFILL, DECODE};
	for (int k = 0; k < 2; k++) {
		write_sub_meta(&g, dirs[k], k == 0);
		write_graph(&g, dirs[k], k == 0);
		write_elfs(&g, dirs[k], k == 0);
	}
	all_commands(&g);
	mutate_tree(&g);
	if (!is(&g, "sample") && !is(&g, "no_hash_manifest"))
		write_sums(&g);
	printf("%s\n", g.root);
	return 0;
}
