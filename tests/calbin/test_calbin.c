/* tests/calbin/test_calbin.c — unit tests of the calbin library's parts:
 * the token forms and the metadata grammar (seed §4, §5 and issue 12's
 * conventions), the YAML loader's typing, order, lines and limits, the
 * bounded line reader, the interval union, the dtype table and the public
 * report's sanitizer.  Every expected value is written out by hand from the
 * spec. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "calbin/internal.h"

/* ---- helpers ---------------------------------------------------------------------- */

static void dump(const struct nf_report *r)
{
	for (size_t i = 0; i < r->count; i++)
		fprintf(stderr, "  %s %s: %s\n", r->items[i].code, r->items[i].where,
			r->items[i].evidence);
}

/* ---- tokens ------------------------------------------------------------------------ */

START_TEST(test_tokens)
{
	uint64_t v;
	uint32_t m, rank;
	uint64_t dims[CB_MAX_RANK];
	ck_assert(cb_tok_hex("0x1f", 4, &v) && v == 31);
	ck_assert(cb_tok_hex("0x0000000100000000", 18, &v) && v == 0x100000000ull);
	ck_assert(cb_tok_hex("0xffffffffffffffff", 18, &v) && v == UINT64_MAX);
	ck_assert(!cb_tok_hex("0x", 2, &v));
	ck_assert(!cb_tok_hex("0X1f", 4, &v));
	ck_assert(!cb_tok_hex("0x1F", 4, &v));        /* lowercase only */
	ck_assert(!cb_tok_hex("1f", 2, &v));
	ck_assert(!cb_tok_hex("0x1ffffffffffffffff", 19, &v));  /* 17 digits */
	ck_assert(cb_tok_dec("0", 1, &v) && v == 0);
	ck_assert(cb_tok_dec("40960", 5, &v) && v == 40960);
	ck_assert(cb_tok_dec("18446744073709551615", 20, &v) && v == UINT64_MAX);
	ck_assert(!cb_tok_dec("18446744073709551616", 20, &v));
	ck_assert(!cb_tok_dec("007", 3, &v));
	ck_assert(!cb_tok_dec("-1", 2, &v));
	ck_assert(!cb_tok_dec("+1", 2, &v));
	ck_assert(!cb_tok_dec("1,000", 5, &v));
	ck_assert(!cb_tok_dec("", 0, &v));
	ck_assert(cb_tok_mask("00000002", 8, &m) && m == 2);
	ck_assert(cb_tok_mask("ffffffff", 8, &m) && m == UINT32_MAX);
	ck_assert(!cb_tok_mask("0000002", 7, &m));
	ck_assert(!cb_tok_mask("0x000002", 8, &m));
	ck_assert(!cb_tok_mask("0000000A", 8, &m));
	ck_assert(cb_tok_dims("[1,40960]", 9, &rank, dims) && rank == 2 && dims[0] == 1 &&
		  dims[1] == 40960);
	ck_assert(cb_tok_dims("[1,1,151936]", 12, &rank, dims) && rank == 3 && dims[2] == 151936);
	ck_assert(cb_tok_dims("[]", 2, &rank, dims) && rank == 0);
	ck_assert(!cb_tok_dims("[1, 2]", 6, &rank, dims));
	ck_assert(!cb_tok_dims("[1,]", 4, &rank, dims));
	ck_assert(!cb_tok_dims("[,1]", 4, &rank, dims));
	ck_assert(!cb_tok_dims("1,2", 3, &rank, dims));
	ck_assert(!cb_tok_dims("[1,2,3,4,5,6,7,8,9]", 19, &rank, dims));
	ck_assert(cb_shape_bytes(2, (uint64_t[]){1, 40960}, 4, &v) && v == 163840);
	ck_assert(cb_shape_bytes(3, (uint64_t[]){1, 1, 151936}, 2, &v) && v == 303872);
	ck_assert(!cb_shape_bytes(2, (uint64_t[]){1ull << 40, 1ull << 30}, 2, &v));
	ck_assert_uint_eq(cb_dtype_bytes("bfloat16"), 2);
	ck_assert_uint_eq(cb_dtype_bytes("float16"), 2);
	ck_assert_uint_eq(cb_dtype_bytes("float32"), 4);
	ck_assert_uint_eq(cb_dtype_bytes("int32"), 4);
	ck_assert_uint_eq(cb_dtype_bytes("int8"), 1);
	ck_assert_uint_eq(cb_dtype_bytes("uint8"), 1);
	ck_assert_uint_eq(cb_dtype_bytes("int64"), 8);
	ck_assert_uint_eq(cb_dtype_bytes("bool"), 1);
	ck_assert_uint_eq(cb_dtype_bytes("bfloat17"), 0);
	ck_assert_uint_eq(cb_dtype_bytes("float8"), 0);
	ck_assert_uint_eq(cb_dtype_bytes("BFLOAT16"), 0);
}
END_TEST

