/* tests/calbin/test_mount.c — what the calbin library gives a mount
 * (calbin/mount.h): the device images (the later line wins; pieces and
 * overlaps written out by hand, and a brute-force painter of random lines
 * as the oracle), the chips of the tree, the package probe, and the
 * generated documents on a package model built by hand. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calbin/internal.h"
#include "calbin/mount.h"

/* ---- a package model by hand ------------------------------------------------------ */

#define NMAPS_MAX 512

struct fake {
	struct cb_package p;
	struct cb_map maps[NMAPS_MAX];
	struct cb_file files[4];
};

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof *f);
	f->p.maps = f->maps;
	f->p.files = f->files;
	f->p.chips = 2;
	f->p.manifest_index = f->p.top_meta_index = f->p.hparam_index = f->p.sums_index = -1;
	f->p.reservations[CB_DOMAIN_DRAM] = (struct cb_reservation){true, 0x1000, 0x10000, 8};
	f->p.reservations[CB_DOMAIN_SRAM] = (struct cb_reservation){true, 0x100000, 0x1000, 9};
	f->files[0] = (struct cb_file){.path = "param_blk0.bin", .type = S_IFREG, .size = 0x10000,
				       .kind = CB_KIND_PARAM_BLOCK, .submodel = -1, .chip = 0};
	f->p.nfiles = 1;
}

/* A valid line: chip mask low word `mask`, file 0. */
static size_t line(struct fake *f, uint64_t vaddr, uint64_t size, uint64_t off, uint32_t mask,
		   enum cb_domain d)
{
	size_t i = f->p.nmaps++;
	f->maps[i] = (struct cb_map){.file = "param_blk0.bin", .file_index = 0, .offset = off,
				     .vaddr = vaddr, .size = size, .mask = {0, 0, mask},
				     .domain = (int)d, .line = 11 + i, .valid = true};
	return i;
}

static void piece_is(const struct cb_image *img, size_t i, uint64_t off, uint64_t len, size_t map,
		     uint64_t fo)
{
	ck_assert_uint_lt(i, img->npieces);
	ck_assert_uint_eq(img->pieces[i].offset, off);
	ck_assert_uint_eq(img->pieces[i].length, len);
	ck_assert_uint_eq(img->pieces[i].map, map);
	ck_assert_uint_eq(img->pieces[i].file_offset, fo);
}

static void overlap_is(const struct cb_image *img, size_t i, uint64_t off, uint64_t len,
		       size_t wins, size_t lines)
{
	ck_assert_uint_lt(i, img->noverlaps);
	ck_assert_uint_eq(img->overlaps[i].offset, off);
	ck_assert_uint_eq(img->overlaps[i].length, len);
	ck_assert_uint_eq(img->overlaps[i].wins, wins);
	ck_assert_uint_eq(img->overlaps[i].lines, lines);
}

/* ---- images ------------------------------------------------------------------------- */

