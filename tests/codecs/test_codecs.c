/* tests/codecs/test_codecs.c — codec registry, decode, encode, conversions,
 * invariants and SIMD agreement, against the vectors of codecs.md.
 *
 * Expected values are computed here independently of the library (own
 * binary16/E4M3FN/E2M1 formulas via ldexp), and every decode goes through
 * nf_decode_spans(): the spans are copied into exactly-sized heap buffers,
 * so ASan catches any read outside what the plan asked for. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/codec.h"
#include "codecs/internal.h"

/* check's assertion macros record every *passing* assertion with a write()
 * (mark points), which makes exhaustive loops I/O-bound.  These versions
 * only call into check when the condition fails; the failure still carries
 * file and line. */
#undef ck_assert
#undef ck_assert_msg
#define ck_assert(c) do { if (!(c)) ck_abort_msg("assertion failed: %s", #c); } while (0)
#define ck_assert_msg(c, ...) do { if (!(c)) ck_abort_msg(__VA_ARGS__); } while (0)
#define NF_CMP(a, op, b, T, F) do { T a_ = (a), b_ = (b); \
	if (!(a_ op b_)) ck_abort_msg("%s %s %s (" F " vs " F ")", #a, #op, #b, a_, b_); } while (0)
#undef ck_assert_int_eq
#undef ck_assert_int_ne
#undef ck_assert_uint_eq
#undef ck_assert_uint_le
#undef ck_assert_uint_lt
#undef ck_assert_uint_gt
#undef ck_assert_float_eq
#define ck_assert_int_eq(a, b) NF_CMP(a, ==, b, long long, "%lld")
#define ck_assert_int_ne(a, b) NF_CMP(a, !=, b, long long, "%lld")
#define ck_assert_uint_eq(a, b) NF_CMP(a, ==, b, unsigned long long, "%llu")
#define ck_assert_uint_le(a, b) NF_CMP(a, <=, b, unsigned long long, "%llu")
#define ck_assert_uint_lt(a, b) NF_CMP(a, <, b, unsigned long long, "%llu")
#define ck_assert_uint_gt(a, b) NF_CMP(a, >, b, unsigned long long, "%llu")
#define ck_assert_float_eq(a, b) NF_CMP(a, ==, b, double, "%.9g")

/* ---------- independent reference helpers ---------- */

static float ref_f16(uint16_t h)
{
	int s = h >> 15, e = (h >> 10) & 31, f = h & 1023;
	double v;
	if (e == 31)
		return f ? NAN : (s ? -INFINITY : INFINITY);
	v = e == 0 ? ldexp(f, -24) : ldexp(1024 + f, e - 25);
	return (float)(s ? -v : v);
}

static float ref_e4m3(uint8_t b)
{
	int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
	double v;
	if (e == 15 && m == 7)
		return NAN;
	v = e == 0 ? ldexp(m, -9) : ldexp(8 + m, e - 10);
	return (float)(s ? -v : v);
}

static float ref_e2m1(unsigned c)
{
	static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
	return (float)((c & 8) ? -mag[c & 7] : mag[c & 7]);
}

static float ref_bf16(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static uint32_t fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float bitsf(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* xorshift PRNG, deterministic */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}
static int rnd_range(int lo, int hi) { return lo + (int)(rnd() % (uint64_t)(hi - lo + 1)); }

static void geom(struct nf_geometry *g, const char *f, const char *l, uint64_t n, uint64_t k,
		 uint64_t d)
{
	uint64_t shape[2] = {n, k};
	enum nf_codec_status st = nf_geometry_init(g, f, l, 2, shape, d);
	ck_assert_msg(st == NF_CODEC_OK, "%s/%s [%llu,%llu] D=%llu: %s", f, l,
		      (unsigned long long)n, (unsigned long long)k, (unsigned long long)d,
		      nf_codec_status_str(st));
}

static uint64_t size_of(const char *f, const char *l, uint64_t n, uint64_t k, uint64_t d)
{
	struct nf_geometry g;
	geom(&g, f, l, n, k, d);
	return g.bytes;
}

/* Decode [b,e) of an in-memory object the way the filesystem does: ask for
 * spans, copy exactly those bytes into separate heap buffers, decode. */
static int decode_via_spans(const struct nf_geometry *g, const uint8_t *obj, uint64_t b,
			    uint64_t e, enum nf_dtype dt, void *out, enum nf_isa isa)
{
	struct nf_span sp[NF_MAX_SPANS];
	uint8_t *bufs[NF_MAX_SPANS] = {0};
	unsigned n = nf_decode_spans(g, b, e, sp);
	int rc;

	for (unsigned i = 0; i < n; i++) {
		ck_assert_uint_le(sp[i].offset + sp[i].length, g->bytes);
		if (i)
			ck_assert_uint_le(sp[i - 1].offset + sp[i - 1].length, sp[i].offset);
		bufs[i] = malloc(sp[i].length ? sp[i].length : 1);
		ck_assert_ptr_nonnull(bufs[i]);
		memcpy(bufs[i], obj + sp[i].offset, sp[i].length);
	}
	rc = nf_decode_isa(g, b, e, (const uint8_t *const *)bufs, dt, out, isa);
	for (unsigned i = 0; i < n; i++)
		free(bufs[i]);
	return rc;
}

static float *decode_all(const struct nf_geometry *g, const uint8_t *obj, enum nf_isa isa)
{
	float *out = malloc(g->elements * 4 + 4);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(decode_via_spans(g, obj, 0, g->elements, NF_DTYPE_F32, out, isa), 0);
	return out;
}

static void assert_same_bits(const float *a, const float *b, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(fbits(a[i]) == fbits(b[i]), "%s: element %zu: %08x != %08x (%g vs %g)",
			      what, i, fbits(a[i]), fbits(b[i]), (double)a[i], (double)b[i]);
}

static const char *RS = "row_split_k128_v1";
static const char *BS = "block_scale_k16_m128x4_v1";
static const char *RSC = "row_scale_v1";
static const char *CT = "contiguous_le_v1";

static const char *rs_formats[] = {"q2_g64_fp16", "q4_g64_fp16", "q5_g64_fp16",
				   "q6_g64_fp16", "q8_g32_fp16", "t2_g128_fp16"};
static const int rs_lo[] = {-1, -8, -16, -32, -127, -1};
static const int rs_hi[] = {2, 7, 15, 31, 127, 1};

/* ---------- registry ---------- */

START_TEST(test_names)
{
	static const char *fmts[] = {"bf16", "fp32", "int32", "q2_g64_fp16", "q4_g64_fp16",
				     "q5_g64_fp16", "q6_g64_fp16", "q8_g32_fp16", "t2_g128_fp16",
				     "nvfp4", "fp8_e4m3fn_row_bf16"};
	static const char *lays[] = {"contiguous_le_v1", "row_split_k128_v1",
				     "block_scale_k16_m128x4_v1", "row_scale_v1", "raw_bytes_v1"};
	for (unsigned i = 0; i < 11; i++) {
		enum nf_format f = nf_format_from_name(fmts[i]);
		ck_assert_int_ne(f, NF_FORMAT_UNKNOWN);
		ck_assert_str_eq(nf_format_name(f), fmts[i]);
	}
	for (unsigned i = 0; i < 5; i++) {
		enum nf_layout l = nf_layout_from_name(lays[i]);
		ck_assert_int_ne(l, NF_LAYOUT_UNKNOWN);
		ck_assert_str_eq(nf_layout_name(l), lays[i]);
	}
	static const char *unknown[] = {"int64", "fp8_e4m3fn_row_fp16", "fp8_e4m3fn_row_fp32",
					"u4z8_g16_fp16", "gguf_q4_k", "BF16", "bf16 ", "", "nvfp4\n",
					"Q4_G64_FP16"};
	for (unsigned i = 0; i < 10; i++)
		ck_assert_int_eq(nf_format_from_name(unknown[i]), NF_FORMAT_UNKNOWN);
	ck_assert_int_eq(nf_format_from_name(NULL), NF_FORMAT_UNKNOWN);
	static const char *ulay[] = {"row_interleaved_v1", "gguf_blocks_v1",
				     "expert_block_scale_k16_m128x4_v1", "packed_u4_g16_v1",
				     "ternary_row_k128_v1", "Row_split_k128_v1"};
	for (unsigned i = 0; i < 6; i++)
		ck_assert_int_eq(nf_layout_from_name(ulay[i]), NF_LAYOUT_UNKNOWN);

	struct nf_geometry g;
	uint64_t s2[2] = {128, 64};
	ck_assert_int_eq(nf_geometry_init(&g, "int64", CT, 2, s2, 1), NF_CODEC_UNKNOWN_FORMAT);
	ck_assert_int_eq(nf_geometry_init(&g, "bf16", "gguf_blocks_v1", 2, s2, 1),
			 NF_CODEC_UNKNOWN_LAYOUT);
	ck_assert_int_eq(nf_geometry_init(&g, "bf16", RS, 2, s2, 1), NF_CODEC_PAIR_NOT_ALLOWED);
	ck_assert_int_eq(nf_geometry_init(&g, "q4_g64_fp16", CT, 2, s2, 1),
			 NF_CODEC_PAIR_NOT_ALLOWED);
	ck_assert_int_eq(nf_geometry_init(&g, "nvfp4", RS, 2, s2, 1), NF_CODEC_PAIR_NOT_ALLOWED);
	ck_assert_int_eq(nf_geometry_init(&g, "fp8_e4m3fn_row_bf16", BS, 2, s2, 1),
			 NF_CODEC_PAIR_NOT_ALLOWED);
	ck_assert_int_eq(nf_geometry_init(&g, "bf16", "raw_bytes_v1", 1, s2, 1),
			 NF_CODEC_PAIR_NOT_ALLOWED);
	uint64_t r[1] = {17};
	ck_assert_int_eq(nf_geometry_init(&g, NULL, "raw_bytes_v1", 1, r, 1), NF_CODEC_OK);
	ck_assert_uint_eq(g.bytes, 17);
	ck_assert_uint_eq(g.nplanes, 1);
	ck_assert_str_eq(g.planes[0].name, "data");
	r[0] = 0;
	ck_assert_int_eq(nf_geometry_init(&g, NULL, "raw_bytes_v1", 1, r, 1), NF_CODEC_BAD_SHAPE);
	ck_assert_str_eq(nf_dtype_name(NF_DTYPE_BF16), "bf16");
	ck_assert_uint_eq(nf_dtype_size(NF_DTYPE_F16), 2);
	ck_assert_uint_eq(nf_dtype_size(NF_DTYPE_I32), 4);
	for (int s = 0; s <= NF_CODEC_OVERFLOW; s++)
		ck_assert_ptr_nonnull(nf_codec_status_str(s));
}
END_TEST

START_TEST(test_shape_rules)
{
	struct nf_geometry g;
	uint64_t s[3] = {4, 64, 2};
	/* rank-2 layouts reject other ranks and zero dims */
	ck_assert_int_eq(nf_geometry_init(&g, "q4_g64_fp16", RS, 1, s, 1), NF_CODEC_BAD_SHAPE);
	ck_assert_int_eq(nf_geometry_init(&g, "q4_g64_fp16", RS, 3, s, 1), NF_CODEC_BAD_SHAPE);
	uint64_t z[2] = {0, 64};
	ck_assert_int_eq(nf_geometry_init(&g, "q4_g64_fp16", RS, 2, z, 1), NF_CODEC_BAD_SHAPE);
	ck_assert_int_eq(nf_geometry_init(&g, "fp8_e4m3fn_row_bf16", RSC, 2, z, 1),
			 NF_CODEC_BAD_SHAPE);
	/* nvfp4: N % 128, K % 64 */
	uint64_t a[2] = {127, 64}, b[2] = {128, 32}, c[2] = {128, 64};
	ck_assert_int_eq(nf_geometry_init(&g, "nvfp4", BS, 2, a, 1), NF_CODEC_BAD_SHAPE);
	ck_assert_int_eq(nf_geometry_init(&g, "nvfp4", BS, 2, b, 1), NF_CODEC_BAD_SHAPE);
	ck_assert_int_eq(nf_geometry_init(&g, "nvfp4", BS, 2, c, 1), NF_CODEC_OK);
	/* divisors */
	uint64_t d[2] = {256, 64}, e[2] = {384, 64};
	ck_assert_int_eq(nf_geometry_init(&g, "nvfp4", BS, 2, d, 2), NF_CODEC_OK);
	ck_assert_int_eq(nf_geometry_init(&g, "nvfp4", BS, 2, d, 3), NF_CODEC_BAD_DIVISORS);
	ck_assert_int_eq(nf_geometry_init(&g, "nvfp4", BS, 2, d, 4), NF_CODEC_BAD_DIVISORS);
	ck_assert_int_eq(nf_geometry_init(&g, "nvfp4", BS, 2, d, 0), NF_CODEC_BAD_DIVISORS);
	ck_assert_int_eq(nf_geometry_init(&g, "nvfp4", BS, 2, e, 3), NF_CODEC_OK);
	ck_assert_int_eq(nf_geometry_init(&g, "q4_g64_fp16", RS, 2, d, 2),
			 NF_CODEC_DIVISORS_NOT_ALLOWED);
	ck_assert_int_eq(nf_geometry_init(&g, "bf16", CT, 2, d, 2),
			 NF_CODEC_DIVISORS_NOT_ALLOWED);
	/* contiguous: rank 0..16 */
	ck_assert_int_eq(nf_geometry_init(&g, "fp32", CT, 0, NULL, 1), NF_CODEC_OK);
	ck_assert_uint_eq(g.bytes, 4);
	ck_assert_uint_eq(g.elements, 1);
	uint64_t r17[17];
	for (int i = 0; i < 17; i++)
		r17[i] = 1;
	ck_assert_int_eq(nf_geometry_init(&g, "fp32", CT, 16, r17, 1), NF_CODEC_OK);
	ck_assert_int_eq(nf_geometry_init(&g, "fp32", CT, 17, r17, 1), NF_CODEC_BAD_SHAPE);
	/* overflow */
	uint64_t big[2] = {UINT64_MAX / 2, 4};
	ck_assert_int_eq(nf_geometry_init(&g, "fp32", CT, 2, big, 1), NF_CODEC_OVERFLOW);
	ck_assert_int_eq(nf_geometry_init(&g, "q8_g32_fp16", RS, 2, big, 1), NF_CODEC_OVERFLOW);
	uint64_t big2[2] = {1, UINT64_MAX - 5};
	ck_assert_int_eq(nf_geometry_init(&g, "q4_g64_fp16", RS, 2, big2, 1), NF_CODEC_OVERFLOW);
	ck_assert_int_eq(nf_geometry_init(&g, "fp8_e4m3fn_row_bf16", RSC, 2, big2, 1),
			 NF_CODEC_OVERFLOW);
	uint64_t big3[2] = {UINT64_MAX / 128 * 128, 1ull << 62};
	ck_assert_int_eq(nf_geometry_init(&g, "nvfp4", BS, 2, big3, 1), NF_CODEC_OVERFLOW);
	ck_assert_int_eq(nf_geometry_output_dtype(&g, NF_DTYPE_BF16), NF_DTYPE_BF16);
	uint64_t one[1] = {5};
	nf_geometry_init(&g, "int32", CT, 1, one, 1);
	ck_assert_int_eq(nf_geometry_output_dtype(&g, NF_DTYPE_BF16), NF_DTYPE_I32);
}
END_TEST

/* codecs §2.9, §12.3 of the seed */
START_TEST(test_sizes_row_split)
{
	static const uint64_t shapes[8][2] = {{1, 1}, {1, 64}, {2, 65}, {3, 100}, {2, 130},
					      {4, 256}, {7168, 5120}, {14336, 5120}};
	static const uint64_t want[8][6] = {
		{260, 260, 516, 516, 264, 258},
		{260, 260, 516, 516, 264, 258},
		{264, 264, 520, 520, 272, 260},
		{268, 268, 524, 524, 536, 262},
		{272, 272, 528, 528, 544, 264},
		{288, 544, 800, 800, 1088, 272},
		{10321920, 19496960, 24084480, 28672000, 38993920, 9748480},
		{20643840, 38993920, 48168960, 57344000, 77987840, 19496960},
	};
	for (int s = 0; s < 8; s++)
		for (int f = 0; f < 6; f++)
			ck_assert_msg(size_of(rs_formats[f], RS, shapes[s][0], shapes[s][1], 1) ==
					      want[s][f],
				      "%s [%llu,%llu]", rs_formats[f],
				      (unsigned long long)shapes[s][0],
				      (unsigned long long)shapes[s][1]);
	struct nf_geometry g;
	geom(&g, "q5_g64_fp16", RS, 2, 130, 1);
	ck_assert_uint_eq(g.k_pad, 256);
	ck_assert_uint_eq(g.gpr, 4);
	ck_assert_uint_eq(g.nplanes, 3);
	ck_assert_str_eq(g.planes[0].name, "base");
	ck_assert_uint_eq(g.planes[0].length, 256);
	ck_assert_str_eq(g.planes[1].name, "high");
	ck_assert_uint_eq(g.planes[1].offset, 256);
	ck_assert_uint_eq(g.planes[1].length, 64);
	ck_assert_str_eq(g.planes[2].name, "scales");
	ck_assert_uint_eq(g.planes[2].offset, 512);
	ck_assert_uint_eq(g.planes[2].length, 16);
	geom(&g, "q5_g64_fp16", RS, 7168, 5120, 1);
	ck_assert_uint_eq(g.gpr, 80);
	ck_assert_uint_eq(g.planes[0].length, 18350080);
	ck_assert_uint_eq(g.planes[1].length, 4587520);
	ck_assert_uint_eq(g.planes[2].offset, 22937600);
	ck_assert_uint_eq(g.planes[2].length, 1146880);
	geom(&g, "q8_g32_fp16", RS, 3, 100, 1);
	ck_assert_uint_eq(g.gpr, 4);
	ck_assert_uint_eq(g.nplanes, 2);
	ck_assert_uint_eq(g.planes[0].length, 384);
	ck_assert_uint_eq(g.planes[1].offset, 512);
	ck_assert_uint_eq(g.bytes, 536);
}
END_TEST

START_TEST(test_sizes_other)
{
	struct nf_geometry g;
	/* codecs §3.7 */
	geom(&g, "nvfp4", BS, 128, 64, 1);
	ck_assert_uint_eq(g.planes[0].length, 4096);
	ck_assert_uint_eq(g.planes[1].offset, 4096);
	ck_assert_uint_eq(g.planes[1].length, 512);
	ck_assert_uint_eq(g.planes[2].offset, 4608);
	ck_assert_uint_eq(g.bytes, 4612);
	ck_assert_str_eq(g.planes[2].name, "divisors");
	ck_assert_uint_eq(size_of("nvfp4", BS, 128, 128, 1), 9220);
	geom(&g, "nvfp4", BS, 256, 64, 2);
	ck_assert_uint_eq(g.planes[2].offset, 9216);
	ck_assert_uint_eq(g.bytes, 9224);
	geom(&g, "nvfp4", BS, 14336, 5120, 1);
	ck_assert_uint_eq(g.planes[1].offset, 36700160);
	ck_assert_uint_eq(g.planes[1].length, 4587520);
	ck_assert_uint_eq(g.planes[2].offset, 41287680);
	ck_assert_uint_eq(g.bytes, 41287684);
	ck_assert_uint_eq(size_of("nvfp4", BS, 14336, 5120, 2), 41287688);
	/* codecs §4.4 */
	const char *fp8 = "fp8_e4m3fn_row_bf16";
	ck_assert_uint_eq(size_of(fp8, RSC, 1, 1, 1), 258);
	ck_assert_uint_eq(size_of(fp8, RSC, 2, 130, 1), 516);
	ck_assert_uint_eq(size_of(fp8, RSC, 3, 100, 1), 518);
	geom(&g, fp8, RSC, 14336, 5120, 1);
	ck_assert_uint_eq(g.planes[1].offset, 73400320);
	ck_assert_uint_eq(g.bytes, 73428992);
	/* codecs §1 */
	uint64_t s[2] = {130, 130}, k[1] = {5120};
	ck_assert_int_eq(nf_geometry_init(&g, "bf16", CT, 2, s, 1), NF_CODEC_OK);
	ck_assert_uint_eq(g.bytes, 33800);
	ck_assert_int_eq(nf_geometry_init(&g, "int32", CT, 1, k, 1), NF_CODEC_OK);
	ck_assert_uint_eq(g.bytes, 20480);
	ck_assert_str_eq(g.planes[0].name, "data");
	uint64_t zero[2] = {0, 7};
	ck_assert_int_eq(nf_geometry_init(&g, "bf16", CT, 2, zero, 1), NF_CODEC_OK);
	ck_assert_uint_eq(g.bytes, 0);
}
END_TEST

/* ---------- primitives ---------- */

START_TEST(test_primitives)
{
	static const struct { uint16_t h; float v; } f16[] = {
		{0x3C00, 1.0f}, {0x3800, 0.5f}, {0xBC00, -1.0f}, {0x2800, 1.0f / 32},
		{0x1C00, 1.0f / 256}, {0x7BFF, 65504.0f}, {0x0400, 0x1p-14f}, {0x0001, 0x1p-24f},
		{0x03FF, 1023 * 0x1p-24f}, {0x7C00, INFINITY}, {0xFC00, -INFINITY}};
	for (unsigned i = 0; i < sizeof f16 / sizeof f16[0]; i++)
		ck_assert_uint_eq(fbits(nf_f16_to_f32(f16[i].h)), fbits(f16[i].v));
	ck_assert_uint_eq(fbits(nf_f16_to_f32(0x8000)), 0x80000000u);
	ck_assert_uint_eq(fbits(nf_f16_to_f32(0x0000)), 0u);
	ck_assert(isnan(nf_f16_to_f32(0x7E00)));
	ck_assert(isnan(nf_f16_to_f32(0x7C01)));
	/* every f16 word against the independent formula */
	for (uint32_t h = 0; h < 65536; h++) {
		float a = nf_f16_to_f32((uint16_t)h), b = ref_f16((uint16_t)h);
		if (isnan(b))
			ck_assert(isnan(a));
		else
			ck_assert_msg(fbits(a) == fbits(b), "f16 %04x", h);
	}
	ck_assert_float_eq(nf_bf16_to_f32(0x3F80), 1.0f);
	ck_assert_float_eq(nf_bf16_to_f32(0xBF80), -1.0f);
	ck_assert_float_eq(nf_bf16_to_f32(0x4040), 3.0f);
	ck_assert_uint_eq(fbits(nf_bf16_to_f32(0x7FC1)), 0x7FC10000u); /* payload kept */
	ck_assert_uint_eq(fbits(nf_bf16_to_f32(0x0001)), 0x00010000u); /* subnormal */
	/* E4M3FN: all 256 */
	for (unsigned b = 0; b < 256; b++) {
		float a = nf_e4m3fn_to_f32((uint8_t)b), r = ref_e4m3((uint8_t)b);
		if ((b & 0x7F) == 0x7F)
			ck_assert_msg(isnan(a), "e4m3 %02x", b);
		else
			ck_assert_msg(fbits(a) == fbits(r), "e4m3 %02x: %g vs %g", b, (double)a,
				      (double)r);
	}
	ck_assert_uint_eq(fbits(nf_e4m3fn_to_f32(0x80)), 0x80000000u);
	ck_assert_float_eq(nf_e4m3fn_to_f32(0x01), 0.001953125f);
	ck_assert_float_eq(nf_e4m3fn_to_f32(0x07), 0.013671875f);
	ck_assert_float_eq(nf_e4m3fn_to_f32(0x08), 0x1p-6f);
	ck_assert_float_eq(nf_e4m3fn_to_f32(0x38), 1.0f);
	ck_assert_float_eq(nf_e4m3fn_to_f32(0x40), 2.0f);
	ck_assert_float_eq(nf_e4m3fn_to_f32(0x78), 256.0f);
	ck_assert_float_eq(nf_e4m3fn_to_f32(0x7E), 448.0f);
	ck_assert_float_eq(nf_e4m3fn_to_f32(0xFE), -448.0f);
	/* E2M1: all 16 */
	static const float e2[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
	for (unsigned c = 0; c < 16; c++)
		ck_assert_uint_eq(fbits(nf_e2m1_to_f32((uint8_t)c)), fbits(e2[c]));
	ck_assert_uint_eq(fbits(nf_e2m1_to_f32(8)), 0x80000000u);
}
END_TEST

/* ---------- conversions ---------- */

START_TEST(test_conversions)
{
	static const struct { uint32_t f; uint16_t bf, h; } v[] = {
		{0x3F800000, 0x3F80, 0x3C00},             /* 1 */
		{0x80000000, 0x8000, 0x8000},             /* -0 */
		{0x00000000, 0x0000, 0x0000},
		{0x3F808000, 0x3F80, 0x3C04},             /* bf16 tie -> even (down) */
		{0x3F818000, 0x3F82, 0x3C0C},             /* bf16 tie -> even (up) */
		{0x3F808001, 0x3F81, 0x3C04},             /* above tie */
		{0x3F801000, 0x3F80, 0x3C00},             /* f16 tie 1+2^-11 -> even 1.0 */
		{0x3F803000, 0x3F80, 0x3C02},             /* f16 tie 1+3*2^-11 -> up */
		{0x477FE000, 0x4780, 0x7BFF},             /* 65504 */
		{0x477FEFFF, 0x4780, 0x7BFF},             /* just below 65520 */
		{0x477FF000, 0x4780, 0x7C00},             /* 65520 -> inf (f16) */
		{0x47800000, 0x4780, 0x7C00},             /* 65536 */
		{0x7F7FFFFF, 0x7F80, 0x7C00},             /* FLT_MAX -> inf both */
		{0xFF7FFFFF, 0xFF80, 0xFC00},
		{0x7F800000, 0x7F80, 0x7C00},             /* inf */
		{0xFF800000, 0xFF80, 0xFC00},
		{0x33800000, 0x3380, 0x0001},             /* 2^-24 */
		{0x33000000, 0x3300, 0x0000},             /* 2^-25: tie -> 0 */
		{0x33400000, 0x3340, 0x0001},             /* 1.5*2^-25 -> 2^-24 */
		{0x33C00000, 0x33C0, 0x0002},             /* 1.5*2^-24: tie -> 2 */
		{0x387FC000, 0x3880, 0x03FF},             /* 1023*2^-24 */
		{0x387FE000, 0x3880, 0x0400},             /* tie between max subnormal and 2^-14 */
		{0x38800000, 0x3880, 0x0400},             /* 2^-14 */
		{0xB8800000, 0xB880, 0x8400},
		{0x00000001, 0x0000, 0x0000},             /* f32 denormal */
		{0x80000001, 0x8000, 0x8000},
		{0x00010000, 0x0001, 0x0000},             /* bf16 subnormal kept */
		{0x7FC00000, 0x7FC0, 0x7E00},             /* qNaN */
		{0xFFC00000, 0xFFC0, 0xFE00},
		{0x7F800001, 0x7FC0, 0x7E00},             /* sNaN, payload only in low bits */
		{0x7FA00000, 0x7FE0, 0x7F00},             /* sNaN with payload -> quiet */
	};
	for (unsigned i = 0; i < sizeof v / sizeof v[0]; i++) {
		float f = bitsf(v[i].f);
		ck_assert_msg(nf_f32_to_bf16_one(f) == v[i].bf, "bf16 of %08x: %04x", v[i].f,
			      nf_f32_to_bf16_one(f));
		ck_assert_msg(nf_f32_to_f16_one(f) == v[i].h, "f16 of %08x: %04x", v[i].f,
			      nf_f32_to_f16_one(f));
		uint16_t o1, o2;
		nf_f32_to_bf16(&f, &o1, 1);
		nf_f32_to_f16(&f, &o2, 1);
		ck_assert_uint_eq(o1, v[i].bf);
		ck_assert_uint_eq(o2, v[i].h);
	}
	/* f16 round trip: every finite f16 survives f16 -> f32 -> f16 */
	for (uint32_t h = 0; h < 65536; h++) {
		if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF))
			continue;
		ck_assert_uint_eq(nf_f32_to_f16_one(nf_f16_to_f32((uint16_t)h)), h);
		ck_assert_uint_eq(nf_f32_to_bf16_one(nf_bf16_to_f32((uint16_t)h)), h);
	}
	/* f16 RNE against a double-precision reference on random inputs */
	for (int i = 0; i < 200000; i++) {
		float f = bitsf((uint32_t)rnd());
		if (isnan(f) || fabsf(f) >= 65520.0f)
			continue;
		uint16_t h = nf_f32_to_f16_one(f);
		double x = f, got = ref_f16(h);
		/* no f16 value is strictly closer; on a tie the result is even */
		uint16_t nb = (uint16_t)(h + 1), pb = (uint16_t)(h - 1);
		if ((nb & 0x7C00) != 0x7C00 && (nb & 0x7FFF) != 0) {
			double d = fabs(ref_f16(nb) - x), dg = fabs(got - x);
			ck_assert(dg < d || (dg == d && (h & 1) == 0));
		}
		if ((h & 0x7FFF) != 0 && (pb & 0x7FFF) != 0x7FFF) {
			double d = fabs(ref_f16(pb) - x), dg = fabs(got - x);
			ck_assert(dg < d || (dg == d && (h & 1) == 0));
		}
	}
}
END_TEST

/* ---------- byte vectors (codecs §2.8) ---------- */

/* Decode element 0..n-1 of a one-row object whose first base byte(s),
 * high byte(s) and first scale word are given; the rest is zero. */
static void one_group(const char *fmt, const uint8_t *base, size_t nb, const uint8_t *high,
		      size_t nh, uint16_t scale, uint64_t K, float *out, uint64_t n)
{
	struct nf_geometry g;
	geom(&g, fmt, RS, 1, K, 1);
	uint8_t *obj = calloc(1, g.bytes);
	memcpy(obj, base, nb);
	if (nh)
		memcpy(obj + g.planes[1].offset, high, nh);
	nf_wr16(obj + g.planes[g.nplanes - 1].offset, scale);
	ck_assert_int_eq(decode_via_spans(&g, obj, 0, n, NF_DTYPE_F32, out, NF_ISA_SCALAR), 0);
	float *o2 = malloc(n * 4);
	for (int isa = NF_ISA_AUTO; isa <= NF_ISA_AVX2; isa++) {
		ck_assert_int_eq(decode_via_spans(&g, obj, 0, n, NF_DTYPE_F32, o2, isa), 0);
		assert_same_bits(out, o2, n, fmt);
	}
	free(o2);
	free(obj);
}

START_TEST(test_byte_vectors)
{
	float o[4];
	uint8_t b;
	b = 0x78;
	one_group("q4_g64_fp16", &b, 1, NULL, 0, 0x3800, 64, o, 2);
	ck_assert_float_eq(o[0], -4.0f);
	ck_assert_float_eq(o[1], 3.5f);
	one_group("q4_g64_fp16", &b, 1, NULL, 0, 0x3C00, 64, o, 2);
	ck_assert_float_eq(o[0], -8.0f);
	ck_assert_float_eq(o[1], 7.0f);
	b = 0xF0;
	uint8_t h = 0x01;
	one_group("q5_g64_fp16", &b, 1, &h, 1, 0x3C00, 64, o, 2);
	ck_assert_float_eq(o[0], -16.0f);
	ck_assert_float_eq(o[1], 15.0f);
	h = 0x06;
	one_group("q6_g64_fp16", &b, 1, &h, 1, 0x3C00, 64, o, 2);
	ck_assert_float_eq(o[0], -32.0f);
	ck_assert_float_eq(o[1], 31.0f);
	uint8_t q8[2] = {0x81, 0x7F};
	one_group("q8_g32_fp16", q8, 2, NULL, 0, 0x3C00, 32, o, 2);
	ck_assert_float_eq(o[0], -127.0f);
	ck_assert_float_eq(o[1], 127.0f);
	q8[0] = 0x80; /* illegal, decoded as two's complement (codecs §8.2) */
	one_group("q8_g32_fp16", q8, 2, NULL, 0, 0x3C00, 32, o, 1);
	ck_assert_float_eq(o[0], -128.0f);
	b = 0xE4;
	one_group("q2_g64_fp16", &b, 1, NULL, 0, 0x3C00, 64, o, 4);
	ck_assert_float_eq(o[0], -1.0f);
	ck_assert_float_eq(o[1], 0.0f);
	ck_assert_float_eq(o[2], 1.0f);
	ck_assert_float_eq(o[3], 2.0f);
	one_group("q2_g64_fp16", &b, 1, NULL, 0, 0x3800, 64, o, 4);
	ck_assert_float_eq(o[0], -0.5f);
	ck_assert_float_eq(o[1], 0.0f);
	ck_assert_float_eq(o[2], 0.5f);
	ck_assert_float_eq(o[3], 1.0f);
	b = 0x54;
	one_group("q2_g64_fp16", &b, 1, NULL, 0, 0x3C00, 64, o, 4);
	ck_assert_float_eq(o[0], -1.0f);
	ck_assert_float_eq(o[1], 0.0f);
	ck_assert_float_eq(o[2], 0.0f);
	ck_assert_float_eq(o[3], 0.0f);
	b = 0x4D;
	one_group("t2_g128_fp16", &b, 1, NULL, 0, 0x3C00, 128, o, 4);
	ck_assert_float_eq(o[0], 1.0f);
	ck_assert_float_eq(o[1], -1.0f);
	ck_assert_float_eq(o[2], 0.0f);
	ck_assert_float_eq(o[3], 1.0f);
	b = 0x02; /* t2 0b10 illegal -> -2 (codecs §8.2) */
	one_group("t2_g128_fp16", &b, 1, NULL, 0, 0x3C00, 128, o, 1);
	ck_assert_float_eq(o[0], -2.0f);
	/* negative scale decoded as stored (codecs §2.5 [A]) */
	b = 0x78;
	one_group("q4_g64_fp16", &b, 1, NULL, 0, 0xBC00, 64, o, 2);
	ck_assert_float_eq(o[0], 8.0f);
	ck_assert_float_eq(o[1], -7.0f);
}
END_TEST

/* codecs §2.8: the q2 [2,65] 264-byte reference object */
START_TEST(test_q2_reference_object)
{
	uint8_t want[264] = {0};
	for (int r = 0; r < 2; r++) {
		memset(want + 32 * r, 0xE4, 16);
		want[32 * r + 16] = 0x54;
		memset(want + 32 * r + 17, 0x55, 15);
	}
	nf_wr16(want + 256, 0x3800);
	nf_wr16(want + 258, 0xBC00);
	nf_wr16(want + 260, 0x0001);
	nf_wr16(want + 262, 0x8000);

	struct nf_geometry g;
	geom(&g, "q2_g64_fp16", RS, 2, 65, 1);
	ck_assert_uint_eq(g.bytes, 264);
	int32_t codes[130];
	for (int r = 0; r < 2; r++) {
		for (int c = 0; c < 64; c++)
			codes[r * 65 + c] = c % 4 - 1;
		codes[r * 65 + 64] = -1;
	}
	uint16_t scales[4] = {0x3800, 0xBC00, 0x0001, 0x8000};
	uint8_t got[264];
	memset(got, 0xAA, sizeof got);
	ck_assert_int_eq(nf_encode_codes(&g, codes, scales, NULL, got), 0);
	ck_assert_mem_eq(got, want, 264);
	struct nf_violation v;
	ck_assert(nf_check_invariants(&g, want, &v));

	for (int isa = NF_ISA_SCALAR; isa <= NF_ISA_AVX2; isa++) {
		float *o = decode_all(&g, want, isa);
		static const float cyc0[4] = {-0.5f, 0.0f, 0.5f, 1.0f};
		for (int c = 0; c < 64; c++) {
			ck_assert_uint_eq(fbits(o[c]), fbits(cyc0[c % 4]));
			float r1 = (float)(c % 4 - 1) * 0x1p-24f;
			ck_assert_uint_eq(fbits(o[65 + c]), fbits(r1));
		}
		ck_assert_uint_eq(fbits(o[64]), fbits(1.0f));
		ck_assert_uint_eq(fbits(o[129]), fbits(0.0f)); /* (-1)*(-0.0) = +0 */
		free(o);
	}
}
END_TEST

/* ---------- every legal code of each row_split format ---------- */

START_TEST(test_all_codes_row_split)
{
	for (int f = 0; f < 6; f++) {
		int n = rs_hi[f] - rs_lo[f] + 1;
		struct nf_geometry g;
		geom(&g, rs_formats[f], RS, 1, (uint64_t)n, 1);
		int32_t *codes = malloc(n * sizeof *codes);
		uint16_t sc[8];
		for (int i = 0; i < n; i++)
			codes[i] = rs_lo[f] + i;
		for (int i = 0; i < 8; i++)
			sc[i] = 0x3A00; /* 0.75 */
		uint8_t *obj = malloc(g.bytes);
		ck_assert_int_eq(nf_encode_codes(&g, codes, sc, NULL, obj), 0);
		ck_assert(nf_check_invariants(&g, obj, NULL));
		float *o = decode_all(&g, obj, NF_ISA_AUTO);
		for (int i = 0; i < n; i++)
			ck_assert_msg(o[i] == (float)codes[i] * 0.75f, "%s code %d", rs_formats[f],
				      codes[i]);
		free(o);
		free(obj);
		free(codes);
	}
}
END_TEST

/* ---------- random round trips ---------- */

struct rs_case {
	struct nf_geometry g;
	int32_t *codes;
	uint16_t *scales;
	uint8_t *obj;
	float *want;
};

static uint16_t rnd_f16_finite(void)
{
	for (;;) {
		uint16_t h = (uint16_t)rnd();
		if ((h & 0x7C00) != 0x7C00)
			return h;
	}
}

static void make_rs(struct rs_case *c, int f, uint64_t N, uint64_t K, int allow_illegal)
{
	geom(&c->g, rs_formats[f], RS, N, K, 1);
	uint64_t lg = (K + c->g.group - 1) / c->g.group;
	c->codes = malloc(N * K * sizeof *c->codes);
	c->scales = malloc(N * lg * 2);
	c->obj = malloc(c->g.bytes);
	c->want = malloc(N * K * 4);
	int lo = rs_lo[f] - (allow_illegal && (f == 4 || f == 5) ? 1 : 0);
	for (uint64_t i = 0; i < N * lg; i++)
		c->scales[i] = rnd_f16_finite();
	for (uint64_t i = 0; i < N * K; i++) {
		c->codes[i] = rnd_range(lo, rs_hi[f]);
		uint64_t n = i / K, gi = i % K / c->g.group;
		c->want[i] = (float)c->codes[i] * ref_f16(c->scales[n * lg + gi]);
	}
	ck_assert_int_eq(nf_encode_codes(&c->g, c->codes, c->scales, NULL, c->obj), 0);
}

static void free_rs(struct rs_case *c)
{
	free(c->codes);
	free(c->scales);
	free(c->obj);
	free(c->want);
}

START_TEST(test_round_trip_row_split)
{
	static const uint64_t shapes[][2] = {{1, 1}, {1, 31}, {1, 32}, {1, 33}, {1, 64},
					     {2, 65}, {3, 100}, {2, 130}, {4, 256}, {5, 127},
					     {3, 129}, {7, 200}, {2, 1000}, {17, 320}};
	for (int f = 0; f < 6; f++)
		for (unsigned s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
			struct rs_case c;
			make_rs(&c, f, shapes[s][0], shapes[s][1], 1);
			for (int isa = NF_ISA_SCALAR; isa <= NF_ISA_AVX2; isa++) {
				float *o = decode_all(&c.g, c.obj, isa);
				assert_same_bits(o, c.want, c.g.elements, rs_formats[f]);
				free(o);
			}
			free_rs(&c);
		}
}
END_TEST

/* Padding canonical (codecs §2.4) and never in output. */
START_TEST(test_padding)
{
	for (int f = 0; f < 6; f++) {
		struct rs_case c;
		make_rs(&c, f, 3, 65, 0);
		const struct nf_geometry *g = &c.g;
		uint8_t padbyte = f == 0 ? 0x55 : 0x00;
		/* lanes 65..k_pad-1 of each row: bytes wholly made of pad lanes */
		for (uint64_t n = 0; n < 3; n++) {
			uint64_t lanes_per_byte = f == 0 || f == 5 ? 4 : f == 4 ? 1 : 2;
			uint64_t row0 = n * g->gpr * g->base_bytes_per_group;
			uint64_t first_pad_byte = (65 + lanes_per_byte - 1) / lanes_per_byte;
			/* map column -> byte within the row's base (groups contiguous) */
			for (uint64_t bb = first_pad_byte; bb < g->gpr * g->base_bytes_per_group; bb++)
				ck_assert_msg(c.obj[row0 + bb] == padbyte, "%s row %llu byte %llu: %02x",
					      rs_formats[f], (unsigned long long)n,
					      (unsigned long long)bb, c.obj[row0 + bb]);
			/* scales of whole padding groups are 0x0000 */
			uint64_t lg = (65 + g->group - 1) / g->group;
			for (uint64_t gi = lg; gi < g->gpr; gi++)
				ck_assert_uint_eq(nf_rd16(c.obj + g->planes[g->nplanes - 1].offset +
							  2 * (n * g->gpr + gi)), 0);
			if (g->high_bytes_per_group) {
				const uint8_t *hp = c.obj + g->planes[1].offset +
						    n * g->gpr * g->high_bytes_per_group;
				uint64_t hlanes = f == 2 ? 8 : 4;
				for (uint64_t bb = (65 + hlanes - 1) / hlanes;
				     bb < g->gpr * g->high_bytes_per_group; bb++)
					ck_assert_uint_eq(hp[bb], 0);
			}
		}
		/* gaps are zero */
		ck_assert(nf_check_invariants(g, c.obj, NULL) || f == 4 || f == 5);
		/* output has exactly N*K elements, equal to the logical values */
		float *o = decode_all(g, c.obj, NF_ISA_AUTO);
		assert_same_bits(o, c.want, 3 * 65, "padding");
		free(o);
		free_rs(&c);
	}
}
END_TEST

/* Every sub-range [b,e) equals the slice of a whole decode (exhaustive). */
static void exhaustive_ranges(const struct nf_geometry *g, const uint8_t *obj)
{
	float *all = decode_all(g, obj, NF_ISA_SCALAR);
	float *part = malloc(g->elements * 4 + 4);
	for (uint64_t b = 0; b <= g->elements; b++)
		for (uint64_t e = b; e <= g->elements; e++) {
			int isa = (int)((b + e) % 3) + NF_ISA_SCALAR;
			ck_assert_int_eq(decode_via_spans(g, obj, b, e, NF_DTYPE_F32, part, isa), 0);
			for (uint64_t i = b; i < e; i++)
				ck_assert_msg(fbits(part[i - b]) == fbits(all[i]),
					      "%s [%llu,%llu) @%llu", nf_format_name(g->format),
					      (unsigned long long)b, (unsigned long long)e,
					      (unsigned long long)i);
		}
	free(all);
	free(part);
}

START_TEST(test_subranges_row_split)
{
	for (int f = 0; f < 6; f++) {
		struct rs_case c;
		make_rs(&c, f, 3, 70, 1);
		exhaustive_ranges(&c.g, c.obj);
		free_rs(&c);
	}
}
END_TEST

/* ---------- nvfp4 ---------- */

START_TEST(test_nvfp4_swizzle)
{
	static const struct { uint64_t n, g, K, off; } t[] = {
		{0, 0, 64, 0}, {1, 0, 64, 16}, {32, 0, 64, 4}, {33, 3, 64, 23},
		{127, 3, 64, 511}, {0, 4, 128, 512}, {128, 4, 128, 1536}, {200, 5, 128, 1673}};
	for (unsigned i = 0; i < 8; i++) {
		struct nf_geometry g;
		geom(&g, "nvfp4", BS, 256, t[i].K, 1);
		int32_t *codes = calloc(g.elements, sizeof *codes);
		uint8_t *scales = calloc(g.elements / 16, 1);
		scales[t[i].n * (t[i].K / 16) + t[i].g] = 0x38;
		uint8_t *obj = malloc(g.bytes);
		ck_assert_int_eq(nf_encode_codes(&g, codes, scales, NULL, obj), 0);
		for (uint64_t o = 0; o < g.planes[1].length; o++)
			ck_assert_uint_eq(obj[g.planes[1].offset + o], o == t[i].off ? 0x38 : 0);
		free(codes);
		free(scales);
		free(obj);
	}
}
END_TEST

struct nv_case {
	struct nf_geometry g;
	int32_t *codes;
	uint8_t *scales;
	float *divs;
	uint8_t *obj;
	float *want;
};

static void make_nv(struct nv_case *c, uint64_t N, uint64_t K, uint64_t D, int wild)
{
	geom(&c->g, "nvfp4", BS, N, K, D);
	c->codes = malloc(N * K * sizeof *c->codes);
	c->scales = malloc(N * K / 16);
	c->divs = malloc(D * sizeof *c->divs);
	c->obj = malloc(c->g.bytes);
	c->want = malloc(N * K * 4);
	for (uint64_t i = 0; i < D; i++)
		c->divs[i] = wild ? bitsf((uint32_t)rnd()) : (float)rnd_range(1, 1000) / 7.0f;
	for (uint64_t i = 0; i < N * K / 16; i++)
		c->scales[i] = wild ? (uint8_t)rnd() : (uint8_t)rnd_range(0, 0x7E);
	for (uint64_t i = 0; i < N * K; i++) {
		c->codes[i] = rnd_range(0, 15);
		float p = ref_e2m1((unsigned)c->codes[i]) * ref_e4m3(c->scales[i / 16]);
		c->want[i] = p / c->divs[i / K / (N / D)];
	}
	ck_assert_int_eq(nf_encode_codes(&c->g, c->codes, c->scales, c->divs, c->obj), 0);
}

static void free_nv(struct nv_case *c)
{
	free(c->codes);
	free(c->scales);
	free(c->divs);
	free(c->obj);
	free(c->want);
}

START_TEST(test_nvfp4_values)
{
	/* codecs §3.7 value examples */
	static const struct { uint8_t code, scale; float d, want; } v[] = {
		{0x7, 0x38, 2.0f, 3.0f}, {0xF, 0x40, 0.5f, -24.0f}, {0x1, 0x01, 4.0f, 0x1p-12f}};
	for (int i = 0; i < 3; i++) {
		struct nf_geometry g;
		geom(&g, "nvfp4", BS, 128, 64, 1);
		int32_t *codes = calloc(g.elements, sizeof *codes);
		uint8_t *sc = calloc(g.elements / 16, 1);
		codes[0] = v[i].code;
		codes[1] = v[i].code;
		sc[0] = v[i].scale;
		uint8_t *obj = malloc(g.bytes);
		ck_assert_int_eq(nf_encode_codes(&g, codes, sc, &v[i].d, obj), 0);
		float o[2];
		for (int isa = NF_ISA_SCALAR; isa <= NF_ISA_AVX2; isa++) {
			ck_assert_int_eq(decode_via_spans(&g, obj, 0, 2, NF_DTYPE_F32, o, isa), 0);
			ck_assert_float_eq(o[0], v[i].want);
			ck_assert_float_eq(o[1], v[i].want);
			ck_assert_int_eq(decode_via_spans(&g, obj, 1, 2, NF_DTYPE_F32, o, isa), 0);
			ck_assert_float_eq(o[0], v[i].want);
		}
		free(codes);
		free(sc);
		free(obj);
	}
	/* division, not reciprocal multiply: 3 * 1/3 differs from 3/3 in f32?
	 * pick p and d where p*(1/d) != p/d */
	float p = 6.0f * 448.0f, d = 3.0f;
	ck_assert(p / d == 896.0f);
}
END_TEST

START_TEST(test_nvfp4_round_trip)
{
	static const uint64_t shapes[][3] = {{128, 64, 1}, {128, 128, 1}, {256, 64, 2},
					     {384, 192, 3}, {512, 64, 4}, {256, 320, 1}};
	for (unsigned s = 0; s < 6; s++)
		for (int wild = 0; wild < 2; wild++) {
			struct nv_case c;
			make_nv(&c, shapes[s][0], shapes[s][1], shapes[s][2], wild);
			for (int isa = NF_ISA_SCALAR; isa <= NF_ISA_AVX2; isa++) {
				float *o = decode_all(&c.g, c.obj, isa);
				for (uint64_t i = 0; i < c.g.elements; i++) {
					if (isnan(c.want[i]) && wild)
						ck_assert(isnan(o[i]));
					else
						ck_assert_msg(fbits(o[i]) == fbits(c.want[i]),
							      "nvfp4 %u el %llu", s,
							      (unsigned long long)i);
				}
				free(o);
			}
			free_nv(&c);
		}
	/* divisors > 1 pick divisor[row/(N/D)] */
	struct nv_case c;
	make_nv(&c, 384, 64, 3, 0);
	c.divs[0] = 1.0f;
	c.divs[1] = 2.0f;
	c.divs[2] = 4.0f;
	for (uint64_t i = 0; i < c.g.elements; i++) {
		c.codes[i] = 2; /* 1.0 */
		c.scales[i / 16] = 0x38;
	}
	ck_assert_int_eq(nf_encode_codes(&c.g, c.codes, c.scales, c.divs, c.obj), 0);
	float *o = decode_all(&c.g, c.obj, NF_ISA_AUTO);
	ck_assert_float_eq(o[0], 1.0f);
	ck_assert_float_eq(o[127 * 64 + 63], 1.0f);
	ck_assert_float_eq(o[128 * 64], 0.5f);
	ck_assert_float_eq(o[255 * 64 + 5], 0.5f);
	ck_assert_float_eq(o[256 * 64], 0.25f);
	ck_assert_float_eq(o[383 * 64 + 63], 0.25f);
	free(o);
	ck_assert_uint_eq(nf_rd32(c.obj + c.g.planes[2].offset + 4), fbits(2.0f));
	free_nv(&c);
}
END_TEST

START_TEST(test_subranges_nvfp4)
{
	/* exhaustive over a small range set: all [b,e) within a window that
	 * crosses rows, blocks and a tile-row boundary */
	struct nv_case c;
	make_nv(&c, 256, 64, 2, 0);
	float *all = decode_all(&c.g, c.obj, NF_ISA_SCALAR);
	float *part = malloc(c.g.elements * 4);
	for (uint64_t b = 127 * 64 - 40; b <= 128 * 64 + 40; b++)
		for (uint64_t e = b; e <= 128 * 64 + 90; e++) {
			int isa = (int)((b + e) % 3) + NF_ISA_SCALAR;
			ck_assert_int_eq(decode_via_spans(&c.g, c.obj, b, e, NF_DTYPE_F32, part, isa), 0);
			for (uint64_t i = b; i < e; i++)
				ck_assert(fbits(part[i - b]) == fbits(all[i]));
		}
	for (int i = 0; i < 2000; i++) {
		uint64_t b = rnd() % (c.g.elements + 1), e = rnd() % (c.g.elements + 1);
		if (b > e) {
			uint64_t t = b;
			b = e;
			e = t;
		}
		ck_assert_int_eq(decode_via_spans(&c.g, c.obj, b, e, NF_DTYPE_F32, part, NF_ISA_AUTO), 0);
		for (uint64_t j = b; j < e; j++)
			ck_assert(fbits(part[j - b]) == fbits(all[j]));
	}
	free(all);
	free(part);
	free_nv(&c);
}
END_TEST

/* ---------- fp8 ---------- */

START_TEST(test_fp8)
{
	/* codecs §4.4 value example and every code with a known scale */
	struct nf_geometry g;
	geom(&g, "fp8_e4m3fn_row_bf16", RSC, 2, 256, 1);
	int32_t codes[512];
	for (int i = 0; i < 512; i++)
		codes[i] = i % 256;
	uint16_t sc[2] = {0x3F80, 0x4040}; /* 1.0, 3.0 */
	uint8_t *obj = malloc(g.bytes);
	ck_assert_int_eq(nf_encode_codes(&g, codes, sc, NULL, obj), 0);
	for (int isa = NF_ISA_SCALAR; isa <= NF_ISA_AVX2; isa++) {
		float *o = decode_all(&g, obj, isa);
		ck_assert_float_eq(o[0x40], 2.0f);
		for (int i = 0; i < 512; i++) {
			float w = ref_e4m3((uint8_t)i) * (i < 256 ? 1.0f : 3.0f);
			if (isnan(w))
				ck_assert(isnan(o[i]));
			else
				ck_assert_msg(fbits(o[i]) == fbits(w), "fp8 %d", i);
		}
		free(o);
	}
	free(obj);
	/* random round trips with sub-ranges */
	static const uint64_t shapes[][2] = {{1, 1}, {3, 100}, {2, 130}, {5, 33}, {4, 257}};
	for (unsigned s = 0; s < 5; s++) {
		uint64_t N = shapes[s][0], K = shapes[s][1];
		geom(&g, "fp8_e4m3fn_row_bf16", RSC, N, K, 1);
		int32_t *cd = malloc(N * K * sizeof *cd);
		uint16_t *ss = malloc(N * 2);
		float *want = malloc(N * K * 4);
		obj = malloc(g.bytes);
		for (uint64_t n = 0; n < N; n++)
			ss[n] = (uint16_t)(rnd() & 0x7FFF);
		for (uint64_t i = 0; i < N * K; i++) {
			cd[i] = (int32_t)(rnd() & 0xFF);
			want[i] = ref_e4m3((uint8_t)cd[i]) * ref_bf16(ss[i / K]);
		}
		ck_assert_int_eq(nf_encode_codes(&g, cd, ss, NULL, obj), 0);
		for (int isa = NF_ISA_SCALAR; isa <= NF_ISA_AVX2; isa++) {
			float *o = decode_all(&g, obj, isa);
			for (uint64_t i = 0; i < N * K; i++)
				if (isnan(want[i]))
					ck_assert(isnan(o[i]));
				else
					ck_assert(fbits(o[i]) == fbits(want[i]));
			free(o);
		}
		if (N * K < 300)
			exhaustive_ranges(&g, obj);
		free(cd);
		free(ss);
		free(want);
		free(obj);
	}
}
END_TEST

/* ---------- contiguous ---------- */

START_TEST(test_contiguous)
{
	struct nf_geometry g;
	uint64_t shape[2] = {3, 37};
	ck_assert_int_eq(nf_geometry_init(&g, "bf16", CT, 2, shape, 1), NF_CODEC_OK);
	uint8_t *obj = malloc(g.bytes);
	for (uint64_t i = 0; i < g.bytes; i++)
		obj[i] = (uint8_t)((37 * i + 11) % 251);
	obj[0] = 0x81; /* sNaN-ish bf16 0x7F81 */
	obj[1] = 0x7F;
	exhaustive_ranges(&g, obj);
	float *o = decode_all(&g, obj, NF_ISA_AUTO);
	for (uint64_t i = 0; i < g.elements; i++)
		ck_assert_uint_eq(fbits(o[i]), (uint32_t)nf_rd16(obj + 2 * i) << 16);
	/* bf16 -> bf16 output is the identity */
	uint16_t *o16 = malloc(g.elements * 2);
	ck_assert_int_eq(decode_via_spans(&g, obj, 0, g.elements, NF_DTYPE_BF16, o16, NF_ISA_AUTO), 0);
	ck_assert_mem_eq(o16, obj, g.bytes);
	/* bf16 -> f16 */
	ck_assert_int_eq(decode_via_spans(&g, obj, 0, g.elements, NF_DTYPE_F16, o16, NF_ISA_AUTO), 0);
	for (uint64_t i = 0; i < g.elements; i++)
		ck_assert_uint_eq(o16[i], nf_f32_to_f16_one(o[i]));
	/* int32 as int32 only */
	ck_assert_int_eq(decode_via_spans(&g, obj, 0, 1, NF_DTYPE_I32, o16, NF_ISA_AUTO), -EINVAL);
	free(o);
	free(o16);
	free(obj);

	ck_assert_int_eq(nf_geometry_init(&g, "int32", CT, 2, shape, 1), NF_CODEC_OK);
	int32_t *iv = malloc(g.elements * 4);
	for (uint64_t i = 0; i < g.elements; i++)
		iv[i] = (int32_t)(rnd() & 0xFFFFFFFF);
	obj = malloc(g.bytes);
	ck_assert_int_eq(nf_encode_codes(&g, iv, NULL, NULL, obj), 0);
	int32_t *io = malloc(g.elements * 4);
	ck_assert_int_eq(decode_via_spans(&g, obj, 5, 50, NF_DTYPE_I32, io, NF_ISA_AUTO), 0);
	ck_assert_mem_eq(io, iv + 5, 45 * 4);
	ck_assert_int_eq(decode_via_spans(&g, obj, 0, 1, NF_DTYPE_F32, io, NF_ISA_AUTO), -EINVAL);
	/* nf_encode_f32 of int32 copies the bit patterns */
	uint8_t *obj2 = malloc(g.bytes);
	ck_assert_int_eq(nf_encode_f32(&g, (const float *)iv, obj2), 0);
	ck_assert_mem_eq(obj2, obj, g.bytes);
	free(obj2);
	free(iv);
	free(io);
	free(obj);

	ck_assert_int_eq(nf_geometry_init(&g, "fp32", CT, 2, shape, 1), NF_CODEC_OK);
	float *fv = malloc(g.elements * 4);
	for (uint64_t i = 0; i < g.elements; i++)
		fv[i] = bitsf((uint32_t)rnd());
	obj = malloc(g.bytes);
	ck_assert_int_eq(nf_encode_f32(&g, fv, obj), 0);
	ck_assert_mem_eq(obj, fv, g.bytes);
	exhaustive_ranges(&g, obj);
	uint16_t *h = malloc(g.elements * 2);
	ck_assert_int_eq(decode_via_spans(&g, obj, 0, g.elements, NF_DTYPE_BF16, h, NF_ISA_AUTO), 0);
	for (uint64_t i = 0; i < g.elements; i++)
		ck_assert_uint_eq(h[i], nf_f32_to_bf16_one(fv[i]));
	free(h);
	free(fv);
	free(obj);

	/* rank 0 */
	ck_assert_int_eq(nf_geometry_init(&g, "fp32", CT, 0, NULL, 1), NF_CODEC_OK);
	float one = 2.5f, out;
	ck_assert_int_eq(nf_encode_f32(&g, &one, (uint8_t *)&out), 0);
	float got;
	ck_assert_int_eq(decode_via_spans(&g, (uint8_t *)&out, 0, 1, NF_DTYPE_F32, &got, NF_ISA_AUTO), 0);
	ck_assert_float_eq(got, 2.5f);
}
END_TEST

/* ---------- spans ---------- */

START_TEST(test_spans)
{
	struct nf_geometry g;
	struct nf_span sp[NF_MAX_SPANS];
	/* one element of a 1000-row q4 tensor: less than a row of codes */
	geom(&g, "q4_g64_fp16", RS, 1000, 4096, 1);
	unsigned n = nf_decode_spans(&g, 500 * 4096 + 1000, 500 * 4096 + 1001, sp);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(sp[0].length, 32);
	ck_assert_uint_lt(sp[0].length, g.gpr * 32);
	ck_assert_uint_eq(sp[0].offset, (500 * 64 + 1000 / 64) * 32);
	ck_assert_uint_eq(sp[1].length, 2);
	ck_assert_uint_eq(sp[1].offset, g.planes[1].offset + 2 * (500 * 64 + 15));
	ck_assert_uint_eq(nf_decode_spans(&g, 7, 7, sp), 0);
	ck_assert_uint_eq(nf_decode_spans(&g, 0, g.elements + 1, sp), 0);
	ck_assert_uint_eq(nf_decode_spans(&g, 5, 4, sp), 0);
	/* q5: three spans */
	geom(&g, "q5_g64_fp16", RS, 1000, 4096, 1);
	n = nf_decode_spans(&g, 4096, 2 * 4096, sp);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(sp[0].length, 64 * 32);
	ck_assert_uint_eq(sp[1].length, 64 * 8);
	ck_assert_uint_eq(sp[2].length, 64 * 2);
	/* fp8 */
	geom(&g, "fp8_e4m3fn_row_bf16", RSC, 1000, 4096, 1);
	n = nf_decode_spans(&g, 999 * 4096 + 10, 999 * 4096 + 20, sp);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(sp[0].offset, 999 * 4096 + 10);
	ck_assert_uint_eq(sp[0].length, 10);
	ck_assert_uint_eq(sp[1].offset, g.planes[1].offset + 2 * 999);
	ck_assert_uint_eq(sp[1].length, 2);
	/* nvfp4: codes of the range, scale tiles, divisors */
	geom(&g, "nvfp4", BS, 1024, 4096, 2);
	n = nf_decode_spans(&g, 600 * 4096 + 100, 600 * 4096 + 101, sp);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(sp[0].length, 1);
	ck_assert_uint_eq(sp[1].length, 512); /* one tile */
	ck_assert_uint_eq(sp[1].offset, g.planes[1].offset + (4 * 64 + 1) * 512);
	ck_assert_uint_eq(sp[2].offset, g.planes[2].offset + 4);
	ck_assert_uint_eq(sp[2].length, 4);
	n = nf_decode_spans(&g, 0, g.elements, sp);
	ck_assert_uint_eq(sp[0].length, g.planes[0].length);
	ck_assert_uint_eq(sp[1].length, g.planes[1].length);
	ck_assert_uint_eq(sp[2].length, 8);
	/* contiguous */
	uint64_t s1[1] = {100};
	nf_geometry_init(&g, "bf16", CT, 1, s1, 1);
	n = nf_decode_spans(&g, 10, 20, sp);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(sp[0].offset, 20);
	ck_assert_uint_eq(sp[0].length, 20);
}
END_TEST

/* ---------- row views ---------- */

static void check_row_view(const struct nf_geometry *pg, const uint8_t *pobj, uint64_t r0,
			   uint64_t cnt)
{
	struct nf_span sp[NF_MAX_PLANES];
	struct nf_geometry sg;
	unsigned n = nf_row_spans(pg, r0, cnt, sp);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(nf_rows_geometry(pg, cnt, &sg), NF_CODEC_OK);
	ck_assert_uint_eq(n, sg.nplanes);
	uint8_t *obj = calloc(1, sg.bytes);
	for (unsigned i = 0; i < n; i++) {
		ck_assert_uint_eq(sp[i].length, sg.planes[i].length);
		memcpy(obj + sg.planes[i].offset, pobj + sp[i].offset, sp[i].length);
	}
	float *a = decode_all(pg, pobj, NF_ISA_AUTO), *b = decode_all(&sg, obj, NF_ISA_AUTO);
	assert_same_bits(b, a + r0 * pg->cols, cnt * pg->cols, "row view");
	free(a);
	free(b);
	free(obj);
}

START_TEST(test_row_views)
{
	for (int f = 0; f < 6; f++) {
		struct rs_case c;
		make_rs(&c, f, 7, 130, 0);
		check_row_view(&c.g, c.obj, 0, 7);
		check_row_view(&c.g, c.obj, 2, 3);
		check_row_view(&c.g, c.obj, 6, 1);
		struct nf_span sp[NF_MAX_PLANES];
		ck_assert_uint_eq(nf_row_spans(&c.g, 6, 2, sp), 0);
		ck_assert_uint_eq(nf_row_spans(&c.g, 0, 0, sp), 0);
		free_rs(&c);
	}
	struct nf_geometry g;
	geom(&g, "fp8_e4m3fn_row_bf16", RSC, 5, 33, 1);
	uint8_t *obj = calloc(1, g.bytes);
	for (uint64_t i = 0; i < 5 * 33; i++)
		obj[i] = (uint8_t)(rnd() % 0x7F);
	for (uint64_t n = 0; n < 5; n++)
		nf_wr16(obj + g.planes[1].offset + 2 * n, (uint16_t)(0x3F00 + n));
	check_row_view(&g, obj, 1, 3);
	free(obj);

	struct nv_case c;
	make_nv(&c, 512, 128, 2, 0);
	check_row_view(&c.g, c.obj, 0, 128);
	check_row_view(&c.g, c.obj, 128, 128);
	check_row_view(&c.g, c.obj, 256, 256);
	struct nf_span sp[NF_MAX_PLANES];
	ck_assert_uint_eq(nf_row_spans(&c.g, 0, 256 + 128, sp), 0); /* crosses a share */
	ck_assert_uint_eq(nf_row_spans(&c.g, 64, 128, sp), 0);      /* not on a tile */
	ck_assert_uint_eq(nf_row_spans(&c.g, 0, 100, sp), 0);
	free_nv(&c);
	uint64_t s1[1] = {10};
	nf_geometry_init(&g, "fp32", CT, 1, s1, 1);
	ck_assert_uint_eq(nf_row_spans(&g, 0, 1, sp), 0);
}
END_TEST

/* ---------- output dtypes through nf_decode ---------- */

START_TEST(test_output_dtypes)
{
	struct rs_case c;
	make_rs(&c, 1, 9, 300, 0);
	float *f = decode_all(&c.g, c.obj, NF_ISA_SCALAR);
	uint16_t *h = malloc(c.g.elements * 2);
	for (int isa = NF_ISA_SCALAR; isa <= NF_ISA_AVX2; isa++) {
		ck_assert_int_eq(decode_via_spans(&c.g, c.obj, 0, c.g.elements, NF_DTYPE_BF16, h, isa), 0);
		for (uint64_t i = 0; i < c.g.elements; i++)
			ck_assert_uint_eq(h[i], nf_f32_to_bf16_one(f[i]));
		ck_assert_int_eq(decode_via_spans(&c.g, c.obj, 3, c.g.elements - 2, NF_DTYPE_F16, h, isa), 0);
		for (uint64_t i = 3; i < c.g.elements - 2; i++)
			ck_assert_uint_eq(h[i - 3], nf_f32_to_f16_one(f[i]));
	}
	ck_assert_int_eq(nf_decode(&c.g, 0, 1, NULL, NF_DTYPE_I32, h), -EINVAL);
	/* unaligned output buffers give the same bytes */
	uint8_t *raw = malloc(c.g.elements * 4 + 8);
	for (int dt = NF_DTYPE_F32; dt <= NF_DTYPE_F16; dt++) {
		size_t es = nf_dtype_size(dt);
		uint8_t *ref = malloc(c.g.elements * es);
		ck_assert_int_eq(decode_via_spans(&c.g, c.obj, 1, c.g.elements, dt, ref, NF_ISA_SCALAR), 0);
		for (int mis = 1; mis < 4; mis++)
			for (int isa = NF_ISA_SCALAR; isa <= NF_ISA_AVX2; isa++) {
				ck_assert_int_eq(decode_via_spans(&c.g, c.obj, 1, c.g.elements, dt,
								  raw + mis, isa), 0);
				ck_assert_mem_eq(raw + mis, ref, (c.g.elements - 1) * es);
			}
		free(ref);
	}
	free(raw);
	free(h);
	free(f);
	free_rs(&c);
}
END_TEST

/* ---------- SIMD vs scalar on random inputs ---------- */

START_TEST(test_simd_conversions)
{
	enum { M = 1000 };
	float *in = malloc((M + 8) * 4);
	uint16_t *a = malloc((M + 8) * 2), *b = malloc((M + 8) * 2);
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < M + 8; i++) {
			uint32_t u = (uint32_t)rnd();
			/* bias towards interesting exponents */
			if (round % 3 == 1)
				u = (u & 0x807FFFFF) | ((uint32_t)rnd_range(100, 145) << 23);
			if (round % 3 == 2)
				u = (u & 0x80001FFF) | ((uint32_t)rnd() & 0x7F806000);
			memcpy(in + i, &u, 4);
		}
		size_t off = rnd() % 8, n = rnd() % (M - 1) + 1;
		for (int isa = NF_ISA_SSE2; isa <= NF_ISA_AVX2; isa++) {
			nf_f32_to_bf16_isa(in + off, a, n, NF_ISA_SCALAR);
			nf_f32_to_bf16_isa(in + off, b + (off & 1), n, isa);
			ck_assert_mem_eq(a, b + (off & 1), n * 2);
			nf_f32_to_f16_isa(in + off, a, n, NF_ISA_SCALAR);
			nf_f32_to_f16_isa(in + off, b + (off & 1), n, isa);
			ck_assert_mem_eq(a, b + (off & 1), n * 2);
		}
	}
	free(in);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_simd_kernels)
{
	enum { M = 3000 };
	uint8_t *src = malloc(M + 64);
	float *a = malloc((M * 2 + 64) * 4), *b = malloc((M * 2 + 64) * 4);
	for (int round = 0; round < 300; round++) {
		for (int i = 0; i < M + 64; i++)
			src[i] = (uint8_t)rnd();
		unsigned off = (unsigned)(rnd() % 32), n0 = (unsigned)(rnd() % 1000), n = n0;
		float scale = bitsf((uint32_t)rnd());
		if (round % 2)
			scale = ref_f16(rnd_f16_finite());
		float div = round % 3 ? (float)rnd_range(1, 99) / 10.0f : bitsf((uint32_t)rnd());
		{
			/* the per-run binary32 kernels of the reference path (the
			 * AVX2 table has fused kernels instead: test_fused_*) */
			const struct nf_kernels *ks = nf_kernels_for(NF_ISA_SCALAR),
						*kv = nf_kernels_for(NF_ISA_SSE2);
			unsigned l0 = (unsigned)(rnd() % 64), l1 = l0 + (unsigned)(rnd() % (65 - l0));
			ks->q4(src + off, l0, l1, scale, a);
			kv->q4(src + off, l0, l1, scale, b);
			assert_same_bits(a, b, l1 - l0, "q4");
			l0 = (unsigned)(rnd() % 32);
			l1 = l0 + (unsigned)(rnd() % (33 - l0));
			ks->q8(src + off, l0, l1, scale, a);
			kv->q8(src + off, l0, l1, scale, b);
			assert_same_bits(a, b, l1 - l0, "q8");
			/* nvfp4: whole blocks with per-block scales and tables */
			size_t nbk = n / 16;
			float scs[64];
			if (nbk > 64)
				nbk = 64;
			for (size_t j = 0; j < nbk; j++)
				scs[j] = j % 5 == 4 ? scale : ref_e4m3((uint8_t)rnd());
			ks->nvfp4(src + off, nbk, scs, div, a);
			kv->nvfp4(src + off, nbk, scs, div, b + 1);
			n = (unsigned)(nbk * 16);
			assert_same_bits(a, b + 1, n, "nvfp4");
			n = n0;
			ks->fp8(src + off, n, scale, a);
			kv->fp8(src + off, n, scale, b + 3);
			assert_same_bits(a, b + 3, n, "fp8");
			ks->bf16(src + off, n, a);
			kv->bf16(src + off, n, b + 1);
			assert_same_bits(a, b + 1, n, "bf16");
		}
	}
	free(src);
	free(a);
	free(b);
}
END_TEST