/* ---- the metadata grammar ---------------------------------------------------------- */

struct top {
	struct nf_report r;
	struct cb_topmeta t;
	struct cb_reservation res[CB_DOMAIN_COUNT];
	struct cb_meta_out m;
};

static void top_init(struct top *x)
{
	memset(x, 0, sizeof *x);
	nf_report_init(&x->r);
	x->m = (struct cb_meta_out){.kind = CB_META_TOP, .file = "m.txt", .r = &x->r, .top = &x->t,
				    .res = x->res};
}

static void top_feed(struct top *x, const char *const *lines)
{
	for (uint64_t i = 0; lines[i]; i++)
		cb_meta_line(&x->m, lines[i], strlen(lines[i]), i + 1);
	cb_meta_finish(&x->m);
}

static void top_free(struct top *x)
{
	cb_topmeta_free(&x->t);
	cb_maps_free(x->m.maps, x->m.nmaps);
	nf_report_free(&x->r);
}

static const char *const good_top[] = {
	"calcc_ver: v0.1",
	"device0: [ks1]",
	"device_memory_required: 16777216 MB",
	"model_arch Qwen3",
	"model_type llm",
	"n_batch 1",
	"max_seq_len 40960",
	"dram_rsvd vaddr 0x0000000100000000 size 15113064448",
	"sram_rsvd vaddr 0x0000000010000000 size 17662336",
	"sync_rsvd vaddr 0x0000000000010000 size 20",
	"",
	"param_blk0.bin offset 0x0 vaddr 0x0000000100000000 size 0x2517c000 chip 00000000 00000000 00000001",
	"param_blk1.bin offset 0x1000 vaddr 0x0000000010000000 size 0x100 chip 00000001 00000000 00000002",
	NULL,
};