START_TEST(test_image_by_hand)
{
	struct fake f;
	fake_init(&f);
	/* image offsets are vaddr - 0x1000 */
	size_t m0 = line(&f, 0x1000, 0x100, 0x0, 1, CB_DOMAIN_DRAM);      /* [0x0, 0x100) */
	size_t m1 = line(&f, 0x1080, 0x100, 0x1000, 1, CB_DOMAIN_DRAM);   /* [0x80, 0x180) */
	size_t m2 = line(&f, 0x1000, 0x40, 0x2000, 3, CB_DOMAIN_DRAM);    /* [0x0, 0x40), chips 0, 1 */
	size_t m3 = line(&f, 0x1000, 0x1000, 0x0, 1, CB_DOMAIN_DRAM);     /* invalid: not shown */
	f.maps[m3].valid = false;
	line(&f, 0x100000, 0x10, 0x0, 1, CB_DOMAIN_SRAM);                  /* another domain */
	size_t m5 = line(&f, 0x1020, 0x40, 0x8000, 2, CB_DOMAIN_DRAM);    /* chip 1: [0x20, 0x60) */
	size_t m6 = line(&f, 0x2000, 0x1000, 0x3000, 1, CB_DOMAIN_DRAM);  /* [0x1000, 0x2000) */
	size_t m7 = line(&f, 0x2400, 0x100, 0x5000, 1, CB_DOMAIN_DRAM);   /* [0x1400, 0x1500) */
	line(&f, 0x5000, 0x100, 0x6000, 1, CB_DOMAIN_DRAM);                /* m8 [0x4000, 0x4100): hidden */
	size_t m9 = line(&f, 0x4f00, 0x300, 0x7000, 1, CB_DOMAIN_DRAM);   /* [0x3f00, 0x4200) */
	line(&f, 0x9000, 0, 0x0, 1, CB_DOMAIN_DRAM);                       /* size 0: nothing */
	line(&f, 0x7000, 0x100, 0x100, 1, CB_DOMAIN_DRAM);                 /* m11 [0x6000, 0x6100) */
	size_t m12 = line(&f, 0x7000, 0x100, 0x200, 1, CB_DOMAIN_DRAM);   /* the same range, later */
	size_t m13 = line(&f, 0x7080, 0x80, 0x300, 1, CB_DOMAIN_DRAM);    /* [0x6080, 0x6100) */

	struct cb_image img;
	ck_assert_int_eq(cb_image_build(&f.p, 0, CB_DOMAIN_DRAM, &img), 0);
	ck_assert_uint_eq(img.vaddr, 0x1000);
	ck_assert_uint_eq(img.size, 0x10000);
	ck_assert_uint_eq(img.nlines, 10);
	ck_assert_uint_eq(img.npieces, 9);
	piece_is(&img, 0, 0x0, 0x40, m2, 0x2000);
	piece_is(&img, 1, 0x40, 0x40, m0, 0x40);
	piece_is(&img, 2, 0x80, 0x100, m1, 0x1000);
	piece_is(&img, 3, 0x1000, 0x400, m6, 0x3000);
	piece_is(&img, 4, 0x1400, 0x100, m7, 0x5000);
	piece_is(&img, 5, 0x1500, 0xb00, m6, 0x3500);
	piece_is(&img, 6, 0x3f00, 0x300, m9, 0x7000);   /* one piece across the hidden line */
	piece_is(&img, 7, 0x6000, 0x80, m12, 0x200);
	piece_is(&img, 8, 0x6080, 0x80, m13, 0x300);
	ck_assert_uint_eq(img.data_bytes, 0x40 + 0x40 + 0x100 + 0x400 + 0x100 + 0xb00 + 0x300 + 0x100);
	ck_assert_uint_eq(img.noverlaps, 6);
	overlap_is(&img, 0, 0x0, 0x40, m2, 2);
	overlap_is(&img, 1, 0x80, 0x80, m1, 2);
	overlap_is(&img, 2, 0x1400, 0x100, m7, 2);
	overlap_is(&img, 3, 0x4000, 0x100, m9, 2);
	overlap_is(&img, 4, 0x6000, 0x80, m12, 2);
	overlap_is(&img, 5, 0x6080, 0x80, m13, 3);
	/* the interval index */
	ck_assert_uint_eq(cb_image_find(&img, 0x0), 0);
	ck_assert_uint_eq(cb_image_find(&img, 0x7f), 1);
	ck_assert_uint_eq(cb_image_find(&img, 0x180), 3);   /* a hole: the next piece */
	ck_assert_uint_eq(cb_image_find(&img, 0x14ff), 4);
	ck_assert_uint_eq(cb_image_find(&img, 0x6100), 9);  /* past the last */
	cb_image_free(&img);

	ck_assert_int_eq(cb_image_build(&f.p, 1, CB_DOMAIN_DRAM, &img), 0);
	ck_assert_uint_eq(img.nlines, 2);
	ck_assert_uint_eq(img.npieces, 2);
	piece_is(&img, 0, 0x0, 0x20, m2, 0x2000);
	piece_is(&img, 1, 0x20, 0x40, m5, 0x8000);
	ck_assert_uint_eq(img.noverlaps, 1);
	overlap_is(&img, 0, 0x20, 0x20, m5, 2);
	cb_image_free(&img);

	ck_assert_int_eq(cb_image_build(&f.p, 0, CB_DOMAIN_SRAM, &img), 0);
	ck_assert_uint_eq(img.npieces, 1);
	piece_is(&img, 0, 0x0, 0x10, 4, 0x0);
	cb_image_free(&img);

	/* chip 5 has nothing; sync has no reservation */
	ck_assert_int_eq(cb_image_build(&f.p, 5, CB_DOMAIN_DRAM, &img), 0);
	ck_assert_uint_eq(img.npieces, 0);
	ck_assert_uint_eq(img.noverlaps, 0);
	ck_assert_uint_eq(cb_image_find(&img, 0), 0);
	cb_image_free(&img);
	ck_assert_int_eq(cb_image_build(&f.p, 0, CB_DOMAIN_SYNC, &img), -ENOENT);
	cb_image_free(&img);
}
END_TEST

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* Random lines against a painter: every byte's owner is the last line
 * (in file order) covering it; every byte's count is how many cover it. */