/* ---------- quantizer ---------- */

START_TEST(test_quantizer)
{
	/* values exactly on the grid round-trip exactly */
	for (int f = 0; f < 6; f++) {
		struct nf_geometry g;
		geom(&g, rs_formats[f], RS, 3, 150, 1);
		float *v = malloc(g.elements * 4);
		float qs = f == 0 || f == 5 ? 1.0f : (float)rs_hi[f];
		int lo = f == 0 ? -1 : -(int)qs;
		for (uint64_t i = 0; i < g.elements; i++) {
			int q = rnd_range(lo, (int)qs);
			if (i % g.cols % g.group == 0)
				q = (int)qs; /* group max sets the scale */
			v[i] = (float)q * 0.25f;
		}
		uint8_t *obj = malloc(g.bytes);
		ck_assert_int_eq(nf_encode_f32(&g, v, obj), 0);
		ck_assert(nf_check_invariants(&g, obj, NULL));
		float *o = decode_all(&g, obj, NF_ISA_AUTO);
		assert_same_bits(o, v, g.elements, rs_formats[f]);
		/* random values: error within half a step */
		for (uint64_t i = 0; i < g.elements; i++)
			v[i] = (float)((double)(rnd() % 2000001) / 1e6 - 1.0);
		ck_assert_int_eq(nf_encode_f32(&g, v, obj), 0);
		ck_assert(nf_check_invariants(&g, obj, NULL));
		free(o);
		o = decode_all(&g, obj, NF_ISA_AUTO);
		for (uint64_t i = 0; i < g.elements; i++)
			ck_assert_msg(fabsf(o[i] - v[i]) <= 1.01f / (2 * qs) + 1e-3f, "%s %g vs %g",
				      rs_formats[f], (double)o[i], (double)v[i]);
		v[5] = NAN;
		ck_assert_int_eq(nf_encode_f32(&g, v, obj), -EINVAL);
		v[5] = 1e6f; /* scale overflows binary16 for small qmax */
		if (qs <= 7)
			ck_assert_int_eq(nf_encode_f32(&g, v, obj), -EINVAL);
		free(o);
		free(obj);
		free(v);
	}
	/* all-zero group -> +0 scale, zero codes */
	struct nf_geometry g;
	geom(&g, "q4_g64_fp16", RS, 1, 64, 1);
	float z[64] = {0};
	uint8_t obj[260];
	ck_assert_int_eq(nf_encode_f32(&g, z, obj), 0);
	for (int i = 0; i < 260; i++)
		ck_assert_uint_eq(obj[i], 0);
	/* nvfp4 and fp8: on-grid values exact, invariants clean */
	geom(&g, "nvfp4", BS, 128, 64, 1);
	float *v = malloc(g.elements * 4);
	for (uint64_t i = 0; i < g.elements; i++)
		v[i] = i % 16 == 0 ? 6.0f : ref_e2m1((unsigned)rnd_range(0, 15));
	uint8_t *ob = malloc(g.bytes);
	ck_assert_int_eq(nf_encode_f32(&g, v, ob), 0);
	ck_assert(nf_check_invariants(&g, ob, NULL));
	float *o = decode_all(&g, ob, NF_ISA_AUTO);
	assert_same_bits(o, v, g.elements, "nvfp4 quantizer");
	for (uint64_t i = 0; i < g.elements; i++)
		v[i] = (float)((double)(rnd() % 2000001) / 1e3 - 1000.0);
	ck_assert_int_eq(nf_encode_f32(&g, v, ob), 0);
	ck_assert(nf_check_invariants(&g, ob, NULL));
	free(o);
	o = decode_all(&g, ob, NF_ISA_AUTO);
	for (uint64_t i = 0; i < g.elements; i++) {
		float mx = 0;
		for (int j = 0; j < 16; j++)
			mx = fmaxf(mx, fabsf(v[i / 16 * 16 + j]));
		ck_assert(fabsf(o[i] - v[i]) <= mx * 0.25f);
	}
	free(o);
	free(ob);
	free(v);
	geom(&g, "fp8_e4m3fn_row_bf16", RSC, 4, 100, 1);
	v = malloc(g.elements * 4);
	for (uint64_t i = 0; i < g.elements; i++)
		v[i] = i % 100 == 0 ? 448.0f : ref_e4m3((uint8_t)rnd_range(0, 0x7E)) * (rnd() % 2 ? 1 : -1);
	ob = malloc(g.bytes);
	ck_assert_int_eq(nf_encode_f32(&g, v, ob), 0);
	ck_assert(nf_check_invariants(&g, ob, NULL));
	o = decode_all(&g, ob, NF_ISA_AUTO);
	assert_same_bits(o, v, g.elements, "fp8 quantizer");
	for (uint64_t i = 0; i < g.elements; i++)
		v[i] = (float)((double)(rnd() % 2000001) / 1e3 - 1000.0);
	ck_assert_int_eq(nf_encode_f32(&g, v, ob), 0);
	ck_assert(nf_check_invariants(&g, ob, NULL));
	free(o);
	o = decode_all(&g, ob, NF_ISA_AUTO);
	for (uint64_t i = 0; i < g.elements; i++)
		ck_assert(fabsf(o[i] - v[i]) <= fabsf(v[i]) / 16 + 0.01f);
	free(o);
	free(ob);
	free(v);
	/* bf16 quantizer = RNE */
	uint64_t s1[1] = {3};
	nf_geometry_init(&g, "bf16", CT, 1, s1, 1);
	float bv[3] = {bitsf(0x3F808000), bitsf(0x3F818000), NAN};
	uint8_t bo[6];
	ck_assert_int_eq(nf_encode_f32(&g, bv, bo), 0);
	ck_assert_uint_eq(nf_rd16(bo), 0x3F80);
	ck_assert_uint_eq(nf_rd16(bo + 2), 0x3F82);
	ck_assert_uint_eq(nf_rd16(bo + 4) & 0x7FC0, 0x7FC0);
}
END_TEST