START_TEST(test_top_grammar)
{
	struct top x;
	top_init(&x);
	top_feed(&x, good_top);
	if (x.r.count)
		dump(&x.r);
	ck_assert_uint_eq(x.r.count, 0);
	ck_assert_str_eq(x.t.calcc_ver, "v0.1");
	ck_assert_uint_eq(x.t.ndevices, 1);
	ck_assert_str_eq(x.t.devices[0], "ks1");
	ck_assert(x.t.has_mem_required && x.t.mem_required_mb == 16777216);
	ck_assert_uint_eq(x.t.line_mem_required, 3);
	ck_assert_str_eq(x.t.model_arch, "Qwen3");
	ck_assert(x.t.has_n_batch && x.t.n_batch == 1 && x.t.line_n_batch == 6);
	ck_assert(x.t.has_max_seq && x.t.max_seq_len == 40960);
	ck_assert(x.res[CB_DOMAIN_DRAM].present && x.res[CB_DOMAIN_DRAM].vaddr == 0x100000000ull &&
		  x.res[CB_DOMAIN_DRAM].size == 15113064448ull && x.res[CB_DOMAIN_DRAM].line == 8);
	ck_assert(x.res[CB_DOMAIN_SYNC].size == 20);
	ck_assert_uint_eq(x.m.nmaps, 2);
	const struct cb_map *m = &x.m.maps[0];
	ck_assert_str_eq(m->file, "param_blk0.bin");
	ck_assert(m->offset == 0 && m->vaddr == 0x100000000ull && m->size == 0x2517c000ull);
	ck_assert(m->mask[0] == 0 && m->mask[1] == 0 && m->mask[2] == 1 && m->line == 12);
	ck_assert(cb_mask_has(m->mask, 0) && !cb_mask_has(m->mask, 1));
	m = &x.m.maps[1];
	ck_assert(m->offset == 0x1000 && m->mask[0] == 1 && m->mask[2] == 2);
	ck_assert(cb_mask_has(m->mask, 1) && cb_mask_has(m->mask, 64) && !cb_mask_has(m->mask, 0));
	ck_assert(!cb_mask_within(m->mask, 2) && !cb_mask_within(m->mask, 64));
	ck_assert(cb_mask_within(m->mask, 65) && cb_mask_within(m->mask, 96));
	ck_assert(cb_mask_within(x.m.maps[0].mask, 1) && !cb_mask_within(x.m.maps[0].mask, 0));
	static const uint32_t m33[3] = {0, 1, 0};     /* chip 32 */
	ck_assert(!cb_mask_within(m33, 32) && cb_mask_within(m33, 33));
	static const uint32_t all[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
	ck_assert(cb_mask_within(all, 96) && !cb_mask_within(all, 95));
	top_free(&x);
}
END_TEST

/* One near-miss line added to the good file: exactly one META_SYNTAX on
 * line 14 whose evidence holds `why`. */
static void near_miss(const char *line, const char *why)
{
	const char *lines[16];
	size_t n = 0;
	for (; good_top[n]; n++)
		lines[n] = good_top[n];
	lines[n++] = line;
	lines[n] = NULL;
	struct top x;
	top_init(&x);
	top_feed(&x, lines);
	if (x.r.count != 1)
		dump(&x.r);
	ck_assert_uint_eq(x.r.count, 1);
	const struct nf_finding *f = &x.r.items[0];
	ck_assert_str_eq(f->code, "META_SYNTAX");
	ck_assert_int_eq(f->gate, 'B');
	ck_assert_int_eq(f->severity, NF_SEV_ERROR);
	ck_assert_int_eq(f->klass, NF_CLASS_ERROR);
	ck_assert_str_eq(f->file, "m.txt");
	ck_assert_uint_eq(f->line, 14);
	ck_assert_msg(strstr(f->evidence, why), "'%s' lacks '%s'", f->evidence, why);
	ck_assert_uint_eq(x.m.nmaps, 2);   /* the line was dropped */
	top_free(&x);
}

START_TEST(test_top_near_misses)
{
	near_miss("param_blk0.bin offset 0x0 vaddr 0x100 size 0x10 chip 00000000 00000000 00000001 x",
		  "12 fields, not 11: extra field 'x'");
	near_miss("param_blk0.bin offset 0x0 vaddr 100 size 0x10 chip 00000000 00000000 00000001",
		  "vaddr '100' is not hex written 0x");
	near_miss("param_blk0.bin offset 0x0 vaddr 0x100 size 16 chip 00000000 00000000 00000001",
		  "size (§4.3: hex) '16' is not hex");
	near_miss("param_blk0.bin offset 0x0 vaddr 0xABC size 0x10 chip 00000000 00000000 00000001",
		  "vaddr '0xABC' is not hex");
	near_miss("param_blk0.bin offset 0x0 vaddr 0x100 size 0x10 chip 0x0000000 00000000 00000001",
		  "chip mask word 1 '0x0000000' is not 8 lowercase hex digits");
	near_miss("param_blk0.bin offset 0x0 vaddr 0x100 size 0x10 chip 00000000 00000001",
		  "has 10 fields, not 11");
	near_miss("param_blk0.bin offset 0x0 addr 0x100 size 0x10 chip 00000000 00000000 00000001",
		  "field 4 of map is 'addr', not 'vaddr'");
	near_miss("sync_rsvd vaddr 0x10000 size 0x14", "'0x14' is hex where the form has a decimal");
	near_miss("dram_rsvd vaddr 0x10000 size 20 extra", "extra field 'extra'");
	near_miss("n_batch 01", "'01' is not an unsigned decimal");
	near_miss("max_seq_len  40960", "two spaces in a row");
	near_miss("model_type llm ", "a leading or trailing space");
	near_miss("model_type\tllm", "control character 0x09");
	near_miss("model_type llm\r", "carriage return");
	near_miss("device_memory_required: 16 GB", "field 3 of device_memory_required is 'GB', not 'MB'");
	near_miss("device1: [ks1, ks2]", "device has 3 fields, not 2");
	near_miss("device1: [ks1,]", "is not [name,...] without spaces");
	near_miss("modelarch Qwen3", "no form of model_memory_reserved_info.txt starts with 'modelarch'");
	near_miss("calcc_ver v0.1", "no form");
}
END_TEST

START_TEST(test_top_duplicates_and_missing)
{
	static const char *const lines[] = {
		"n_batch 1", "n_batch 2", "dram_rsvd vaddr 0x0 size 1", "dram_rsvd vaddr 0x10 size 1",
		NULL,
	};
	struct top x;
	top_init(&x);
	top_feed(&x, lines);
	size_t dup = 0, missing = 0;
	for (size_t i = 0; i < x.r.count; i++) {
		const struct nf_finding *f = &x.r.items[i];
		if (strcmp(f->code, "META_DUPLICATE") == 0) {
			dup++;
			ck_assert(f->line == 2 || f->line == 4);
		} else {
			ck_assert_str_eq(f->code, "META_KEY_MISSING");
			ck_assert_uint_eq(f->line, 0);
			missing++;
		}
	}
	ck_assert_uint_eq(dup, 2);
	/* calcc_ver, device0, model_arch, model_type, max_seq_len, sram_rsvd, map */
	ck_assert_uint_eq(missing, 7);
	ck_assert_uint_eq(x.t.n_batch, 1);            /* the first is kept */
	ck_assert_uint_eq(x.res[CB_DOMAIN_DRAM].vaddr, 0);
	top_free(&x);
}
END_TEST

START_TEST(test_sub_grammar)
{
	static const char *const lines[] = {
		"model_arch Qwen3",
		"smodel_type llm_decode",
		"n_batch 1",
		"calc_mchip mchip",
		"calc_utype [cpu,ccu]",
		"workload 17179869184 Byte",
		"ccu_stack_config location dram",
		"cpu_chip0_ping.bin chip 00000000 00000000 00000001",
		"ccu0_chip1.elf location sram chip 00000000 00000000 00000002",
		"icsr model_entry offset 0x40",
		"ibuf input_ids shape [1,40960] type int32 vaddr 0x100 0x28100 size 163840",
		"obuf logits shape [1,1,151936] type bfloat16 vaddr 0x50000 0x9a300 size 303872",
		"ibuf position_ids shape [1, 40960] type int32 vaddr 0x100 0x200 size 163840",
		"obuf x shape [1] type int32 vaddr 0x100 0x200 size 0x4",
		"cpu_chip0_pong.bin chip 00000000 00000000",
		"workload 1 B",
		NULL,
	};
	struct nf_report r;
	nf_report_init(&r);
	struct cb_submeta s = {0};
	struct cb_meta_out m = {.kind = CB_META_SUB, .file = "s/sub.txt", .r = &r, .sub = &s};
	for (uint64_t i = 0; lines[i]; i++)
		cb_meta_line(&m, lines[i], strlen(lines[i]), i + 1);
	cb_meta_finish(&m);
	ck_assert_str_eq(s.model_arch, "Qwen3");
	ck_assert_str_eq(s.smodel_type, "llm_decode");
	ck_assert_uint_eq(s.line_smodel_type, 2);
	ck_assert(s.has_workload && s.workload == 17179869184ull);
	ck_assert_str_eq(s.calc_utype, "[cpu,ccu]");
	ck_assert_str_eq(s.ccu_stack_location, "dram");
	ck_assert_uint_eq(s.ndecls, 2);
	ck_assert(!s.decls[0].elf && strcmp(s.decls[0].file, "cpu_chip0_ping.bin") == 0 &&
		  s.decls[0].mask[2] == 1 && s.decls[0].line == 8);
	ck_assert(s.decls[1].elf && strcmp(s.decls[1].location, "sram") == 0 && s.decls[1].mask[2] == 2);
	ck_assert_uint_eq(s.nicsrs, 1);
	ck_assert_uint_eq(s.icsrs[0].offset, 0x40);
	ck_assert_uint_eq(s.nbufs, 2);
	const struct cb_buf *b = &s.bufs[0];
	ck_assert(!b->out && b->rank == 2 && b->dims[1] == 40960 && b->dtype_bytes == 4 &&
		  b->ping == 0x100 && b->pong == 0x28100 && b->size == 163840 && b->line == 11);
	b = &s.bufs[1];
	ck_assert(b->out && b->rank == 3 && b->dims[2] == 151936 && b->dtype_bytes == 2);
	/* Lines 13-16: a shape with a space (the fields split), a size in hex, a
	 * mask of two words, another unit. */
	ck_assert_uint_eq(r.count, 4);
	static const uint64_t want[4] = {13, 14, 15, 16};
	for (size_t i = 0; i < 4; i++) {
		ck_assert_str_eq(r.items[i].code, "META_SYNTAX");
		ck_assert_uint_eq(r.items[i].line, want[i]);
		ck_assert_str_eq(r.items[i].file, "s/sub.txt");
	}
	ck_assert(strstr(r.items[0].evidence, "ibuf has 12 fields, not 11"));
	ck_assert(strstr(r.items[1].evidence, "'0x4' is hex where the form has a decimal"));
	ck_assert(strstr(r.items[2].evidence, "command has 4 fields, not 5"));
	ck_assert(strstr(r.items[3].evidence, "'B', not 'Byte'"));
	cb_submeta_free(&s);
	nf_report_free(&r);
}
END_TEST

/* ---- YAML ---------------------------------------------------------------------------- */

static int yaml(const char *text, struct nf_report *r, struct cb_yaml_doc *d,
		const struct cb_yaml_limits *lim)
{
	nf_report_init(r);
	return cb_yaml_load_buffer(text, strlen(text), "t.yaml", lim, r, d);
}

START_TEST(test_yaml_values)
{
	struct nf_report r;
	struct cb_yaml_doc d;
	const char *text =
		"zeta: 1\n"
		"alpha: -7\n"
		"hex: 0x1F\n"
		"big: 0xffffffffffffffff\n"
		"oct: 0o17\n"
		"real: 1000000.0\n"
		"exp: 1e3\n"
		"t: true\n"
		"f: False\n"
		"n: ~\n"
		"empty:\n"
		"quoted: '0x10'\n"
		"text: llm_decode\n"
		"list: [0x100, [1, 40960], int32, input_0]\n"
		"nested:\n"
		"  lib/tvm: 7aebd1\n";
	ck_assert_int_eq(yaml(text, &r, &d, NULL), 0);
	ck_assert_uint_eq(r.count, 0);
	json_t *o = d.root;
	ck_assert(json_is_object(o));
	static const char *const order[] = {"zeta", "alpha", "hex", "big", "oct", "real", "exp", "t",
					    "f", "n", "empty", "quoted", "text", "list", "nested"};
	size_t i = 0;
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v)
		ck_assert_str_eq(k, order[i++]);
	ck_assert_uint_eq(i, 15);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "alpha")), -7);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "hex")), 31);
	ck_assert_str_eq(json_string_value(json_object_get(o, "big")), "0xffffffffffffffff");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "oct")), 15);
	ck_assert(json_real_value(json_object_get(o, "real")) == 1e6);
	ck_assert(json_real_value(json_object_get(o, "exp")) == 1e3);
	ck_assert(json_is_true(json_object_get(o, "t")));
	ck_assert(json_is_false(json_object_get(o, "f")));
	ck_assert(json_is_null(json_object_get(o, "n")));
	ck_assert(json_is_null(json_object_get(o, "empty")));
	ck_assert_str_eq(json_string_value(json_object_get(o, "quoted")), "0x10");
	json_t *list = json_object_get(o, "list");
	ck_assert_int_eq(json_integer_value(json_array_get(list, 0)), 0x100);
	ck_assert_int_eq(json_integer_value(json_array_get(json_array_get(list, 1), 1)), 40960);
	ck_assert_str_eq(json_string_value(json_array_get(list, 3)), "input_0");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "nested"), "lib/tvm")),
			 "7aebd1");
	/* Lines of members and elements. */
	ck_assert_uint_eq(cb_yaml_line(&d, o, "zeta"), 1);
	ck_assert_uint_eq(cb_yaml_line(&d, o, "list"), 14);
	ck_assert_uint_eq(cb_yaml_line(&d, json_object_get(o, "nested"), "lib/tvm"), 16);
	ck_assert_uint_eq(cb_yaml_line_at(&d, list, 2), 14);
	ck_assert_uint_eq(cb_yaml_line(&d, o, "absent"), 0);
	cb_yaml_free(&d, true);
	nf_report_free(&r);
}
END_TEST

