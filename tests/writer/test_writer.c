/* tests/writer/test_writer.c — the writer (seed §2.1, §2.3, §3, §11.4;
 * codecs §7, §7.1). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader/artifact.h"
#include "reader/writer.h"
#include "tests/fixtures/fixtures.h"

/* ------------------------------------------------------------------ */
/* helpers */

static char *tmpdir_new(void)
{
	const char *base = getenv("TMPDIR");
	char *t;
	ck_assert_int_ge(asprintf(&t, "%s/nfw-XXXXXX", base && *base ? base : "/tmp"), 0);
	ck_assert_ptr_nonnull(mkdtemp(t));
	return t;
}

static void rm_rf(const char *path)
{
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char *p;
			if (asprintf(&p, "%s/%s", path, e->d_name) < 0)
				continue;
			struct stat st;
			if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
				chmod(p, 0700);
				rm_rf(p);
			} else {
				unlink(p);
			}
			free(p);
		}
		closedir(d);
	}
	rmdir(path);
}

static size_t count_entries(const char *path)
{
	DIR *d = opendir(path);
	size_t n = 0;
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static uint64_t file_size(const char *path)
{
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

static json_t *tensor_rec(const char *id, const char *format, const char *layout, json_int_t n, json_int_t k)
{
	return json_pack("{s:s,s:s,s:[I,I],s:s,s:s}", "id", id, "kind", "tensor", "shape", n, k, "format",
			 format, "layout", layout);
}

static json_t *small_dir(void)
{
	return json_pack("{s:{s:{s:{s:[s]}}},s:{},s:[]}", "components", "text", "config", "architectures",
			 "Synthetic", "bindings", "uses");
}

/* codecs §7.1: matrix bf16 [130,130] byte i = (37i+11) mod 251, native_q2 [2,65] */
static uint8_t v71_matrix[33800], v71_q2[264];

static void v71_init(struct nf_write_object o[2])
{
	for (size_t i = 0; i < sizeof v71_matrix; i++)
		v71_matrix[i] = (uint8_t)((37 * i + 11) % 251);
	memset(v71_q2, 0, sizeof v71_q2);
	for (int r = 0; r < 2; r++) {   /* codecs §2.8 reference object */
		memset(v71_q2 + 32 * r, 0xE4, 16);
		v71_q2[32 * r + 16] = 0x54;
		memset(v71_q2 + 32 * r + 17, 0x55, 15);
	}
	const uint16_t sc[4] = {0x3800, 0xBC00, 0x0001, 0x8000};
	for (int i = 0; i < 4; i++) {
		v71_q2[256 + 2 * i] = (uint8_t)sc[i];
		v71_q2[257 + 2 * i] = (uint8_t)(sc[i] >> 8);
	}
	memset(o, 0, 2 * sizeof *o);
	o[0].record = tensor_rec("matrix", "bf16", "contiguous_le_v1", 130, 130);
	o[0].source = NF_SRC_MEMORY;
	o[0].data = v71_matrix;
	o[0].bytes = sizeof v71_matrix;
	o[1].record = tensor_rec("native_q2", "q2_g64_fp16", "row_split_k128_v1", 2, 65);
	o[1].source = NF_SRC_MEMORY;
	o[1].data = v71_q2;
	o[1].bytes = sizeof v71_q2;
}

static void v71_free(struct nf_write_object o[2])
{
	json_decref(o[0].record);
	json_decref(o[1].record);
}

static void print_report(const struct nf_report *r)
{
	for (size_t i = 0; i < r->count; i++)
		fprintf(stderr, "  finding %s %s: %s\n", r->items[i].code, r->items[i].where ? r->items[i].where : "",
			r->items[i].evidence ? r->items[i].evidence : "");
}

/* Open with the reader: no error findings; every object's bytes read back
 * through the range map (nf_payload_read) equal `expect[i]`. */
static struct nf_artifact *open_clean(const char *entry)
{
	struct nf_report r;
	struct nf_artifact *a = NULL;
	nf_report_init(&r);
	int rc = nf_artifact_open(entry, &r, &a);
	if (rc == 0)
		nf_artifact_check_files(a, &r);
	if (rc || nf_report_count(&r, NF_SEV_ERROR, -1))
		print_report(&r);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(nf_report_count(&r, NF_SEV_ERROR, -1), 0);
	nf_report_free(&r);
	return a;
}

static uint8_t *read_object(struct nf_artifact *a, uint32_t i)
{
	const struct nf_object *o = &a->objects[i];
	uint8_t *buf = malloc(o->bytes);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(nf_payload_read(a, o->offset, o->bytes, buf, NULL), 0);
	return buf;
}

/* ------------------------------------------------------------------ */
/* §2.3 capacities and naming */

START_TEST(capacities)
{
	uint64_t ec, pc;
	ck_assert_int_eq(nf_split_capacities(12288, 4096, &ec, &pc), 0);
	ck_assert_uint_eq(ec, 8192);
	ck_assert_uint_eq(pc, 8192);
	ck_assert_int_eq(nf_split_capacities(8192, 4096, &ec, &pc), 0);
	ck_assert_uint_eq(ec, 4096);
	ck_assert_uint_eq(pc, 4096);
	ck_assert_int_eq(nf_split_capacities(20000, 8192, &ec, &pc), 0);
	ck_assert_uint_eq(ec, 8192);    /* floor(11808/4096)*4096 */
	ck_assert_uint_eq(pc, 12288);   /* floor(15904/4096)*4096 */
	ck_assert_int_eq(nf_split_capacities(16384, 12288, &ec, &pc), 0);
	ck_assert_uint_eq(ec, 4096);
	ck_assert_uint_eq(pc, 12288);
	/* limits too small for the headers */
	ck_assert_int_eq(nf_split_capacities(4096, 4096, &ec, &pc), -EINVAL);
	ck_assert_int_eq(nf_split_capacities(8191, 4096, &ec, &pc), -EINVAL);
	ck_assert_int_eq(nf_split_capacities(12287, 8192, &ec, &pc), -EINVAL);
	ck_assert_int_eq(nf_split_capacities(100, 4096, &ec, &pc), -EINVAL);
	ck_assert_int_eq(nf_split_capacities(0, 4096, &ec, &pc), -EINVAL);
	/* seed §3.3: entry_payload_start = 65536, a 32,000,000,000-byte entry */
	ck_assert_int_eq(nf_split_capacities(32000000000ull, 65536, &ec, &pc), 0);
	ck_assert_uint_eq(ec, 31999934464ull);
	ck_assert_uint_eq(65536 + ec, 32000000000ull);
	ck_assert_uint_eq(pc, 31999995904ull);
}
END_TEST

START_TEST(part_names)
{
	char b[64];
	ck_assert_int_eq(nf_part_name(b, sizeof b, "example.ninfer", 1), 0);
	ck_assert_str_eq(b, "example.ninfer.part-0001");
	ck_assert_int_eq(nf_part_name(b, sizeof b, "example.ninfer", 42), 0);
	ck_assert_str_eq(b, "example.ninfer.part-0042");
	ck_assert_int_eq(nf_part_name(b, sizeof b, "example.ninfer", 9999), 0);
	ck_assert_str_eq(b, "example.ninfer.part-9999");
	ck_assert_int_eq(nf_part_name(b, sizeof b, "example.ninfer", 10000), 0);
	ck_assert_str_eq(b, "example.ninfer.part-10000");
	ck_assert_int_eq(nf_part_name(b, sizeof b, "example.ninfer", 123456), 0);
	ck_assert_str_eq(b, "example.ninfer.part-123456");
	ck_assert_int_eq(nf_part_name(b, 10, "example.ninfer", 1), -ENAMETOOLONG);
}
END_TEST

/* The seed §3.3 example end to end through the planner (no bytes written):
 * JSON reserved to 65504 bytes, limit 32,000,000,000. */
START_TEST(seed_files_example_plan)
{
	static uint8_t dummy;   /* never read by the planner */
	const uint64_t payload = 31999934464ull + 4096;
	struct nf_write_object o = {
		.record = json_pack("{s:s,s:s,s:[I],s:s,s:s}", "id", "w", "kind", "tensor", "shape",
				    (json_int_t)(payload / 2), "format", "bf16", "layout", "contiguous_le_v1"),
		.source = NF_SRC_MEMORY, .data = &dummy, .bytes = payload};
	json_t *dir = small_dir();
	char *pad = malloc(62001);
	memset(pad, 'x', 62000);
	pad[62000] = 0;
	json_object_set_new(dir, "metadata", json_pack("{s:s}", "pad", pad));
	free(pad);
	struct nf_write_opts opts = {.max_file_bytes = 32000000000ull};
	struct nf_report r;
	nf_report_init(&r);
	uint64_t off, pb, jb;
	struct nf_write_plan_file *f = NULL;
	size_t nf = 0;
	ck_assert_int_eq(nf_write_plan("example.ninfer", dir, &o, 1, &opts, &r, &off, &pb, &jb, &f, &nf), 0);
	ck_assert_uint_eq(jb, 65504);
	ck_assert_uint_eq(pb, payload);
	ck_assert_uint_eq(nf, 2);   /* files [null:31999934464, example.ninfer.part-0001:4096] */
	ck_assert_uint_eq(f[0].payload_bytes, 31999934464ull);
	ck_assert_uint_eq(f[1].payload_bytes, 4096);
	ck_assert_uint_eq(f[1].logical_start, 31999934464ull);
	free(f);
	nf_report_free(&r);
	json_decref(dir);
	json_decref(o.record);
}
END_TEST

START_TEST(ten_thousand_parts_plan)
{
	static uint8_t dummy;
	/* 10,001 files of 1 MiB limit: more than 9999 parts */
	const uint64_t payload = 10001ull * 1044480;
	struct nf_write_object o = {
		.record = json_pack("{s:s,s:s,s:[I],s:s,s:s}", "id", "w", "kind", "tensor", "shape",
				    (json_int_t)(payload / 2), "format", "bf16", "layout", "contiguous_le_v1"),
		.source = NF_SRC_MEMORY, .data = &dummy, .bytes = payload};
	json_t *dir = small_dir();
	struct nf_write_opts opts = {.max_file_bytes = 1048576};
	struct nf_report r;
	nf_report_init(&r);
	uint64_t pb, jb;
	struct nf_write_plan_file *f = NULL;
	size_t nf = 0;
	ck_assert_int_eq(nf_write_plan("example.ninfer", dir, &o, 1, &opts, &r, NULL, &pb, &jb, &f, &nf), 0);
	ck_assert_uint_gt(nf, 10000);
	uint64_t sum = 0;
	for (size_t i = 0; i < nf; i++) {
		ck_assert_uint_eq(f[i].logical_start, sum);
		ck_assert_uint_le((i ? 4096 : 32 + jb) + f[i].payload_bytes, 1048576);
		if (i + 1 < nf)
			ck_assert_uint_eq(f[i].payload_bytes % 4096, 0);
		sum += f[i].payload_bytes;
	}
	ck_assert_uint_eq(sum, payload);
	free(f);
	nf_report_free(&r);
	json_decref(dir);
	json_decref(o.record);
}
END_TEST

START_TEST(limit_too_small)
{
	struct nf_write_object o[2];
	v71_init(o);
	json_t *dir = small_dir();
	char *d = tmpdir_new(), *e;
	ck_assert_int_ge(asprintf(&e, "%s/x.ninfer", d), 0);
	struct nf_report r;
	nf_report_init(&r);
	struct nf_write_opts opts = {.max_file_bytes = 6000};
	ck_assert_int_eq(nf_write_artifact(e, dir, o, 2, &opts, &r), -EINVAL);
	ck_assert(nf_report_has_code(&r, "WRITE_LIMIT_TOO_SMALL"));
	ck_assert_uint_eq(count_entries(d), 0);
	nf_report_free(&r);
	json_decref(dir);
	v71_free(o);
	rm_rf(d);
	free(d);
	free(e);
}
END_TEST

/* ------------------------------------------------------------------ */
/* codecs §7.1 */

START_TEST(vector_71_plan)
{
	struct nf_write_object o[2];
	v71_init(o);
	json_t *dir = small_dir();
	uint64_t off[2], pb, jb;
	struct nf_write_plan_file *f = NULL;
	size_t nf = 0;
	struct nf_write_opts opts = {0};
	ck_assert_int_eq(nf_write_plan("example.ninfer", dir, o, 2, &opts, NULL, off, &pb, &jb, &f, &nf), 0);
	ck_assert_uint_eq(off[0], 0);
	ck_assert_uint_eq(off[1], 34048);
	ck_assert_uint_eq(pb, 34312);
	ck_assert_uint_eq(jb, 4064);
	ck_assert_uint_eq(nf, 1);
	free(f);
	opts.max_file_bytes = 12288;
	ck_assert_int_eq(nf_write_plan("sharded.ninfer", dir, o, 2, &opts, NULL, off, &pb, &jb, &f, &nf), 0);
	ck_assert_uint_eq(jb, 4064);
	ck_assert_uint_eq(nf, 5);
	const uint64_t want[5] = {8192, 8192, 8192, 8192, 1544};
	for (int i = 0; i < 5; i++)
		ck_assert_uint_eq(f[i].payload_bytes, want[i]);
	free(f);
	json_decref(dir);
	v71_free(o);
}
END_TEST

START_TEST(vector_71_files)
{
	struct nf_write_object o[2];
	v71_init(o);
	json_t *dir = small_dir();
	char *d = tmpdir_new(), *single, *split, *p;
	ck_assert_int_ge(asprintf(&single, "%s/single.ninfer", d), 0);
	ck_assert_int_ge(asprintf(&split, "%s/sharded.ninfer", d), 0);
	struct nf_report r;
	nf_report_init(&r);
	struct nf_write_opts opts = {0};
	int rc = nf_write_artifact(single, dir, o, 2, &opts, &r);
	if (rc)
		print_report(&r);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(file_size(single), 38408);
	opts.max_file_bytes = 12288;
	rc = nf_write_artifact(split, dir, o, 2, &opts, &r);
	if (rc)
		print_report(&r);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(count_entries(d), 1 + 5);   /* nothing else left behind */
	ck_assert_uint_eq(file_size(split), 4096 + 8192);
	for (int i = 1; i <= 4; i++) {
		ck_assert_int_ge(asprintf(&p, "%s.part-%04d", split, i), 0);
		ck_assert_uint_eq(file_size(p), 4096 + (i < 4 ? 8192 : 1544));
		/* part header: magic, part_index, artifact_id of the entry, zeros to 4096 */
		uint8_t h[4096], eh[32];
		int fd = open(p, O_RDONLY), efd = open(split, O_RDONLY);
		ck_assert_int_eq(pread(fd, h, 4096, 0), 4096);
		ck_assert_int_eq(pread(efd, eh, 32, 0), 32);
		ck_assert_int_eq(memcmp(h, "NINPRT\0\3", 8), 0);
		ck_assert_int_eq(memcmp(eh, "NINFER\0\3", 8), 0);
		ck_assert_uint_eq(h[8], (uint8_t)i);
		ck_assert_int_eq(memcmp(h + 16, eh + 16, 16), 0);
		ck_assert_uint_eq(eh[16 + 6] >> 4, 4);          /* UUIDv4 */
		ck_assert_uint_eq(eh[16 + 8] & 0xc0, 0x80);
		for (int k = 32; k < 4096; k++)
			ck_assert_uint_eq(h[k], 0);
		if (i == 4) {   /* native_q2 at file offset 5376 of part-0004 */
			uint8_t q[264];
			ck_assert_int_eq(pread(fd, q, 264, 5376), 264);
			ck_assert_int_eq(memcmp(q, v71_q2, 264), 0);
		}
		close(fd);
		close(efd);
		free(p);
	}
	/* the reader agrees and every byte reads back */
	const char *entries[2] = {single, split};
	for (int k = 0; k < 2; k++) {
		struct nf_artifact *a = open_clean(entries[k]);
		ck_assert_uint_eq(a->json_bytes, 4064);
		ck_assert_uint_eq(a->entry_payload_start, 4096);
		ck_assert_uint_eq(a->nfiles, k ? 5 : 1);
		ck_assert_uint_eq(a->nobjects, 2);
		ck_assert_uint_eq(a->objects[1].offset, 34048);
		/* JSON: compact, root order, spaces to the end */
		ck_assert(strncmp(a->json_text, "{\"components\":", 14) == 0);
		ck_assert(strstr(a->json_text, "{\"id\":\"matrix\",\"shape\":[130,130],\"format\":\"bf16\","
					       "\"layout\":\"contiguous_le_v1\",\"offset\":0,\"bytes\":33800,"
					       "\"kind\":\"tensor\"}") != NULL);
		ck_assert(a->json_text[a->json_bytes - 1] == ' ');
		for (uint32_t i = 0; i < 2; i++) {
			uint8_t *b = read_object(a, i);
			ck_assert_int_eq(memcmp(b, i ? v71_q2 : v71_matrix, a->objects[i].bytes), 0);
			free(b);
		}
		nf_artifact_close(a);
	}
	nf_report_free(&r);
	json_decref(dir);
	v71_free(o);
	rm_rf(d);
	free(d);
	free(single);
	free(split);
}
END_TEST

/* ------------------------------------------------------------------ */
/* fixtures round trip */

static void fixture_roundtrip(const char *name)
{
	uint64_t limit;
	bool unk;
	struct nf_fx *fx = nf_fixture_make(name, &limit, &unk);
	ck_assert_ptr_nonnull(fx);
	char *d = tmpdir_new(), *e;
	ck_assert_int_ge(asprintf(&e, "%s/%s.ninfer", d, name), 0);
	struct nf_report r;
	nf_report_init(&r);
	int rc = nf_fx_write(fx, d, name, limit, unk, &r);
	if (rc)
		print_report(&r);
	ck_assert_int_eq(rc, 0);
	struct nf_artifact *a = open_clean(e);
	ck_assert_uint_eq(a->nobjects, nf_fx_nobjects(fx));
	for (uint32_t i = 0; i < a->nobjects; i++) {
		uint64_t len;
		const char *id;
		const uint8_t *src = nf_fx_object_bytes(fx, i, &len, &id);
		ck_assert_str_eq(a->objects[i].id, id);
		ck_assert_uint_eq(a->objects[i].bytes, len);
		uint8_t *b = read_object(a, i);
		ck_assert_int_eq(memcmp(b, src, len), 0);
		free(b);
	}
	if (limit)
		ck_assert_uint_gt(a->nfiles, 3);
	/* the expectation directory describes what was written */
	char *mp;
	ck_assert_int_ge(asprintf(&mp, "%s/expect/manifest.json", d), 0);
	json_t *man = json_load_file(mp, 0, NULL);
	free(mp);
	ck_assert_ptr_nonnull(man);
	ck_assert_str_eq(json_string_value(json_object_get(man, "artifact_id")), a->artifact_id_hex);
	ck_assert_uint_eq(json_integer_value(json_object_get(man, "json_bytes")), a->json_bytes);
	ck_assert_uint_eq(json_array_size(json_object_get(man, "files")), a->nfiles);
	for (uint32_t i = 0; i < a->nfiles; i++) {
		json_t *f = json_array_get(json_object_get(man, "files"), i);
		ck_assert_uint_eq(json_integer_value(json_object_get(f, "payload_bytes")), a->files[i].payload_bytes);
		ck_assert_uint_eq(json_integer_value(json_object_get(f, "file_bytes")), a->files[i].file_bytes);
	}
	json_t *mo = json_object_get(man, "objects");
	ck_assert_uint_eq(json_array_size(mo), a->nobjects);
	for (uint32_t i = 0; i < a->nobjects; i++) {
		json_t *o = json_array_get(mo, i);
		ck_assert_str_eq(json_string_value(json_object_get(o, "id")), a->objects[i].id);
		ck_assert_uint_eq(json_integer_value(json_object_get(o, "offset")), a->objects[i].offset);
		char *bp, *esc = nf_fx_escape(a->objects[i].id);
		ck_assert_str_eq(json_string_value(json_object_get(o, "escaped")), esc);
		ck_assert_int_ge(asprintf(&bp, "%s/expect/%s", d, json_string_value(json_object_get(o, "expect_bytes"))), 0);
		ck_assert_uint_eq(file_size(bp), a->objects[i].bytes);
		free(bp);
		const char *dec = json_string_value(json_object_get(o, "expect_decoded"));
		if (dec) {
			ck_assert_int_ge(asprintf(&bp, "%s/expect/%s", d, dec), 0);
			ck_assert_uint_eq(file_size(bp), 4 * a->objects[i].elements);
			free(bp);
		} else {
			ck_assert(a->objects[i].kind == NF_OBJ_RESOURCE || a->objects[i].codec_status != NF_CODEC_OK);
		}
		free(esc);
	}
	ck_assert_uint_eq(json_array_size(json_object_get(man, "bindings")), a->nbindings);
	for (uint32_t i = 0; i < a->nbindings; i++) {
		json_t *b = json_array_get(json_object_get(man, "bindings"), i);
		int64_t bi = nf_binding_find(a, json_string_value(json_object_get(b, "name")));
		ck_assert_int_ge(bi, 0);
		json_t *shape = json_object_get(b, "shape");
		ck_assert_uint_eq(json_array_size(shape), a->bindings[bi].rank);
		for (uint32_t k = 0; k < a->bindings[bi].rank; k++)
			ck_assert_uint_eq(json_integer_value(json_array_get(shape, k)), a->bindings[bi].shape[k]);
	}
	json_decref(man);
	nf_artifact_close(a);
	nf_report_free(&r);
	nf_fx_free(fx);
	rm_rf(d);
	free(d);
	free(e);
}

START_TEST(fixtures_roundtrip)
{
	fixture_roundtrip(nf_fixture_names[_i]);
}
END_TEST

/* The fixtures' independent expectations agree with the codec decoder,
 * bit for bit, for every tensor of every fixture. */
START_TEST(fixtures_oracle_vs_decoder)
{
	uint64_t limit;
	bool unk;
	struct nf_fx *fx = nf_fixture_make(nf_fixture_names[_i], &limit, &unk);
	ck_assert_ptr_nonnull(fx);
	json_t *dir = nf_fx_directory(fx);
	size_t n = nf_fx_nobjects(fx);
	struct nf_write_object *wo = calloc(n, sizeof *wo);
	nf_fx_write_objects(fx, wo);
	for (size_t i = 0; i < n; i++) {
		uint64_t ne, len;
		const char *id;
		const float *want = nf_fx_object_expected(fx, i, &ne);
		const uint8_t *bytes = nf_fx_object_bytes(fx, i, &len, &id);
		if (!want)
			continue;
		const json_t *rec = wo[i].record;
		const json_t *shape = json_object_get(rec, "shape");
		uint64_t dims[16];
		uint32_t rank = (uint32_t)json_array_size(shape);
		for (uint32_t k = 0; k < rank; k++)
			dims[k] = (uint64_t)json_integer_value(json_array_get(shape, k));
		json_t *dv = json_object_get(rec, "divisors");
		struct nf_geometry g;
		ck_assert_int_eq(nf_geometry_init(&g, json_string_value(json_object_get(rec, "format")),
						  json_string_value(json_object_get(rec, "layout")), rank, dims,
						  dv ? (uint64_t)json_integer_value(dv) : 1), NF_CODEC_OK);
		ck_assert_uint_eq(g.bytes, len);
		struct nf_span spans[NF_MAX_SPANS];
		unsigned ns = nf_decode_spans(&g, 0, ne, spans);
		const uint8_t *bufs[NF_MAX_SPANS] = {0};
		for (unsigned k = 0; k < ns; k++)
			bufs[k] = bytes + spans[k].offset;
		float *got = malloc(ne * sizeof *got);
		ck_assert_int_eq(nf_decode(&g, 0, ne, bufs, NF_DTYPE_F32, got), 0);
		for (uint64_t e = 0; e < ne; e++) {
			uint32_t a, b;
			memcpy(&a, &want[e], 4);
			memcpy(&b, &got[e], 4);
			ck_assert_msg(a == b, "%s %s element %llu: oracle %08x (%g) decoder %08x (%g)",
				      nf_fixture_names[_i], id, (unsigned long long)e, a, (double)want[e], b,
				      (double)got[e]);
		}
		free(got);
	}
	free(wo);
	json_decref(dir);
	nf_fx_free(fx);
}
END_TEST

/* reshard a split set to one file and back */
static int reshard(const char *in, const char *out, uint64_t limit, struct nf_report *r)
{
	struct nf_artifact *a = open_clean(in);
	json_t *root = json_loadb(a->json_text, a->json_bytes, 0, NULL);
	ck_assert_ptr_nonnull(root);
	json_t *dir = json_pack("{s:O,s:O,s:O,s:O,s:O}", "components", json_object_get(root, "components"),
				"bindings", json_object_get(root, "bindings"), "uses",
				json_object_get(root, "uses"), "metadata", json_object_get(root, "metadata"),
				"provenance", json_object_get(root, "provenance"));
	json_t *arr = json_object_get(root, "objects");
	struct nf_write_object *o = calloc(a->nobjects, sizeof *o);
	for (uint32_t i = 0; i < a->nobjects; i++) {
		json_t *rec = json_array_get(arr, i);
		json_object_del(rec, "offset");
		json_object_del(rec, "bytes");
		o[i].record = rec;
		o[i].source = NF_SRC_ARTIFACT;
		o[i].artifact = a;
		o[i].src_offset = a->objects[i].offset;
		o[i].bytes = a->objects[i].bytes;
	}
	struct nf_write_opts opts = {.max_file_bytes = limit, .allow_unknown = true};
	int rc = nf_write_artifact(out, dir, o, a->nobjects, &opts, r);
	free(o);
	json_decref(dir);
	json_decref(root);
	nf_artifact_close(a);
	return rc;
}

static bool same_member(struct nf_artifact *a, struct nf_artifact *b, const char *m)
{
	json_t *ra = json_loadb(a->json_text, a->json_bytes, 0, NULL);
	json_t *rb = json_loadb(b->json_text, b->json_bytes, 0, NULL);
	bool eq = json_equal(json_object_get(ra, m), json_object_get(rb, m));
	json_decref(ra);
	json_decref(rb);
	return eq;
}

START_TEST(reshard_roundtrip)
{
	uint64_t limit;
	bool unk;
	struct nf_fx *fx = nf_fixture_make("mixed", &limit, &unk);
	char *d = tmpdir_new(), *e, *one, *back;
	ck_assert_int_ge(asprintf(&e, "%s/mixed.ninfer", d), 0);
	ck_assert_int_ge(asprintf(&one, "%s/one.ninfer", d), 0);
	ck_assert_int_ge(asprintf(&back, "%s/back.ninfer", d), 0);
	struct nf_report r;
	nf_report_init(&r);
	ck_assert_int_eq(nf_fx_write(fx, d, "mixed", limit, unk, &r), 0);
	int rc = reshard(e, one, 0, &r);
	if (rc)
		print_report(&r);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(reshard(one, back, limit, &r), 0);
	struct nf_artifact *a = open_clean(e), *b = open_clean(one), *c = open_clean(back);
	ck_assert_uint_eq(b->nfiles, 1);
	ck_assert_uint_eq(c->nfiles, a->nfiles);
	ck_assert(memcmp(a->artifact_id, b->artifact_id, 16) != 0);
	ck_assert(memcmp(b->artifact_id, c->artifact_id, 16) != 0);
	ck_assert(memcmp(a->artifact_id, c->artifact_id, 16) != 0);
	const char *members[] = {"objects", "bindings", "uses", "components", "metadata", "provenance"};
	for (int m = 0; m < 6; m++) {
		ck_assert_msg(same_member(a, b, members[m]), "%s", members[m]);
		ck_assert_msg(same_member(a, c, members[m]), "%s", members[m]);
	}
	ck_assert_uint_eq(b->files[0].payload_bytes, a->payload_bytes);
	for (uint32_t i = 0; i < a->nfiles; i++)   /* the same limit gives the same table */
		ck_assert_uint_eq(c->files[i].payload_bytes, a->files[i].payload_bytes);
	for (uint32_t i = 0; i < a->nobjects; i++) {
		uint8_t *x = read_object(a, i), *y = read_object(b, i), *z = read_object(c, i);
		ck_assert_int_eq(memcmp(x, y, a->objects[i].bytes), 0);
		ck_assert_int_eq(memcmp(x, z, a->objects[i].bytes), 0);
		free(x);
		free(y);
		free(z);
	}
	nf_artifact_close(a);
	nf_artifact_close(b);
	nf_artifact_close(c);
	nf_report_free(&r);
	nf_fx_free(fx);
	rm_rf(d);
	free(d);
	free(e);
	free(one);
	free(back);
}
END_TEST

/* ------------------------------------------------------------------ */
/* failures leave nothing behind and never replace a file */

START_TEST(fail_wrong_size)
{
	struct nf_write_object o[2];
	v71_init(o);
	o[1].bytes = 263;
	json_t *dir = small_dir();
	char *d = tmpdir_new(), *e;
	ck_assert_int_ge(asprintf(&e, "%s/x.ninfer", d), 0);
	struct nf_report r;
	nf_report_init(&r);
	ck_assert_int_eq(nf_write_artifact(e, dir, o, 2, NULL, &r), -EINVAL);
	ck_assert(nf_report_has_code(&r, "WRITE_SIZE_MISMATCH"));
	ck_assert_uint_eq(count_entries(d), 0);
	nf_report_free(&r);
	json_decref(dir);
	v71_free(o);
	rm_rf(d);
	free(d);
	free(e);
}
END_TEST

START_TEST(fail_bad_reference)
{
	struct nf_write_object o[2];
	v71_init(o);
	json_t *dir = small_dir();
	json_object_set_new(json_object_get(dir, "bindings"), "x", json_pack("{s:s}", "object", "nope"));
	char *d = tmpdir_new(), *e;
	ck_assert_int_ge(asprintf(&e, "%s/x.ninfer", d), 0);
	struct nf_report r;
	nf_report_init(&r);
	ck_assert_int_eq(nf_write_artifact(e, dir, o, 2, NULL, &r), -EINVAL);
	ck_assert_uint_eq(count_entries(d), 0);
	/* an unknown format is refused unless allow_unknown */
	json_object_del(json_object_get(dir, "bindings"), "x");
	json_object_set_new(o[0].record, "format", json_string("gguf_q4_k"));
	ck_assert_int_eq(nf_write_artifact(e, dir, o, 2, NULL, &r), -EINVAL);
	ck_assert_uint_eq(count_entries(d), 0);
	struct nf_write_opts opts = {.allow_unknown = true};
	ck_assert_int_eq(nf_write_artifact(e, dir, o, 2, &opts, &r), 0);
	ck_assert_uint_eq(count_entries(d), 1);
	nf_report_free(&r);
	json_decref(dir);
	v71_free(o);
	rm_rf(d);
	free(d);
	free(e);
}
END_TEST

START_TEST(fail_missing_source)
{
	struct nf_write_object o[2];
	v71_init(o);
	char *d = tmpdir_new(), *e, *src;
	ck_assert_int_ge(asprintf(&e, "%s/x.ninfer", d), 0);
	ck_assert_int_ge(asprintf(&src, "%s/no-such-source.bin", d), 0);
	o[0].source = NF_SRC_FILE;
	o[0].path = src;
	json_t *dir = small_dir();
	struct nf_report r;
	nf_report_init(&r);
	struct nf_write_opts opts = {.max_file_bytes = 12288};
	int rc = nf_write_artifact(e, dir, o, 2, &opts, &r);
	ck_assert_int_lt(rc, 0);
	ck_assert(nf_report_has_code(&r, "WRITE_SOURCE"));
	ck_assert_uint_eq(count_entries(d), 0);
	/* a source that is too short */
	int fd = open(src, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_eq(write(fd, v71_matrix, 1000), 1000);
	close(fd);
	rc = nf_write_artifact(e, dir, o, 2, &opts, &r);
	ck_assert_int_lt(rc, 0);
	ck_assert_uint_eq(count_entries(d), 1);   /* only the source */
	/* a good source file, with an offset: copy_file_range path */
	fd = open(src, O_WRONLY | O_TRUNC);
	ck_assert_int_eq(write(fd, "0123456789", 7), 7);
	ck_assert_int_eq(write(fd, v71_matrix, sizeof v71_matrix), (ssize_t)sizeof v71_matrix);
	close(fd);
	o[0].src_offset = 7;
	rc = nf_write_artifact(e, dir, o, 2, &opts, &r);
	if (rc)
		print_report(&r);
	ck_assert_int_eq(rc, 0);
	struct nf_artifact *a = open_clean(e);
	uint8_t *b = read_object(a, 0);
	ck_assert_int_eq(memcmp(b, v71_matrix, sizeof v71_matrix), 0);
	free(b);
	nf_artifact_close(a);
	nf_report_free(&r);
	json_decref(dir);
	v71_free(o);
	rm_rf(d);
	free(d);
	free(e);
	free(src);
}
END_TEST

/* Issue 11 item 6: a source that is not a regular file (a FIFO, which a
 * blocking open would wait on forever, a directory, a device) is a
 * WRITE_SOURCE finding naming the object and the path and saying what it
 * is; nothing is left behind.  A FIFO with no writer must not hang: the
 * tcase timeout fails the test if it does. */
START_TEST(fail_source_not_regular)
{
	static const struct {
		const char *name, *what;
	} kinds[] = {{"fifo", "is a FIFO"}, {"dir", "is a directory"}, {"/dev/null", "is a character device"}};
	struct nf_write_object o[2];
	v71_init(o);
	char *d = tmpdir_new(), *e, *src[3];
	ck_assert_int_ge(asprintf(&e, "%s/x.ninfer", d), 0);
	ck_assert_int_ge(asprintf(&src[0], "%s/fifo", d), 0);
	ck_assert_int_ge(asprintf(&src[1], "%s/dir", d), 0);
	src[2] = strdup("/dev/null");
	ck_assert_int_eq(mkfifo(src[0], 0644), 0);
	ck_assert_int_eq(mkdir(src[1], 0755), 0);
	json_t *dir = small_dir();
	struct nf_write_opts opts = {.max_file_bytes = 12288};
	for (int k = 0; k < 3; k++) {
		struct nf_report r;
		nf_report_init(&r);
		o[0].source = NF_SRC_FILE;
		o[0].path = src[k];
		int rc = nf_write_artifact(e, dir, o, 2, &opts, &r);
		ck_assert_int_eq(rc, -EINVAL);
		const struct nf_finding *f = NULL;
		for (size_t i = 0; i < r.count; i++)
			if (!strcmp(r.items[i].code, "WRITE_SOURCE"))
				f = &r.items[i];
		ck_assert_ptr_nonnull(f);
		ck_assert_str_eq(f->where, "object matrix");
		ck_assert_msg(strstr(f->evidence, src[k]) && strstr(f->evidence, kinds[k].what) &&
			      strstr(f->evidence, "not a regular file"), "%s", f->evidence);
		nf_report_free(&r);
		ck_assert_uint_eq(count_entries(d), 2);   /* only the fifo and the dir */
	}
	json_decref(dir);
	v71_free(o);
	rm_rf(d);
	free(d);
	free(e);
	for (int k = 0; k < 3; k++)
		free(src[k]);
}
END_TEST

/* A source on another file system (copy_file_range may say EXDEV: the
 * pread/pwrite fallback copies). */
START_TEST(source_on_other_fs)
{
	char shm[] = "/dev/shm/nfw-src-XXXXXX";
	int fd = mkstemp(shm);
	if (fd < 0)
		return;   /* no /dev/shm here */
	struct nf_write_object o[2];
	v71_init(o);
	ck_assert_int_eq(write(fd, v71_matrix, sizeof v71_matrix), (ssize_t)sizeof v71_matrix);
	close(fd);
	o[0].source = NF_SRC_FILE;
	o[0].path = shm;
	json_t *dir = small_dir();
	char *d = tmpdir_new(), *e;
	ck_assert_int_ge(asprintf(&e, "%s/x.ninfer", d), 0);
	struct nf_write_opts opts = {.max_file_bytes = 12288};
	ck_assert_int_eq(nf_write_artifact(e, dir, o, 2, &opts, NULL), 0);
	struct nf_artifact *a = open_clean(e);
	uint8_t *b = read_object(a, 0);
	ck_assert_int_eq(memcmp(b, v71_matrix, sizeof v71_matrix), 0);
	free(b);
	nf_artifact_close(a);
	unlink(shm);
	json_decref(dir);
	v71_free(o);
	rm_rf(d);
	free(d);
	free(e);
}
END_TEST

START_TEST(fail_unwritable_dir)
{
	struct nf_write_object o[2];
	v71_init(o);
	json_t *dir = small_dir();
	char *d = tmpdir_new(), *e, *sub;
	ck_assert_int_ge(asprintf(&sub, "%s/ro", d), 0);
	ck_assert_int_ge(asprintf(&e, "%s/ro/x.ninfer", d), 0);
	struct nf_report r;
	nf_report_init(&r);
	/* a directory that does not exist */
	ck_assert_int_lt(nf_write_artifact(e, dir, o, 2, NULL, &r), 0);
	ck_assert_uint_eq(count_entries(d), 0);
	/* a read-only directory (root ignores the mode: then it is writable) */
	ck_assert_int_eq(mkdir(sub, 0555), 0);
	int rc = nf_write_artifact(e, dir, o, 2, NULL, &r);
	if (geteuid() != 0) {
		ck_assert_int_lt(rc, 0);
		ck_assert_uint_eq(count_entries(sub), 0);
	}
	nf_report_free(&r);
	json_decref(dir);
	v71_free(o);
	rm_rf(d);
	free(d);
	free(e);
	free(sub);
}
END_TEST

START_TEST(never_replaces)
{
	struct nf_write_object o[2];
	v71_init(o);
	json_t *dir = small_dir();
	char *d = tmpdir_new(), *e, *p2;
	ck_assert_int_ge(asprintf(&e, "%s/x.ninfer", d), 0);
	ck_assert_int_ge(asprintf(&p2, "%s/x.ninfer.part-0002", d), 0);
	int fd = open(p2, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_eq(write(fd, "keep", 4), 4);
	close(fd);
	struct nf_report r;
	nf_report_init(&r);
	struct nf_write_opts opts = {.max_file_bytes = 12288};
	ck_assert_int_eq(nf_write_artifact(e, dir, o, 2, &opts, &r), -EEXIST);
	ck_assert(nf_report_has_code(&r, "WRITE_TARGET_EXISTS"));
	ck_assert_uint_eq(count_entries(d), 1);
	ck_assert_uint_eq(file_size(p2), 4);
	unlink(p2);
	/* an existing entry */
	ck_assert_int_eq(nf_write_artifact(e, dir, o, 2, NULL, &r), 0);
	uint8_t id1[32], id2[32];
	fd = open(e, O_RDONLY);
	ck_assert_int_eq(pread(fd, id1, 32, 0), 32);
	close(fd);
	ck_assert_int_eq(nf_write_artifact(e, dir, o, 2, NULL, &r), -EEXIST);
	ck_assert_int_eq(nf_write_artifact(e, dir, o, 2, &opts, &r), -EEXIST);
	ck_assert_uint_eq(count_entries(d), 1);
	fd = open(e, O_RDONLY);
	ck_assert_int_eq(pread(fd, id2, 32, 0), 32);
	close(fd);
	ck_assert_int_eq(memcmp(id1, id2, 32), 0);
	nf_report_free(&r);
	json_decref(dir);
	v71_free(o);
	rm_rf(d);
	free(d);
	free(e);
	free(p2);
}
END_TEST

START_TEST(cancel_cleans_up)
{
	struct nf_write_object o[2];
	v71_init(o);
	json_t *dir = small_dir();
	char *d = tmpdir_new(), *e;
	ck_assert_int_ge(asprintf(&e, "%s/x.ninfer", d), 0);
	volatile sig_atomic_t stop = 1;
	struct nf_report r;
	nf_report_init(&r);
	struct nf_write_opts opts = {.max_file_bytes = 12288, .cancel = &stop};
	ck_assert_int_eq(nf_write_artifact(e, dir, o, 2, &opts, &r), -ECANCELED);
	ck_assert(nf_report_has_code(&r, "WRITE_CANCELLED"));
	ck_assert_uint_eq(count_entries(d), 0);
	stop = 0;
	ck_assert_int_eq(nf_write_artifact(e, dir, o, 2, &opts, &r), 0);
	ck_assert_uint_eq(count_entries(d), 5);
	nf_report_free(&r);
	json_decref(dir);
	v71_free(o);
	rm_rf(d);
	free(d);
	free(e);
}
END_TEST

static void progress_cb(void *arg, uint64_t done, uint64_t total)
{
	uint64_t *last = arg;
	ck_assert_uint_ge(done, last[0]);
	ck_assert_uint_le(done, total);
	last[0] = done;
	last[1] = total;
}

START_TEST(progress_and_fresh_ids)
{
	struct nf_write_object o[2];
	v71_init(o);
	json_t *dir = small_dir();
	char *d = tmpdir_new(), *e1, *e2;
	ck_assert_int_ge(asprintf(&e1, "%s/a.ninfer", d), 0);
	ck_assert_int_ge(asprintf(&e2, "%s/b.ninfer", d), 0);
	uint64_t last[2] = {0, 0};
	struct nf_write_opts opts = {.progress = progress_cb, .progress_arg = last};
	ck_assert_int_eq(nf_write_artifact(e1, dir, o, 2, &opts, NULL), 0);
	ck_assert_uint_eq(last[0], 33800 + 264);
	ck_assert_uint_eq(last[1], 33800 + 264);   /* bytes copied, gaps excluded */
	ck_assert_int_eq(nf_write_artifact(e2, dir, o, 2, NULL, NULL), 0);
	struct nf_artifact *a = open_clean(e1), *b = open_clean(e2);
	ck_assert(memcmp(a->artifact_id, b->artifact_id, 16) != 0);
	ck_assert_str_eq(a->json_text, b->json_text);   /* same directory, same bytes */
	nf_artifact_close(a);
	nf_artifact_close(b);
	json_decref(dir);
	v71_free(o);
	rm_rf(d);
	free(d);
	free(e1);
	free(e2);
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *writer_suite(void)
{
	Suite *s = suite_create("writer");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, capacities);
	tcase_add_test(t, part_names);
	tcase_add_test(t, seed_files_example_plan);
	tcase_add_test(t, ten_thousand_parts_plan);
	tcase_add_test(t, limit_too_small);
	tcase_add_test(t, vector_71_plan);
	tcase_add_test(t, vector_71_files);
	size_t nfx = 0;
	while (nf_fixture_names[nfx])
		nfx++;
	tcase_add_loop_test(t, fixtures_roundtrip, 0, (int)nfx);
	tcase_add_loop_test(t, fixtures_oracle_vs_decoder, 0, (int)nfx);
	tcase_add_test(t, reshard_roundtrip);
	tcase_add_test(t, fail_wrong_size);
	tcase_add_test(t, fail_bad_reference);
	tcase_add_test(t, fail_missing_source);
	tcase_add_test(t, fail_source_not_regular);
	tcase_add_test(t, source_on_other_fs);
	tcase_add_test(t, fail_unwritable_dir);
	tcase_add_test(t, never_replaces);
	tcase_add_test(t, progress_and_fresh_ids);
	tcase_add_test(t, cancel_cleans_up);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(writer_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