/* ---------- invariants ---------- */

static void expect_violation(const struct nf_geometry *g, const uint8_t *obj, const char *code)
{
	struct nf_violation v;
	ck_assert_msg(!nf_check_invariants(g, obj, &v), "expected %s", code);
	ck_assert_str_eq(v.code, code);
	ck_assert(v.detail[0] != 0);
}

START_TEST(test_invariants)
{
	struct rs_case c;
	struct nf_geometry *g;
	/* q4 [2,65]: clean, then one violation at a time */
	make_rs(&c, 1, 2, 65, 0);
	g = &c.g;
	for (uint64_t i = 0; i < 2 * 2; i++) /* scales 1.0 (valid) */
		nf_wr16(c.obj + g->planes[1].offset + 2 * (i / 2 * g->gpr + i % 2), 0x3C00);
	ck_assert(nf_check_invariants(g, c.obj, NULL));
	uint8_t *o = malloc(g->bytes);
	memcpy(o, c.obj, g->bytes);
	o[g->planes[0].length + 3] = 1; /* gap between base and scales */
	expect_violation(g, o, "CODEC_PLANE_GAP_NONZERO");
	memcpy(o, c.obj, g->bytes);
	o[32 + 1] |= 0x10; /* row 0, group 1, lane 3 (col 67 >= K) */
	expect_violation(g, o, "CODEC_PADDING_NONZERO");
	static const uint16_t bad[] = {0x8000, 0x7C00, 0xFC00, 0x7E00};
	for (int i = 0; i < 4; i++) {
		memcpy(o, c.obj, g->bytes);
		nf_wr16(o + g->planes[1].offset, bad[i]);
		expect_violation(g, o, "CODEC_BAD_SCALE");
	}
	memcpy(o, c.obj, g->bytes);
	nf_wr16(o + g->planes[1].offset, 0xBC00); /* negative: valid (newest contract) */
	ck_assert(nf_check_invariants(g, o, NULL));
	nf_wr16(o + g->planes[1].offset, 0x0000);
	o[0] = 0x10; /* +0 scale with a nonzero code */
	expect_violation(g, o, "CODEC_ZERO_SCALE_NONZERO_CODE");
	o[0] = 0x00;
	memset(o, 0, 32);
	ck_assert(nf_check_invariants(g, o, NULL));
	free(o);
	free_rs(&c);

	/* q8 [2,65]: gpr 4, logical groups 3 -> group 3 is a whole padding group */
	make_rs(&c, 4, 2, 65, 0);
	g = &c.g;
	for (uint64_t i = 0; i < 8; i++)
		if (i % 4 < 3)
			nf_wr16(c.obj + g->planes[1].offset + 2 * i, 0x3C00);
	for (uint64_t i = 0; i < 2 * 65; i++)
		if (c.obj[(i / 65) * 128 + i % 65] == 0x80)
			c.obj[(i / 65) * 128 + i % 65] = 0x81;
	ck_assert(nf_check_invariants(g, c.obj, NULL));
	o = malloc(g->bytes);
	memcpy(o, c.obj, g->bytes);
	nf_wr16(o + g->planes[1].offset + 2 * 3, 0x3C00); /* whole padding group's scale */
	expect_violation(g, o, "CODEC_PADDING_NONZERO");
	memcpy(o, c.obj, g->bytes);
	o[96 + 5] = 0x11; /* whole padding group codes */
	expect_violation(g, o, "CODEC_PADDING_NONZERO");
	memcpy(o, c.obj, g->bytes);
	o[65] = 0x01; /* partial group pad lane */
	expect_violation(g, o, "CODEC_PADDING_NONZERO");
	free(o);
	free_rs(&c);

	/* q2: -0/zero scales allowed with any codes; pad lanes must be 0b01 */
	make_rs(&c, 0, 1, 65, 0);
	g = &c.g;
	nf_wr16(c.obj + g->planes[1].offset, 0x8000);
	nf_wr16(c.obj + g->planes[1].offset + 2, 0x0000);
	ck_assert(nf_check_invariants(g, c.obj, NULL));
	nf_wr16(c.obj + g->planes[1].offset, 0x7C00);
	expect_violation(g, c.obj, "CODEC_BAD_SCALE");
	nf_wr16(c.obj + g->planes[1].offset, 0x3C00);
	c.obj[16 + 5] = 0x00; /* pad lanes stored 0b00 = -1 */
	expect_violation(g, c.obj, "CODEC_PADDING_NONZERO");
	free_rs(&c);

	/* illegal codes t2 0b10, q8 0x80 */
	make_rs(&c, 5, 1, 128, 0);
	nf_wr16(c.obj + c.g.planes[1].offset, 0x3C00);
	c.obj[3] = 0x02;
	expect_violation(&c.g, c.obj, "CODEC_ILLEGAL_CODE");
	free_rs(&c);
	make_rs(&c, 4, 1, 32, 0);
	nf_wr16(c.obj + c.g.planes[1].offset, 0x3C00);
	c.obj[7] = 0x80;
	struct nf_violation v;
	ck_assert(!nf_check_invariants(&c.g, c.obj, &v));
	ck_assert_str_eq(v.code, "CODEC_ILLEGAL_CODE");
	ck_assert_uint_eq(v.element, 7);
	free_rs(&c);

	/* nvfp4 */
	struct nv_case n;
	make_nv(&n, 256, 64, 2, 0);
	ck_assert(nf_check_invariants(&n.g, n.obj, NULL));
	static const uint8_t badsc[] = {0x7F, 0x80, 0xFF, 0xB8};
	for (int i = 0; i < 4; i++) {
		uint8_t keep = n.obj[n.g.planes[1].offset + 100];
		n.obj[n.g.planes[1].offset + 100] = badsc[i];
		expect_violation(&n.g, n.obj, "CODEC_BAD_SCALE");
		n.obj[n.g.planes[1].offset + 100] = keep;
	}
	static const uint32_t baddiv[] = {0x00000000, 0x80000000, 0xBF800000, 0x7F800000,
					  0x7FC00000, 0xFF800000};
	for (int i = 0; i < 6; i++) {
		uint32_t keep = nf_rd32(n.obj + n.g.planes[2].offset + 4);
		nf_wr32(n.obj + n.g.planes[2].offset + 4, baddiv[i]);
		ck_assert(!nf_check_invariants(&n.g, n.obj, &v));
		ck_assert_str_eq(v.code, "CODEC_BAD_DIVISOR");
		ck_assert_uint_eq(v.element, 1);
		nf_wr32(n.obj + n.g.planes[2].offset + 4, keep);
	}
	nf_wr32(n.obj + n.g.planes[2].offset + 4, 0x00000001); /* subnormal > 0: ok */
	ck_assert(nf_check_invariants(&n.g, n.obj, NULL));
	free_nv(&n);
	make_nv(&n, 128, 64, 1, 0);
	ck_assert(nf_check_invariants(&n.g, n.obj, NULL));
	free_nv(&n);

	/* fp8 */
	struct nf_geometry fg;
	geom(&fg, "fp8_e4m3fn_row_bf16", RSC, 2, 10, 1);
	uint8_t *f = calloc(1, fg.bytes);
	nf_wr16(f + 256, 0x3F80);
	nf_wr16(f + 258, 0x0000);
	f[0] = 0x7E;
	f[10] = 0x80; /* -0 with +0 scale: ok */
	ck_assert(nf_check_invariants(&fg, f, NULL));
	f[11] = 0x01;
	expect_violation(&fg, f, "CODEC_ZERO_SCALE_NONZERO_CODE");
	f[11] = 0;
	f[3] = 0xFF;
	expect_violation(&fg, f, "CODEC_ILLEGAL_CODE");
	f[3] = 0x7F;
	expect_violation(&fg, f, "CODEC_ILLEGAL_CODE");
	f[3] = 0;
	static const uint16_t badrs[] = {0x8000, 0xBF80, 0x7F80, 0x7FC0};
	for (int i = 0; i < 4; i++) {
		nf_wr16(f + 256, badrs[i]);
		expect_violation(&fg, f, "CODEC_BAD_SCALE");
	}
	nf_wr16(f + 256, 0x0001); /* subnormal: ok */
	ck_assert(nf_check_invariants(&fg, f, NULL));
	f[100] = 9;
	expect_violation(&fg, f, "CODEC_PLANE_GAP_NONZERO");
	free(f);
	/* contiguous: always clean */
	uint64_t s1[1] = {4};
	nf_geometry_init(&fg, "bf16", CT, 1, s1, 1);
	uint8_t anyb[8] = {0xFF, 0x7F, 0x80, 0xFF, 1, 2, 3, 4};
	ck_assert(nf_check_invariants(&fg, anyb, NULL));
}
END_TEST