static void yaml_fails(const char *text, const char *code, uint64_t line, const char *why,
		       const struct cb_yaml_limits *lim)
{
	struct nf_report r;
	struct cb_yaml_doc d;
	int rc = yaml(text, &r, &d, lim);
	if (r.count != 1)
		dump(&r);
	ck_assert_int_eq(rc, -1);
	ck_assert_ptr_null(d.root);
	ck_assert_uint_eq(r.count, 1);
	ck_assert_str_eq(r.items[0].code, code);
	ck_assert_int_eq(r.items[0].gate, 'B');
	ck_assert_int_eq(r.items[0].klass, NF_CLASS_ERROR);
	ck_assert_uint_eq(r.items[0].line, line);
	ck_assert_msg(strstr(r.items[0].evidence, why), "'%s' lacks '%s'", r.items[0].evidence, why);
	nf_report_free(&r);
}

START_TEST(test_yaml_limits)
{
	/* billion laughs: 9^9 values if expanded */
	char bomb[4096];
	size_t n = (size_t)snprintf(bomb, sizeof bomb, "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, "
				    "lol, lol]\n");
	for (int i = 1; i < 10; i++) {
		n += (size_t)snprintf(bomb + n, sizeof bomb - n, "a%d: &a%d [", i, i);
		for (int k = 0; k < 9; k++)
			n += (size_t)snprintf(bomb + n, sizeof bomb - n, "%s*a%d", k ? ", " : "", i - 1);
		n += (size_t)snprintf(bomb + n, sizeof bomb - n, "]\n");
	}
	yaml_fails(bomb, "YAML_LIMIT", 7, "more than 1000000 values", NULL);
	size_t depth = 10000;
	char *deep = malloc(2 * depth + 16);
	strcpy(deep, "x: ");
	memset(deep + 3, '[', depth);
	memset(deep + 3 + depth, ']', depth);
	strcpy(deep + 3 + 2 * depth, "\n");
	yaml_fails(deep, "YAML_LIMIT", 1, "nesting deeper than 64 levels", NULL);
	free(deep);
	yaml_fails("a: !!python/object:os.system {}\n", "YAML_TAG", 1, "tags are not accepted", NULL);
	yaml_fails("a: 1\nb: [1, 2\nc: 3\n", "YAML_SYNTAX", 3, "flow sequence", NULL);
	yaml_fails("a: 1\n---\nb: 2\n", "YAML_SYNTAX", 2, "more than one document", NULL);
	yaml_fails("a: *nothing\n", "YAML_SYNTAX", 1, "names no anchor", NULL);
	yaml_fails("? [1, 2]\n: x\n", "YAML_SYNTAX", 1, "a mapping key is not a scalar", NULL);
	struct cb_yaml_limits small = cb_yaml_default_limits;
	small.max_bytes = 10;
	yaml_fails("abcdef: ghijkl\n", "YAML_LIMIT", 0, "larger than 10 bytes", &small);
	small = cb_yaml_default_limits;
	small.max_scalar = 4;
	yaml_fails("a: abcdefgh\n", "YAML_LIMIT", 1, "a scalar of 8 bytes", &small);
	/* A few aliases within the limit expand. */
	struct nf_report r;
	struct cb_yaml_doc d;
	ck_assert_int_eq(yaml("base: &b [1, 2]\ncopy: *b\n", &r, &d, NULL), 0);
	ck_assert(json_equal(json_object_get(d.root, "base"), json_object_get(d.root, "copy")));
	cb_yaml_free(&d, true);
	nf_report_free(&r);
	/* A duplicate key: reported at its line, the first value kept. */
	ck_assert_int_eq(yaml("a: 1\nb: 2\na: 3\n", &r, &d, NULL), 0);
	ck_assert_uint_eq(r.count, 1);
	ck_assert_str_eq(r.items[0].code, "YAML_DUPLICATE_KEY");
	ck_assert_uint_eq(r.items[0].line, 3);
	ck_assert_int_eq(json_integer_value(json_object_get(d.root, "a")), 1);
	cb_yaml_free(&d, true);
	nf_report_free(&r);
}
END_TEST

