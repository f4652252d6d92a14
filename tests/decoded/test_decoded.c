/* tests/decoded/test_decoded.c — decoded views and the virtual safetensors
 * file, without a mount.
 *
 * Oracles: the fixture builder's expected values (computed from the chosen
 * codes and scales, independently of the codec library), conversions to
 * f16 done by the compiler (_Float16, round-to-nearest-even), conversions to
 * bf16 done here with integer arithmetic, and a safetensors header parsed
 * here with jansson. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/ninfer/decoded.h"
#include "fs/ninfer/safetensors.h"
#include "reader/artifact.h"
#include "tests/fixtures/fixtures.h"

/* ---- a pread fetcher that counts what it fetched ------------------------ */

struct counting_fetch {
	struct nf_artifact *a;
	uint64_t bytes;
	unsigned calls;
};

static int counting_fetch(void *arg, uint32_t object, const struct nf_span *spans, unsigned n,
			  uint8_t *const *bufs)
{
	struct counting_fetch *c = arg;
	const struct nf_object *o = &c->a->objects[object];

	c->calls++;
	for (unsigned i = 0; i < n; i++) {
		ck_assert_uint_le(spans[i].offset + spans[i].length, o->bytes);
		c->bytes += spans[i].length;
		int rc = nf_payload_read(c->a, o->offset + spans[i].offset, spans[i].length, bufs[i],
					 NULL);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- fixtures on disk ------------------------------------------------- */

static char tmpdir[] = "/tmp/nf-decoded-XXXXXX";
static bool built;

static void build_fixtures(void)
{
	if (built)
		return;
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	for (const char *const *n = nf_fixture_names; *n; n++) {
		char dir[512];
		struct nf_report r;

		snprintf(dir, sizeof dir, "%s/%s", tmpdir, *n);
		nf_report_init(&r);
		ck_assert_int_eq(nf_fixture_build(*n, dir, &r), 0);
		nf_report_free(&r);
	}
	built = true;
}

static struct nf_artifact *open_fixture(const char *name)
{
	char path[512];
	struct nf_report r;
	struct nf_artifact *a = NULL;

	build_fixtures();
	snprintf(path, sizeof path, "%s/%s/%s.ninfer", tmpdir, name, name);
	nf_report_init(&r);
	ck_assert_int_eq(nf_artifact_open(path, &r, &a), 0);
	ck_assert(a->directory_ok);
	nf_report_free(&r);
	return a;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0)
		return NULL;
	ck_assert_int_eq(fstat(fd, &st), 0);
	uint8_t *p = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(read(fd, p, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return p;
}

/* The expected decoded values of object o, or NULL (unknown format). */
static uint8_t *expected_values(const char *fixture, const struct nf_object *o, size_t *len)
{
	char path[1024];
	char *e = nf_fx_escape(o->id);
	const char *ext = o->format && strcmp(o->format, "int32") == 0 ? "i32" : "f32";

	snprintf(path, sizeof path, "%s/%s/expect/decoded/%s.%s", tmpdir, fixture, e, ext);
	free(e);
	return slurp(path, len);
}

/* ---- independent conversion oracles ---------------------------------- */

static uint16_t oracle_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40); /* quiet NaN, sign and payload top kept */
	return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static uint16_t oracle_f16(float f)
{
	_Float16 h = (_Float16)f;
	uint16_t u;
	memcpy(&u, &h, 2);
	return u;
}

static void convert_expected(const float *in, size_t n, enum nf_dtype dt, uint8_t *out)
{
	for (size_t i = 0; i < n; i++) {
		uint16_t w = dt == NF_DTYPE_BF16 ? oracle_bf16(in[i]) : oracle_f16(in[i]);
		memcpy(out + 2 * i, &w, 2);
	}
}

/* Compare decoded words allowing only NaN-vs-NaN differences in payload. */
static void assert_same_words(const uint8_t *got, const uint8_t *want, size_t bytes,
			      enum nf_dtype dt, const char *what)
{
	if (memcmp(got, want, bytes) == 0)
		return;
	size_t w = nf_dtype_size(dt);
	for (size_t i = 0; i < bytes; i += w) {
		if (memcmp(got + i, want + i, w) == 0)
			continue;
		bool both_nan = false;
		if (dt == NF_DTYPE_F32) {
			float a, b;
			memcpy(&a, got + i, 4);
			memcpy(&b, want + i, 4);
			both_nan = isnan(a) && isnan(b);
		} else if (dt != NF_DTYPE_I32) {
			uint16_t a, b;
			memcpy(&a, got + i, 2);
			memcpy(&b, want + i, 2);
			uint16_t expmask = dt == NF_DTYPE_BF16 ? 0x7f80 : 0x7c00;
			both_nan = (a & expmask) == expmask && (a & ~(expmask | 0x8000)) &&
				   (b & expmask) == expmask && (b & ~(expmask | 0x8000));
		}
		ck_assert_msg(both_nan, "%s: element %zu differs", what, i / w);
	}
}

/* ---- tests ------------------------------------------------------------ */

static const char *const float_fixtures[] = {"mixed", "text", "interleaved", "names", "shared",
					     "unknown", NULL};

/* Every tensor object decodes, whole, to the fixture's expected values, in
 * f32 and (through the oracles) in bf16 and f16. */
START_TEST(objects_decode_to_expected)
{
	static const enum nf_dtype dts[] = {NF_DTYPE_F32, NF_DTYPE_BF16, NF_DTYPE_F16};
	unsigned checked = 0;

	for (const char *const *fx = float_fixtures; *fx; fx++) {
		struct nf_artifact *a = open_fixture(*fx);
		struct counting_fetch c = {a, 0, 0};
		struct nf_fetcher f = {counting_fetch, &c};

		for (uint32_t i = 0; i < a->nobjects; i++) {
			const struct nf_object *o = &a->objects[i];
			struct nf_part whole = {i, 0, o->elements};
			size_t elen;
			uint8_t *exp;

			if (o->kind != NF_OBJ_TENSOR)
				continue;
			exp = expected_values(*fx, o, &elen);
			if (!exp) { /* no expectation: an unknown format */
				enum nf_dtype dt;
				ck_assert_int_eq(nf_decoded_dtype(a, &whole, 1, NF_DTYPE_F32, &dt),
						 -EOPNOTSUPP);
				continue;
			}
			for (size_t d = 0; d < 3; d++) {
				enum nf_dtype dt;
				ck_assert_int_eq(nf_decoded_dtype(a, &whole, 1, dts[d], &dt), 0);
				size_t bytes = (size_t)o->elements * nf_dtype_size(dt);
				uint8_t *got = malloc(bytes + 1), *want = exp;
				ck_assert_ptr_nonnull(got);
				ck_assert_int_eq(nf_decoded_read(a, &whole, 1, dt, &f, 0, bytes + 100, got),
						 (ssize_t)bytes);
				if (dt == NF_DTYPE_BF16 || dt == NF_DTYPE_F16) {
					ck_assert_uint_eq(elen, (size_t)o->elements * 4);
					want = malloc(bytes + 1);
					convert_expected((const float *)exp, (size_t)o->elements, dt, want);
				} else {
					ck_assert_uint_eq(elen, bytes);
				}
				assert_same_words(got, want, bytes, dt, o->id);
				if (want != exp)
					free(want);
				free(got);
				checked++;
			}
			free(exp);
		}
		nf_artifact_close(a);
	}
	ck_assert_uint_ge(checked, 20);
}
END_TEST

/* Random byte ranges (odd offsets, elements split at both ends) equal the
 * same slice of the whole decode. */
START_TEST(subranges_equal_slices)
{
	struct nf_artifact *a = open_fixture("mixed");
	struct counting_fetch c = {a, 0, 0};
	struct nf_fetcher f = {counting_fetch, &c};
	struct nf_fx_rng rng = {12345};

	for (uint32_t i = 0; i < a->nobjects; i++) {
		const struct nf_object *o = &a->objects[i];
		struct nf_part whole = {i, 0, o->elements};
		enum nf_dtype dt;

		if (o->kind != NF_OBJ_TENSOR || nf_decoded_dtype(a, &whole, 1, NF_DTYPE_BF16, &dt))
			continue;
		size_t size = (size_t)o->elements * nf_dtype_size(dt);
		uint8_t *all = malloc(size), *part = malloc(size + 8);
		ck_assert_int_eq(nf_decoded_read(a, &whole, 1, dt, &f, 0, size, all), (ssize_t)size);
		for (int t = 0; t < 200; t++) {
			uint64_t off = nf_fx_below(&rng, (uint32_t)size + 4);
			size_t len = nf_fx_below(&rng, t % 3 ? 9 : (uint32_t)size + 1);
			ssize_t got = nf_decoded_read(a, &whole, 1, dt, &f, off, len, part);
			size_t want = off >= size ? 0 : (size - off < len ? size - off : len);
			ck_assert_int_eq(got, (ssize_t)want);
			ck_assert(want == 0 || memcmp(part, all + off, want) == 0);
		}
		free(all);
		free(part);
	}
	nf_artifact_close(a);
}
END_TEST

/* A parts binding decodes to the concatenation of its parents' ranges. */
START_TEST(bindings_concatenate_parts)
{
	unsigned checked = 0;

	for (const char *const *fx = float_fixtures; *fx; fx++) {
		struct nf_artifact *a = open_fixture(*fx);
		struct counting_fetch c = {a, 0, 0};
		struct nf_fetcher f = {counting_fetch, &c};

		for (uint32_t b = 0; b < a->nbindings; b++) {
			const struct nf_binding *bd = &a->bindings[b];
			enum nf_dtype dt;

			if (nf_decoded_dtype(a, bd->parts, bd->nparts, NF_DTYPE_F32, &dt))
				continue;
			size_t bytes = (size_t)bd->elements * 4, at = 0;
			uint8_t *got = malloc(bytes + 1), *want = malloc(bytes + 1);
			ck_assert_int_eq(nf_decoded_read(a, bd->parts, bd->nparts, dt, &f, 0, bytes, got),
					 (ssize_t)bytes);
			for (uint32_t p = 0; p < bd->nparts; p++) {
				size_t elen;
				uint8_t *exp = expected_values(*fx, &a->objects[bd->parts[p].object], &elen);
				size_t n = (size_t)(bd->parts[p].end - bd->parts[p].begin) * 4;
				ck_assert_ptr_nonnull(exp);
				memcpy(want + at, exp + bd->parts[p].begin * 4, n);
				at += n;
				free(exp);
			}
			ck_assert_uint_eq(at, bytes);
			assert_same_words(got, want, bytes, dt, bd->name);
			free(got);
			free(want);
			checked++;
		}
		nf_artifact_close(a);
	}
	ck_assert_uint_ge(checked, 10);
}
END_TEST

/* Decoding one element of a large object fetches a few hundred bytes, not
 * the object: cost follows the request. */
START_TEST(small_reads_fetch_little)
{
	struct nf_artifact *a = open_fixture("mixed");
	unsigned checked = 0;

	for (uint32_t i = 0; i < a->nobjects; i++) {
		const struct nf_object *o = &a->objects[i];
		struct nf_part whole = {i, 0, o->elements};
		enum nf_dtype dt;
		uint8_t out[8];

		if (o->kind != NF_OBJ_TENSOR || o->bytes < 8192 ||
		    nf_decoded_dtype(a, &whole, 1, NF_DTYPE_F32, &dt))
			continue;
		struct counting_fetch c = {a, 0, 0};
		struct nf_fetcher f = {counting_fetch, &c};
		uint64_t mid = o->elements / 2 * 4;
		ck_assert_int_eq(nf_decoded_read(a, &whole, 1, dt, &f, mid, 4, out), 4);
		/* at most one row of codes and its scales, or one nvfp4 scale tile */
		ck_assert_msg(c.bytes <= 4096 + o->bytes / 16, "%s: one element fetched %lu of %lu bytes",
			      o->id, (unsigned long)c.bytes, (unsigned long)o->bytes);
		checked++;
	}
	ck_assert_uint_ge(checked, 2);
	nf_artifact_close(a);
}
END_TEST

/* The virtual safetensors file: header parsed independently; every tensor
 * equals its binding's decoded view; random ranges equal slices. */
START_TEST(safetensors_file)
{
	struct nf_artifact *a = open_fixture("mixed");
	struct counting_fetch c = {a, 0, 0};
	struct nf_fetcher f = {counting_fetch, &c};
	struct nf_safetensors st;

	ck_assert_int_eq(nf_safetensors_build(&st, a, NF_DTYPE_F32), 0);
	uint8_t *file = malloc(st.size);
	ck_assert_int_eq(nf_safetensors_read(&st, a, &f, 0, st.size, file), (ssize_t)st.size);

	uint64_t hlen = 0;
	for (int i = 7; i >= 0; i--)
		hlen = hlen << 8 | file[i];
	ck_assert_uint_eq((8 + hlen) % 8, 0);
	json_error_t err;
	json_t *h = json_loadb((const char *)file + 8, hlen, JSON_REJECT_DUPLICATES, &err);
	ck_assert_msg(h != NULL, "header: %s", err.text);
	json_t *meta = json_object_get(h, "__metadata__");
	ck_assert_str_eq(json_string_value(json_object_get(meta, "artifact_id")), a->artifact_id_hex);
	ck_assert_str_eq(json_string_value(json_object_get(meta, "dtype")), "f32");

	uint64_t data = 8 + hlen, covered = 0;
	unsigned tensors = 0;
	for (uint32_t b = 0; b < a->nbindings; b++) {
		const struct nf_binding *bd = &a->bindings[b];
		json_t *t = json_object_get(h, bd->name);
		enum nf_dtype dt;

		if (nf_decoded_dtype(a, bd->parts, bd->nparts, NF_DTYPE_F32, &dt)) {
			ck_assert_ptr_null(t);
			continue;
		}
		ck_assert_ptr_nonnull(t);
		json_t *offs = json_object_get(t, "data_offsets"), *shape = json_object_get(t, "shape");
		uint64_t b0 = (uint64_t)json_integer_value(json_array_get(offs, 0));
		uint64_t b1 = (uint64_t)json_integer_value(json_array_get(offs, 1));
		uint64_t elems = 1;
		for (size_t k = 0; k < json_array_size(shape); k++) {
			ck_assert_uint_eq((uint64_t)json_integer_value(json_array_get(shape, k)),
					  bd->shape[k]);
			elems *= (uint64_t)json_integer_value(json_array_get(shape, k));
		}
		ck_assert_uint_eq(json_array_size(shape), bd->rank);
		ck_assert_str_eq(json_string_value(json_object_get(t, "dtype")),
				 dt == NF_DTYPE_I32 ? "I32" : "F32");
		ck_assert_uint_eq(b1 - b0, elems * 4);
		ck_assert_uint_eq(b0, covered); /* no holes, binding order */
		covered = b1;
		uint8_t *want = malloc(b1 - b0 + 1);
		ck_assert_int_eq(nf_decoded_read(a, bd->parts, bd->nparts, dt, &f, 0, b1 - b0, want),
				 (ssize_t)(b1 - b0));
		ck_assert(memcmp(file + data + b0, want, b1 - b0) == 0);
		free(want);
		tensors++;
	}
	ck_assert_uint_eq(data + covered, st.size);
	ck_assert_uint_ge(tensors, 5);

	struct nf_fx_rng rng = {99};
	uint8_t *part = malloc(st.size + 8);
	for (int t = 0; t < 300; t++) {
		uint64_t off = nf_fx_below(&rng, (uint32_t)st.size + 2);
		size_t len = nf_fx_below(&rng, (uint32_t)(st.size / 3));
		size_t want = off >= st.size ? 0 : (st.size - off < len ? st.size - off : len);
		ck_assert_int_eq(nf_safetensors_read(&st, a, &f, off, len, part), (ssize_t)want);
		ck_assert(want == 0 || memcmp(part, file + off, want) == 0);
	}
	free(part);
	json_decref(h);
	free(file);
	nf_safetensors_free(&st);
	nf_artifact_close(a);
}
END_TEST

/* An object whose format is unknown is left out of the safetensors file
 * and named in __metadata__.omitted. */
START_TEST(safetensors_omits_undecodable)
{
	struct nf_artifact *a = open_fixture("unknown");
	struct nf_safetensors st;
	unsigned undecodable = 0;

	for (uint32_t b = 0; b < a->nbindings; b++) {
		enum nf_dtype dt;
		undecodable += nf_decoded_dtype(a, a->bindings[b].parts, a->bindings[b].nparts,
						NF_DTYPE_F32, &dt) != 0;
	}
	ck_assert_int_eq(nf_safetensors_build(&st, a, NF_DTYPE_BF16), 0);
	ck_assert_uint_eq(st.nomitted, undecodable);
	ck_assert_uint_eq(st.nentries + st.nomitted, a->nbindings);
	ck_assert_uint_ge(undecodable, 1);
	nf_safetensors_free(&st);
	nf_artifact_close(a);
}
END_TEST

static void cleanup(void)
{
	if (built) {
		char cmd[600];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
}

int main(void)
{
	Suite *s = suite_create("decoded");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, objects_decode_to_expected);
	tcase_add_test(tc, subranges_equal_slices);
	tcase_add_test(tc, bindings_concatenate_parts);
	tcase_add_test(tc, small_reads_fetch_little);
	tcase_add_test(tc, safetensors_file);
	tcase_add_test(tc, safetensors_omits_undecodable);
	suite_add_tcase(s, tc);

	SRunner *sr = srunner_create(s);
	/* No fork: the fixtures are built once and shared by every test. */
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	cleanup();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