START_TEST(test_image_random)
{
	static struct fake f;
	enum { SIZE = 4096 };
	static int owner[SIZE], count[SIZE];
	uint32_t seed = 12345u + (uint32_t)_i;
	fake_init(&f);
	f.p.reservations[CB_DOMAIN_DRAM].size = SIZE;
	size_t n = 1 + lcg(&seed) % 300;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = lcg(&seed) % SIZE, len = 1 + lcg(&seed) % (lcg(&seed) % 4 ? 64 : 1024);
		if (a + len > SIZE)
			len = SIZE - a;
		line(&f, 0x1000 + a, len, lcg(&seed) % 0x8000, 1 + lcg(&seed) % 3, CB_DOMAIN_DRAM);
		if (lcg(&seed) % 10 == 0)
			f.maps[i].valid = false;
	}
	for (int c = 0; c < 2; c++) {
		for (size_t x = 0; x < SIZE; x++)
			owner[x] = -1, count[x] = 0;
		size_t lines = 0;
		for (size_t i = 0; i < n; i++) {
			const struct cb_map *m = &f.maps[i];
			if (!m->valid || !cb_mask_has(m->mask, (unsigned)c))
				continue;
			lines++;
			for (uint64_t x = m->vaddr - 0x1000; x < m->vaddr - 0x1000 + m->size; x++)
				owner[x] = (int)i, count[x]++;
		}
		struct cb_image img;
		ck_assert_int_eq(cb_image_build(&f.p, (unsigned)c, CB_DOMAIN_DRAM, &img), 0);
		ck_assert_uint_eq(img.nlines, lines);
		uint64_t data = 0, at = 0;
		for (size_t k = 0; k < img.npieces; k++) {
			const struct cb_image_piece *pc = &img.pieces[k];
			ck_assert_uint_ge(pc->offset, at);     /* sorted, disjoint */
			for (uint64_t x = at; x < pc->offset; x++)
				ck_assert_int_eq(owner[x], -1);
			const struct cb_map *m = &f.maps[pc->map];
			for (uint64_t x = pc->offset; x < pc->offset + pc->length; x++)
				ck_assert_int_eq(owner[x], (int)pc->map);
			ck_assert_uint_eq(pc->file_offset, m->offset + pc->offset - (m->vaddr - 0x1000));
			/* maximal: the next piece is another line or not adjacent */
			if (k + 1 < img.npieces)
				ck_assert(img.pieces[k + 1].map != pc->map ||
					  img.pieces[k + 1].offset != pc->offset + pc->length);
			data += pc->length;
			at = pc->offset + pc->length;
		}
		for (uint64_t x = at; x < SIZE; x++)
			ck_assert_int_eq(owner[x], -1);
		ck_assert_uint_eq(img.data_bytes, data);
		uint64_t shared = 0, listed = 0;
		for (size_t x = 0; x < SIZE; x++)
			shared += count[x] >= 2;
		at = 0;
		for (size_t k = 0; k < img.noverlaps; k++) {
			const struct cb_image_overlap *o = &img.overlaps[k];
			ck_assert_uint_ge(o->offset, at);
			for (uint64_t x = o->offset; x < o->offset + o->length; x++) {
				ck_assert_int_eq(count[x], (int)o->lines);
				ck_assert_int_eq(owner[x], (int)o->wins);
			}
			listed += o->length;
			at = o->offset + o->length;
		}
		ck_assert_uint_eq(listed, shared);
		cb_image_free(&img);
	}
}
END_TEST