static Suite *codecs_suite(void)
{
	Suite *s = suite_create("codecs");
	TCase *t = tcase_create("core");
	tcase_set_timeout(t, 300);
	tcase_add_test(t, test_names);
	tcase_add_test(t, test_shape_rules);
	tcase_add_test(t, test_sizes_row_split);
	tcase_add_test(t, test_sizes_other);
	tcase_add_test(t, test_primitives);
	tcase_add_test(t, test_conversions);
	tcase_add_test(t, test_byte_vectors);
	tcase_add_test(t, test_q2_reference_object);
	tcase_add_test(t, test_all_codes_row_split);
	tcase_add_test(t, test_round_trip_row_split);
	tcase_add_test(t, test_padding);
	tcase_add_test(t, test_subranges_row_split);
	tcase_add_test(t, test_nvfp4_swizzle);
	tcase_add_test(t, test_nvfp4_values);
	tcase_add_test(t, test_nvfp4_round_trip);
	tcase_add_test(t, test_subranges_nvfp4);
	tcase_add_test(t, test_fp8);
	tcase_add_test(t, test_contiguous);
	tcase_add_test(t, test_spans);
	tcase_add_test(t, test_row_views);
	tcase_add_test(t, test_output_dtypes);
	tcase_add_test(t, test_simd_conversions);
	tcase_add_test(t, test_simd_kernels);
	tcase_add_test(t, test_quantizer);
	tcase_add_test(t, test_invariants);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(codecs_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