/* ---- the line reader ------------------------------------------------------------------ */

struct seen {
	char lines[16][64];
	uint64_t lineno[16];
	bool toolong[16];
	size_t n;
};

static int collect(void *arg, const char *line, size_t len, uint64_t lineno, bool toolong)
{
	struct seen *s = arg;
	ck_assert_uint_lt(s->n, 16);
	ck_assert_uint_lt(len, 64);
	memcpy(s->lines[s->n], line, len);
	s->lines[s->n][len] = 0;
	s->lineno[s->n] = lineno;
	s->toolong[s->n++] = toolong;
	return 0;
}

START_TEST(test_lines)
{
	int fd = memfd_create("lines", 0);
	ck_assert_int_ge(fd, 0);
	const char *text = "one\ntwo\n\n0123456789abcdefghijklmnop\nthree\nlast";
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	for (size_t chunk = 1; chunk <= 9; chunk += 4) {
		lseek(fd, 0, SEEK_SET);
		struct seen s = {0};
		uint64_t bytes = 0;
		ck_assert_int_eq(cb_read_lines(fd, chunk, 8, collect, &s, NULL, NULL, &bytes), 0);
		ck_assert_uint_eq(bytes, strlen(text));
		ck_assert_uint_eq(s.n, 6);
		ck_assert_str_eq(s.lines[0], "one");
		ck_assert_str_eq(s.lines[1], "two");
		ck_assert_str_eq(s.lines[2], "");
		ck_assert(s.toolong[3]);
		ck_assert_str_eq(s.lines[3], "01234567");     /* its first maxline bytes */
		ck_assert_uint_eq(s.lineno[3], 4);
		ck_assert_str_eq(s.lines[4], "three");
		ck_assert_uint_eq(s.lineno[4], 5);
		ck_assert_str_eq(s.lines[5], "last");         /* no final newline */
		ck_assert(!s.toolong[5]);
	}
	close(fd);
}
END_TEST