START_TEST(test_chips)
{
	struct fake f;
	fake_init(&f);
	ck_assert_uint_eq(cb_package_chips(&f.p), 2);
	f.p.chips = 0;
	ck_assert_uint_eq(cb_package_chips(&f.p), 0);
	line(&f, 0x1000, 0x10, 0, 1, CB_DOMAIN_DRAM);
	ck_assert_uint_eq(cb_package_chips(&f.p), 1);
	size_t i = line(&f, 0x1000, 0x10, 0, 0, CB_DOMAIN_DRAM);
	f.maps[i].mask[0] = 0x80000000u;   /* chip 95 */
	f.maps[i].valid = false;
	ck_assert_uint_eq(cb_package_chips(&f.p), 1);   /* invalid lines do not count */
	f.maps[i].valid = true;
	ck_assert_uint_eq(cb_package_chips(&f.p), 96);
	f.maps[i].mask[0] = 0;
	f.maps[i].mask[1] = 1;   /* chip 32 */
	ck_assert_uint_eq(cb_package_chips(&f.p), 33);
}
END_TEST

/* ---- probe --------------------------------------------------------------------------- */

static void touch(const char *dir, const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

START_TEST(test_probe)
{
	char dir[] = "/tmp/cb-probe.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[512];
	ck_assert_int_eq(cb_package_probe(dir), 0);             /* empty */
	touch(dir, "model_memory_reserved_info.txt");
	ck_assert_int_eq(cb_package_probe(dir), 0);             /* no manifest */
	touch(dir, "hparam.yaml");
	ck_assert_int_eq(cb_package_probe(dir), 0);             /* hparam.yaml is not one */
	touch(dir, "m.yaml");
	ck_assert_int_eq(cb_package_probe(dir), 1);
	snprintf(path, sizeof path, "%s/m.yaml", dir);
	ck_assert_int_eq(cb_package_probe(path), 0);            /* a regular file */
	snprintf(path, sizeof path, "%s/none", dir);
	ck_assert_int_eq(cb_package_probe(path), 0);            /* nothing there */
	snprintf(path, sizeof path, "%s/model_memory_reserved_info.txt", dir);
	unlink(path);
	ck_assert_int_eq(cb_package_probe(dir), 0);
	snprintf(path, sizeof path, "%s/m.yaml", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/hparam.yaml", dir);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* ---- documents ------------------------------------------------------------------------ */

static json_t *parse(char *text)
{
	ck_assert_ptr_nonnull(text);
	size_t n = strlen(text);
	ck_assert(n > 0 && text[n - 1] == '\n');
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);
	ck_assert_msg(v != NULL, "%s: %s", e.text, text);
	free(text);
	return v;
}

static json_int_t geti(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	ck_assert_msg(json_is_integer(v), "%s is not an integer", k);
	return json_integer_value(v);
}

static const char *gets(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	ck_assert_msg(s != NULL, "%s is not a string", k);
	return s;
}

START_TEST(test_docs_submodel)
{
	struct fake f;
	fake_init(&f);
	struct cb_buf bufs[2] = {
		{.name = "input_ids", .rank = 2, .dims = {1, 40960}, .dtype = "int32", .dtype_bytes = 4,
		 .ping = 0x1788c2200, .pong = 0x1788ea200, .size = 163840, .line = 27},
		{.name = "logits", .out = true, .rank = 3, .dims = {1, 1, 151936}, .dtype = "bfloat16",
		 .dtype_bytes = 2, .ping = 0x178962200, .pong = 0x1789ac500, .size = 303873, .line = 29},
	};
	struct cb_icsr icsr = {.name = "ping_pong_sel", .offset = 0x40, .line = 26};
	struct cb_decl decl = {.file = "cpu_chip1_ping.bin", .mask = {0, 0, 2}, .line = 13,
			       .file_index = -1};
	struct cb_cmd_type types[2] = {{"PLD_LOAD", 3, 300}, {"PLD_STORE", 1, 7}};
	struct cb_commands cmd = {.file_index = 1, .bin_index = -1, .engine = CB_ENGINE_PLD,
				  .chip = 1, .pong = true, .parsed = true, .count = 4,
				  .data_bytes = 307, .bin_count = UINT64_MAX, .ntypes = 2,
				  .types = types};
	char *ops[3] = {"op_a", "op_b", "op_a"};
	uint64_t lines[3] = {1, 2, 3};
	struct cb_profparts pp[2] = {{.file_index = 2, .count = 3, .ops = ops, .lines = lines},
				     {.file_index = -1}};
	struct cb_tensor t[2] = {{.index = 0, .rank = 2, .dims = {1, 40960}},
				 {.out = true, .index = 0, .rank = 1, .dims = {7}}};
	struct cb_op op = {.name = "op_a", .ntensors = 2, .tensors = t};
	struct cb_submodel s = {
		.dir = "M_decode_1", .kind = CB_SUB_DECODE, .meta_index = 3, .opio_index = -1,
		.meta_ok = true,
		.meta = {.model_arch = "M", .smodel_type = "llm_decode", .has_n_batch = true,
			 .n_batch = 1, .line_model_arch = 1, .line_smodel_type = 2, .ndecls = 1,
			 .decls = &decl, .nicsrs = 1, .icsrs = &icsr, .nbufs = 2, .bufs = bufs},
		.nops = 1, .ops = &op, .nprofparts = 2, .profparts = pp, .ncommands = 1,
		.commands = &cmd,
	};
	f.files[1] = (struct cb_file){.path = "M_decode_1/pld_chip1_pong.txt", .type = S_IFREG};
	f.files[2] = (struct cb_file){.path = "M_decode_1/M_decode_1.chip0.profparts", .type = S_IFREG};
	f.files[3] = (struct cb_file){.path = "M_decode_1/submodel_memory_reserved_info.txt",
				      .type = S_IFREG};
	f.p.nfiles = 4;
	f.p.submodels = &s;
	f.p.nsubmodels = 1;
	json_error_t e;
	f.p.manifest = json_loads("{\"model_name\": \"M\", \"one_model_cfg\": {\"decode\": "
				  "{\"model_path\": \"/data/x.onnx\", \"input_shape\": "
				  "{\"input_ids\": [1, 1]}}}, \"note\": \"at 0x1f00 here\"}", 0, &e);
	ck_assert_ptr_nonnull(f.p.manifest);
	s.ops_json = json_loads("{\"op_a\": {\"args_0\": [6324756992, [1, 40960], \"int32\", "
				"\"input_0\"], \"outs_0\": [4096, [7], \"int8\", \"activation\"]}}", 0, &e);
	ck_assert_ptr_nonnull(s.ops_json);

	/* io.json: the contract, the manifest's shape beside each input */
	json_t *io = parse(cb_submodel_io_json(&f.p, 0, false));
	ck_assert_str_eq(gets(io, "kind"), "decode");
	json_t *in = json_array_get(json_object_get(io, "inputs"), 0);
	ck_assert_str_eq(gets(in, "name"), "input_ids");
	ck_assert_int_eq(geti(in, "bytes"), 163840);
	ck_assert(json_is_true(json_object_get(in, "size_ok")));
	ck_assert_str_eq(gets(in, "vaddr_ping"), "0x1788c2200");
	ck_assert_str_eq(gets(in, "vaddr_pong"), "0x1788ea200");
	ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(in, "input_shape"), 1)), 1);
	json_t *out = json_array_get(json_object_get(io, "outputs"), 0);
	ck_assert(json_is_false(json_object_get(out, "size_ok")));   /* 303872 != 303873 */
	ck_assert_int_eq(geti(out, "dtype_bytes"), 2);
	ck_assert_ptr_null(json_object_get(out, "input_shape"));
	json_decref(io);
	io = parse(cb_submodel_io_json(&f.p, 0, true));
	in = json_array_get(json_object_get(io, "inputs"), 0);
	ck_assert_ptr_null(json_object_get(in, "vaddr_ping"));
	ck_assert_ptr_null(json_object_get(in, "vaddr_pong"));
	ck_assert_int_eq(geti(in, "bytes"), 163840);
	json_decref(io);
	ck_assert_ptr_null(cb_submodel_io_json(&f.p, 1, false));

	/* metadata.json */
	json_t *md = parse(cb_submodel_metadata_json(&f.p, 0, false));
	ck_assert_str_eq(gets(md, "smodel_type"), "llm_decode");
	ck_assert_str_eq(gets(md, "file"), "M_decode_1/submodel_memory_reserved_info.txt");
	ck_assert(json_is_null(json_object_get(md, "workload")));
	json_t *d = json_array_get(json_object_get(md, "declarations"), 0);
	ck_assert_str_eq(gets(d, "chip_mask"), "00000000 00000000 00000002");
	ck_assert_str_eq(gets(d, "kind"), "command");
	ck_assert(json_is_false(json_object_get(d, "present")));
	ck_assert_int_eq(geti(d, "line"), 13);
	ck_assert_str_eq(gets(json_array_get(json_object_get(md, "icsr"), 0), "offset"), "0x40");
	ck_assert_int_eq(json_array_size(json_object_get(md, "ibuf")), 1);
	ck_assert_int_eq(json_array_size(json_object_get(md, "obuf")), 1);
	ck_assert_int_eq(geti(json_object_get(md, "lines"), "smodel_type"), 2);
	json_decref(md);
	md = parse(cb_submodel_metadata_json(&f.p, 0, true));
	ck_assert_ptr_null(json_object_get(json_array_get(json_object_get(md, "icsr"), 0), "offset"));
	ck_assert_ptr_null(json_object_get(json_array_get(json_object_get(md, "obuf"), 0),
					   "vaddr_ping"));
	json_decref(md);

	/* ops */
	char *shapes = cb_op_shapes(&f.p, 0, 0);
	ck_assert_str_eq(shapes, "{\"args_0\":[1,40960],\"outs_0\":[7]}");
	free(shapes);
	json_t *oj = parse(cb_op_json(&f.p, 0, 0));
	ck_assert(json_equal(oj, json_object_get(s.ops_json, "op_a")));
	json_decref(oj);
	oj = parse(cb_submodel_ops_json(&f.p, 0));
	ck_assert(json_equal(oj, s.ops_json));
	json_decref(oj);
	ck_assert_ptr_null(cb_op_json(&f.p, 0, 1));

	/* commands */
	char *name = cb_commands_doc_name(&f.p, 0, 0);
	ck_assert_str_eq(name, "pld_chip1_pong.json");
	free(name);
	json_t *cj = parse(cb_commands_doc_json(&f.p, 0, 0));
	ck_assert_str_eq(gets(cj, "file"), "M_decode_1/pld_chip1_pong.txt");
	ck_assert(json_is_null(json_object_get(cj, "binary")));
	ck_assert(json_is_null(json_object_get(cj, "binary_commands")));
	ck_assert_str_eq(gets(cj, "engine"), "pld");
	ck_assert_str_eq(gets(cj, "buffer"), "pong");
	ck_assert_int_eq(geti(cj, "chip"), 1);
	ck_assert_int_eq(geti(cj, "commands"), 4);
	ck_assert_int_eq(geti(cj, "data_bytes"), 307);
	json_t *bt = json_object_get(cj, "by_type");
	ck_assert_int_eq(geti(json_object_get(bt, "PLD_LOAD"), "commands"), 3);
	ck_assert_int_eq(geti(json_object_get(bt, "PLD_STORE"), "data_bytes"), 7);
	ck_assert_str_eq(json_object_iter_key(json_object_iter(bt)), "PLD_LOAD");  /* dump order */
	json_decref(cj);

	/* profparts */
	size_t len = 0;
	char *pt = cb_profparts_text(&f.p, 0, 0, &len);
	ck_assert_str_eq(pt, "op_a\nop_b\nop_a\n");
	ck_assert_uint_eq(len, 15);
	free(pt);
	ck_assert_ptr_null(cb_profparts_text(&f.p, 0, 1, &len));   /* no file */
	ck_assert_ptr_null(cb_profparts_text(&f.p, 0, 2, &len));

	/* manifest.json and its public copy */
	json_t *mj = parse(cb_manifest_json(&f.p, false));
	ck_assert(json_equal(mj, f.p.manifest));
	json_decref(mj);
	mj = parse(cb_manifest_json(&f.p, true));
	ck_assert_str_eq(gets(json_object_get(json_object_get(mj, "one_model_cfg"), "decode"),
			      "model_path"), "<path>");
	ck_assert_str_eq(gets(mj, "note"), "at 0x? here");
	ck_assert_str_eq(gets(mj, "model_name"), "M");
	json_decref(mj);

	json_decref(f.p.manifest);
	json_decref(s.ops_json);
}
END_TEST

