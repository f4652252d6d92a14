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
#include "fs/ninfer/npy.h"
#include "fs/ninfer/safetensors.h"
#include "reader/artifact.h"
#include "tests/fixtures/fixtures.h"

/* ---- a pread fetcher that counts what it fetched ------------------------ */

/* Spans are queued, then read with nf_payload_read when the decoder runs
 * the fetcher; runs counts those runs (one per read: issue 15), and every
 * scratch block is malloc'd and freed by fetch_done. */
struct queued {
	uint64_t logical, length;
	uint8_t *dst;
};

struct counting_fetch {
	struct nf_artifact *a;
	uint64_t bytes;
	unsigned runs;
	struct queued q[4096];
	size_t nq;
	void *blocks[4096];
	size_t nblocks;
};

static int fetch_queue(void *arg, uint32_t object, uint64_t offset, uint64_t length, uint8_t *dst)
{
	struct counting_fetch *c = arg;
	const struct nf_object *o = &c->a->objects[object];

	ck_assert_uint_lt(object, c->a->nobjects);
	ck_assert_uint_le(offset + length, o->bytes);
	ck_assert_uint_lt(c->nq, sizeof c->q / sizeof c->q[0]);
	c->q[c->nq++] = (struct queued){o->offset + offset, length, dst};
	c->bytes += length;
	return 0;
}

static int fetch_run(void *arg)
{
	struct counting_fetch *c = arg;

	c->runs++;
	for (size_t i = 0; i < c->nq; i++) {
		int rc = nf_payload_read(c->a, c->q[i].logical, c->q[i].length, c->q[i].dst, NULL);
		if (rc)
			return rc;
	}
	c->nq = 0;
	return 0;
}

static void *fetch_scratch(void *arg, size_t n)
{
	struct counting_fetch *c = arg;
	void *p;

	ck_assert_uint_lt(c->nblocks, sizeof c->blocks / sizeof c->blocks[0]);
	p = aligned_alloc(64, (n + 63) / 64 * 64);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq((uintptr_t)p % 64, 0);
	c->blocks[c->nblocks++] = p;
	return p;
}

/* After each read: the scratch is given back. */
static void fetch_done(struct counting_fetch *c)
{
	for (size_t i = 0; i < c->nblocks; i++)
		free(c->blocks[i]);
	c->nblocks = 0;
	c->nq = 0;
}

#define COUNTING_FETCHER(c) {fetch_queue, fetch_run, fetch_scratch, &(c)}

/* nf_decoded_read and nf_safetensors_read through the counting fetcher: a
 * read that returns bytes ran the fetcher exactly once (all of its spans in
 * one fetch, issue 15). */
static ssize_t dread(struct counting_fetch *c, const struct nf_artifact *a,
		     const struct nf_part *parts, uint32_t nparts, enum nf_dtype dt,
		     const struct nf_fetcher *f, uint64_t off, size_t len, uint8_t *out)
{
	unsigned runs = c->runs;
	ssize_t n = nf_decoded_read(a, parts, nparts, dt, f, off, len, out);

	if (n > 0)
		ck_assert_uint_eq(c->runs, runs + 1);
	fetch_done(c);
	return n;
}