/* ---- union and sanitizer -------------------------------------------------------------------- */

START_TEST(test_union)
{
	struct cb_range v[] = {
		{100, 200, 0}, {150, 250, 1}, {250, 260, 2}, {300, 300, 3}, {0, 10, 4}, {120, 130, 5},
	};
	/* [0,10) + [100,260) */
	ck_assert_uint_eq(cb_union_bytes(v, 6), 10 + 160);
	ck_assert_uint_eq(cb_union_bytes(v, 0), 0);
	struct cb_range w[] = {{0, UINT64_MAX, 0}, {5, 7, 1}};
	ck_assert_uint_eq(cb_union_bytes(w, 2), UINT64_MAX);
}
END_TEST

START_TEST(test_sanitize)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"vaddr [0x100000000, +0x400) overlaps", "vaddr [0x?, +0x?) overlaps"},
		{"the ONNX '/data/vendor/x.onnx' is missing", "the ONNX '<path>' is missing"},
		{"a symlink to '/etc/passwd' leads out", "a symlink to '<path>' leads out"},
		{"param_blk0.bin and a/b/c.txt stay", "param_blk0.bin and a/b/c.txt stay"},
		{"mask 00000000 00000000 00000001", "mask 00000000 00000000 00000001"},
		{"sha 3f1e0c9b", "sha 3f1e0c9b"},
		{"at /abs/path, then 0xdeadBEEF.", "at <path>, then 0x?."},
		{"size 163840 of int32", "size 163840 of int32"},
		{"a symlink to '../x' leads out", "a symlink to '<path>' leads out"},
		{"a/../b and ..x stay", "a/../b and ..x stay"},
		{"vaddr '0000000010002200' is not hex", "vaddr '<number>' is not hex"},
		{"of 9605632 bytes, 4294967296", "of 9605632 bytes, <number>"},
		{"is 3d914d9251cd9845e125736f05b772ad50a387b4086c2e1bb5a4c0f1e6c5d07a, ok",
		 "is 3d914d9251cd9845e125736f05b772ad50a387b4086c2e1bb5a4c0f1e6c5d07a, ok"},
		{"cpu_chip0_ping.bin name_123456789", "cpu_chip0_ping.bin name_123456789"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *s = cb_sanitize(cases[i].in);
		ck_assert_str_eq(s, cases[i].out);
		free(s);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("calbin");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_tokens);
	tcase_add_test(tc, test_top_grammar);
	tcase_add_test(tc, test_top_near_misses);
	tcase_add_test(tc, test_top_duplicates_and_missing);
	tcase_add_test(tc, test_sub_grammar);
	tcase_add_test(tc, test_yaml_values);
	tcase_add_test(tc, test_yaml_limits);
	tcase_add_test(tc, test_lines);
	tcase_add_test(tc, test_union);
	tcase_add_test(tc, test_sanitize);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