START_TEST(test_docs_memory)
{
	struct fake f;
	fake_init(&f);
	line(&f, 0x1000, 0x100, 0x0, 1, CB_DOMAIN_DRAM);
	line(&f, 0x1080, 0x100, 0x200, 1, CB_DOMAIN_DRAM);
	line(&f, 0x1000, 0x10, 0x8000, 2, CB_DOMAIN_DRAM);
	struct cb_block_cover bc = {.file_index = 0, .file_bytes = 0x10000};
	f.p.memory.blocks = &bc;
	f.p.memory.nblocks = 1;
	struct cb_overlap ov = {0, CB_DOMAIN_DRAM, 0, 1, 0x1080, 0x80};
	f.p.memory.overlaps = &ov;
	f.p.memory.noverlaps = 1;
	struct cb_image img[2];
	ck_assert_int_eq(cb_image_build(&f.p, 0, CB_DOMAIN_DRAM, &img[0]), 0);
	ck_assert_int_eq(cb_image_build(&f.p, 1, CB_DOMAIN_DRAM, &img[1]), 0);
	json_t *m = parse(cb_mount_memory_json(&f.p, img, 2, false));
	json_t *x = json_array_get(json_object_get(m, "overlap_list"), 0);
	ck_assert_int_eq(geti(x, "wins"), 12);
	ck_assert_int_eq(geti(x, "line_b"), 12);
	json_t *u = json_object_get(json_object_get(json_object_get(json_object_get(m,
		"parameter_bytes"), "by_file"), "param_blk0.bin"), "uncovered_list");
	/* mapped [0, 0x100), [0x200, 0x300), [0x8000, 0x8010) of 0x10000 */
	ck_assert_int_eq(json_array_size(u), 3);
	ck_assert_int_eq(json_integer_value(json_array_get(json_array_get(u, 0), 0)), 0x100);
	ck_assert_int_eq(json_integer_value(json_array_get(json_array_get(u, 0), 1)), 0x200);
	ck_assert_int_eq(json_integer_value(json_array_get(json_array_get(u, 1), 0)), 0x300);
	ck_assert_int_eq(json_integer_value(json_array_get(json_array_get(u, 2), 1)), 0x10000);
	json_t *dov = json_object_get(m, "device_overlaps");
	ck_assert_int_eq(json_array_size(dov), 1);
	json_t *o = json_array_get(dov, 0);
	ck_assert_str_eq(gets(o, "vaddr"), "0x1080");
	ck_assert_int_eq(geti(o, "offset"), 0x80);
	ck_assert_int_eq(geti(o, "bytes"), 0x80);
	ck_assert_int_eq(geti(o, "lines"), 2);
	ck_assert_int_eq(geti(o, "wins"), 12);
	ck_assert_int_eq(geti(o, "chip"), 0);
	ck_assert_str_eq(gets(o, "domain"), "dram");
	ck_assert_str_eq(gets(json_object_get(json_object_get(m, "reservations"), "dram"), "vaddr"),
			 "0x1000");
	json_decref(m);
	m = parse(cb_mount_memory_json(&f.p, img, 2, true));
	ck_assert_ptr_null(json_object_get(m, "overlap_list"));
	ck_assert_ptr_null(json_object_get(m, "device_overlaps"));
	ck_assert_ptr_null(json_object_get(json_object_get(json_object_get(m, "reservations"),
							   "dram"), "vaddr"));
	ck_assert_int_eq(geti(m, "overlaps"), 1);
	json_decref(m);
	cb_image_free(&img[0]);
	cb_image_free(&img[1]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("calbin-mount");
	TCase *tc = tcase_create("mount");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_image_by_hand);
	tcase_add_loop_test(tc, test_image_random, 0, 40);
	tcase_add_test(tc, test_chips);
	tcase_add_test(tc, test_probe);
	tcase_add_test(tc, test_docs_submodel);
	tcase_add_test(tc, test_docs_memory);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