static ssize_t stread(struct counting_fetch *c, const struct nf_safetensors *st,
		      const struct nf_artifact *a, const struct nf_fetcher *f, uint64_t off,
		      size_t len, uint8_t *out)
{
	unsigned runs = c->runs;
	ssize_t n = nf_safetensors_read(st, a, f, off, len, out);

	if (n > 0)
		ck_assert_uint_eq(c->runs, runs + 1);
	fetch_done(c);
	return n;
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
		struct counting_fetch c = {.a = a};
		struct nf_fetcher f = COUNTING_FETCHER(c);

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
				ck_assert_int_eq(dread(&c, a, &whole, 1, dt, &f, 0, bytes + 100, got),
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
	struct counting_fetch c = {.a = a};
	struct nf_fetcher f = COUNTING_FETCHER(c);
	struct nf_fx_rng rng = {12345};

	for (uint32_t i = 0; i < a->nobjects; i++) {
		const struct nf_object *o = &a->objects[i];
		struct nf_part whole = {i, 0, o->elements};
		enum nf_dtype dt;

		if (o->kind != NF_OBJ_TENSOR || nf_decoded_dtype(a, &whole, 1, NF_DTYPE_BF16, &dt))
			continue;
		size_t size = (size_t)o->elements * nf_dtype_size(dt);
		uint8_t *all = malloc(size), *part = malloc(size + 8);
		ck_assert_int_eq(dread(&c, a, &whole, 1, dt, &f, 0, size, all), (ssize_t)size);
		for (int t = 0; t < 200; t++) {
			uint64_t off = nf_fx_below(&rng, (uint32_t)size + 4);
			size_t len = nf_fx_below(&rng, t % 3 ? 9 : (uint32_t)size + 1);
			ssize_t got = dread(&c, a, &whole, 1, dt, &f, off, len, part);
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

/* One odd read: bytes [off, off+len) of the view into a buffer of exactly
 * len bytes (a byte written past it is an ASan error), equal to the slice
 * of the whole read, in one fetch. */
static void odd_read(struct counting_fetch *c, const struct nf_fetcher *f,
		     const struct nf_part *parts, uint32_t nparts, enum nf_dtype dt,
		     const uint8_t *all, size_t size, uint64_t off, size_t len, const char *what)
{
	size_t want = off >= size ? 0 : (size - off < len ? size - off : len);
	uint8_t *buf = malloc(want ? want : 1);

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(dread(c, c->a, parts, nparts, dt, f, off, want, buf), (ssize_t)want);
	ck_assert_msg(want == 0 || memcmp(buf, all + off, want) == 0, "%s: [%lu, +%zu)", what,
		      (unsigned long)off, want);
	free(buf);
}

/* Reads of 1 byte and more, starting and ending inside elements, across
 * scale groups (16, 32, 64, 128 elements), rows and parts, of every
 * object and binding of the split `mixed` set (every format and layout)
 * in f32, bf16 and f16: each equals the slice of the whole read (issue 15:
 * a request's spans are planned and fetched together now). */
START_TEST(odd_ranges_every_format)
{
	static const enum nf_dtype dts[] = {NF_DTYPE_F32, NF_DTYPE_BF16, NF_DTYPE_F16};
	struct nf_artifact *a = open_fixture("mixed");
	struct counting_fetch c = {.a = a};
	struct nf_fetcher f = COUNTING_FETCHER(c);
	unsigned views = 0;

	for (uint32_t v = 0; v < a->nobjects + a->nbindings; v++) {
		struct nf_part whole;
		const struct nf_part *parts = &whole;
		uint32_t nparts = 1;
		uint64_t k = 1;
		const char *what;

		if (v < a->nobjects) {
			const struct nf_object *o = &a->objects[v];
			if (o->kind != NF_OBJ_TENSOR)
				continue;
			whole = (struct nf_part){v, 0, o->elements};
			k = o->rank ? o->shape[o->rank - 1] : 1;
			what = o->id;
		} else {
			const struct nf_binding *b = &a->bindings[v - a->nobjects];
			parts = b->parts;
			nparts = b->nparts;
			k = b->rank ? b->shape[b->rank - 1] : 1;
			what = b->name;
		}
		for (size_t d = 0; d < 3; d++) {
			enum nf_dtype dt;
			if (nf_decoded_dtype(a, parts, nparts, dts[d], &dt))
				break;
			size_t esz = nf_dtype_size(dt);
			size_t size = (size_t)nf_parts_elements(parts, nparts) * esz;
			uint8_t *all = malloc(size ? size : 1);
			ck_assert_ptr_nonnull(all);
			ck_assert_int_eq(dread(&c, a, parts, nparts, dt, &f, 0, size, all),
					 (ssize_t)size);
			/* the element offsets where something changes */
			/* (the first few of each kind, and every part start) */
			uint64_t marks[64];
			size_t nm = 0;
			static const uint64_t groups[] = {16, 32, 64, 128};
			for (size_t g = 0; g < 5; g++) {
				uint64_t step = g < 4 ? groups[g] : k;
				for (uint64_t e = step, j = 0; e * esz < size && j < 6; e += step, j++)
					marks[nm++] = e;
			}
			uint64_t at = 0;
			for (uint32_t p = 0; p < nparts && nm < 63; p++) {
				at += parts[p].end - parts[p].begin;
				marks[nm++] = at;
			}
			marks[nm++] = 0;
			for (size_t m = 0; m < nm; m++) {
				static const int64_t deltas[] = {-5, -1, 0, 1, 3};
				for (size_t q = 0; q < 5; q++) {
					int64_t off = (int64_t)(marks[m] * esz) + deltas[q];
					static const size_t lens[] = {1, 2, 5, 67, 261};
					if (off < 0)
						continue;
					for (size_t l = 0; l < 5; l++)
						odd_read(&c, &f, parts, nparts, dt, all, size,
							 (uint64_t)off, lens[l], what);
				}
			}
			free(all);
			views++;
		}
	}
	ck_assert_uint_ge(views, 60);
	nf_artifact_close(a);
}
END_TEST

/* NPY preambles against vectors computed by hand from the format
 * description: magic, version, little-endian length, the dict text, spaces
 * and '\n' to a multiple of 64; version 2.0 (uint32 length) past 65535. */
static void npy_expect(enum nf_dtype dt, uint32_t rank, const uint64_t *shape, const char *dict,
		       uint64_t total, unsigned major)
{
	uint64_t n = nf_npy_header(dt, rank, shape, NULL, 0);
	char *h = malloc(total);
	size_t pre = major == 1 ? 10 : 12, dl = strlen(dict);
	uint64_t hlen = total - pre;

	ck_assert_uint_eq(n, total);
	ck_assert_ptr_nonnull(h);
	ck_assert_uint_eq(nf_npy_header(dt, rank, shape, h, total - 1), total);   /* too small */
	ck_assert_uint_eq(nf_npy_header(dt, rank, shape, h, total), total);
	ck_assert(memcmp(h, "\x93NUMPY", 6) == 0);
	ck_assert_uint_eq((uint8_t)h[6], major);
	ck_assert_uint_eq((uint8_t)h[7], 0);
	for (unsigned i = 0; i < pre - 8; i++)
		ck_assert_uint_eq((uint8_t)h[8 + i], (hlen >> (8 * i)) & 0xff);
	ck_assert_msg(memcmp(h + pre, dict, dl) == 0, "%.*s", (int)(dl < 200 ? dl : 200), h + pre);
	for (uint64_t i = pre + dl; i < total - 1; i++)
		ck_assert_int_eq(h[i], ' ');
	ck_assert_int_eq(h[total - 1], '\n');
	free(h);
}

START_TEST(npy_preambles)
{
	static const uint64_t s34[] = {3, 4}, s5[] = {5}, big[] = {18446744073709551615ull, 7};
	/* 59 bytes of dict + 10 + '\n' = 70: 128 */
	npy_expect(NF_DTYPE_F32, 2, s34,
		   "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 128, 1);
	npy_expect(NF_DTYPE_BF16, 0, NULL,
		   "{'descr': '<u2', 'fortran_order': False, 'shape': (), }", 128, 1);
	npy_expect(NF_DTYPE_F16, 1, s5,
		   "{'descr': '<f2', 'fortran_order': False, 'shape': (5,), }", 128, 1);
	/* 51 + 20 + 3 + 4 = 78 bytes of dict + 11 = 89: 128 */
	npy_expect(NF_DTYPE_I32, 2, big,
		   "{'descr': '<i4', 'fortran_order': False, 'shape': (18446744073709551615, 7), }",
		   128, 1);
	/* r ones: 51 + 1 + 3 (r - 1) + 4 = 53 + 3r bytes of dict.  r = 21824:
	 * 65525, 10 + 65525 + 1 = 65536, the largest 1.0 preamble (length
	 * 65526); r = 21825: 65528, 1.0 would need 65590: 2.0, 12 + 65528 + 1
	 * -> 65600; r = 30000: 90053 -> 90112 */
	static const struct { uint32_t rank; uint64_t total; unsigned major; } ones_cases[] = {
		{21824, 65536, 1}, {21825, 65600, 2}, {30000, 90112, 2}};
	uint64_t *ones = malloc(30000 * sizeof *ones);
	char *dict = malloc(53 + 3 * 30000 + 1);
	ck_assert_ptr_nonnull(ones);
	ck_assert_ptr_nonnull(dict);
	for (int i = 0; i < 30000; i++)
		ones[i] = 1;
	for (size_t c = 0; c < 3; c++) {
		size_t o = (size_t)sprintf(dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (1");
		for (uint32_t i = 1; i < ones_cases[c].rank; i++)
			o += (size_t)sprintf(dict + o, ", 1");
		o += (size_t)sprintf(dict + o, "), }");
		ck_assert_uint_eq(o, 53 + 3 * (size_t)ones_cases[c].rank);
		npy_expect(NF_DTYPE_F32, ones_cases[c].rank, ones, dict, ones_cases[c].total,
			   ones_cases[c].major);
	}
	free(ones);
	free(dict);
	ck_assert_ptr_null(nf_npy_descr((enum nf_dtype)99));
	ck_assert_uint_eq(nf_npy_header((enum nf_dtype)99, 0, NULL, NULL, 0), 0);
}
END_TEST

/* A parts binding decodes to the concatenation of its parents' ranges. */
START_TEST(bindings_concatenate_parts)
{
	unsigned checked = 0;

	for (const char *const *fx = float_fixtures; *fx; fx++) {
		struct nf_artifact *a = open_fixture(*fx);
		struct counting_fetch c = {.a = a};
		struct nf_fetcher f = COUNTING_FETCHER(c);

		for (uint32_t b = 0; b < a->nbindings; b++) {
			const struct nf_binding *bd = &a->bindings[b];
			enum nf_dtype dt;

			if (nf_decoded_dtype(a, bd->parts, bd->nparts, NF_DTYPE_F32, &dt))
				continue;
			size_t bytes = (size_t)bd->elements * 4, at = 0;
			uint8_t *got = malloc(bytes + 1), *want = malloc(bytes + 1);
			ck_assert_int_eq(dread(&c, a, bd->parts, bd->nparts, dt, &f, 0, bytes, got),
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
		struct counting_fetch c = {.a = a};
		struct nf_fetcher f = COUNTING_FETCHER(c);
		uint64_t mid = o->elements / 2 * 4;
		ck_assert_int_eq(dread(&c, a, &whole, 1, dt, &f, mid, 4, out), 4);
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
	struct counting_fetch c = {.a = a};
	struct nf_fetcher f = COUNTING_FETCHER(c);
	struct nf_safetensors st;

	ck_assert_int_eq(nf_safetensors_build(&st, a, NF_DTYPE_F32), 0);
	uint8_t *file = malloc(st.size);
	ck_assert_int_eq(stread(&c, &st, a, &f, 0, st.size, file), (ssize_t)st.size);

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
		ck_assert_int_eq(dread(&c, a, bd->parts, bd->nparts, dt, &f, 0, b1 - b0, want),
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
		ck_assert_int_eq(stread(&c, &st, a, &f, off, len, part), (ssize_t)want);
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
	tcase_add_test(tc, odd_ranges_every_format);
	tcase_add_test(tc, npy_preambles);
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
