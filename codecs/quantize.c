/* codecs/quantize.c — reference quantizers (nf_encode_f32): logical float
 * values -> codes + scales -> nf_encode_codes().
 *
 * These are *our* canonical rules (the spec fixes only the decode side):
 *
 * row_split (q2/q4/q5/q6/q8/t2), per logical group of G columns:
 *   maxabs = max |v| over the group's logical lanes (NaN/Inf -> -EINVAL);
 *   scale  = binary16(maxabs / qmax), round-to-nearest-even, where qmax is
 *            7 (q4), 15 (q5), 31 (q6), 127 (q8), 1 (t2) and 1 (q2: the
 *            symmetric part of its [-1,2] grid); a scale that overflows
 *            binary16 is -EINVAL;
 *   q      = clamp(rint(v * (1/scale)), qmin, qmax_legal) with the legal
 *            range of codecs §2.1 (q4 [-8,7], q5 [-16,15], q6 [-32,31],
 *            q8 [-127,127], t2 [-1,1], q2 [-1,2]); rint() rounds half to even.
 *   A group whose scale rounds to +0 stores all-zero codes (codecs §2.5).
 * nvfp4, per 16-column block, divisors all 1.0:
 *   scale = E4M3FN(maxabs / 6) rounded to nearest even, saturating at 448
 *           (so only 0x00..0x7E are produced, codecs §3.4);
 *   code  = nearest E2M1 value to v / scale, ties to the even code, sign
 *           from v (a negative value that rounds to 0 gives -0, code 8);
 *           a 0 scale gives codes 0.
 * fp8_e4m3fn_row_bf16, per row:
 *   scale = bf16(maxabs / 448) round-to-nearest-even (sign clear, finite);
 *   code  = E4M3FN(v / scale) round-to-nearest-even, saturating to ±448;
 *           a +0 scale gives codes 0x00 (codecs §4.2).
 * contiguous: bf16 = round-to-nearest-even of v; fp32 = v's bits; int32 =
 *   the values are int32 bit patterns, copied. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "codecs/internal.h"

/* |x| (finite, >= 0) -> E4M3FN magnitude code, RNE, saturating at 0x7E. */
static uint8_t e4m3_mag(double x)
{
	int e;
	long c;

	if (x < 0x1p-6) /* subnormal grid 2^-9 (code m == value * 512) */
		c = lrint(x * 512.0);
	else {
		frexp(x, &e); /* x = f * 2^e, f in [0.5,1): leading bit 2^(e-1) */
		if (e - 1 > 8)
			return 0x7E;
		/* q in [8,16]: value / 2^(e-1-3), RNE; q = 16 carries into the
		 * next exponent, which the code arithmetic handles */
		long q = lrint(ldexp(x, 3 - (e - 1)));
		c = ((long)(e - 1 + 7) << 3) + (q - 8);
	}
	return c > 0x7E ? 0x7E : (uint8_t)c;
}

/* Nearest E2M1 magnitude index (0..7) of x >= 0, ties to even index. */
static unsigned e2m1_mag(float x)
{
	static const float v[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
	unsigned best = 0;
	for (unsigned i = 1; i < 8; i++) {
		float db = fabsf(x - v[best]), di = fabsf(x - v[i]);
		if (di < db || (di == db && (i % 2) == 0))
			best = i;
	}
	return best;
}

/* max |v| over n values; -EINVAL for NaN/Inf */
static int max_abs(const float *v, uint64_t n, float *out)
{
	float m = 0.0f;
	for (uint64_t i = 0; i < n; i++) {
		if (!isfinite(v[i]))
			return -EINVAL;
		if (fabsf(v[i]) > m)
			m = fabsf(v[i]);
	}
	*out = m;
	return 0;
}

/* Groups are quantized and packed one at a time straight into `out`
 * (zeroed first), so nothing is allocated. */
static int q_row_split(const struct nf_geometry *g, const float *vals, uint8_t *out)
{
	const uint64_t K = g->cols, G = g->group, lg = (K + G - 1) / G;
	const uint64_t B = g->base_bytes_per_group, H = g->high_bytes_per_group;
	uint8_t *high = H ? out + g->planes[1].offset : NULL;
	uint8_t *sc = out + g->planes[g->nplanes - 1].offset;
	int32_t q[128];
	int qmin, qmax;
	float qsym;

	nf_rs_code_range(g->format, &qmin, &qmax);
	switch (g->format) {
	case NF_FORMAT_Q2_G64_FP16:
	case NF_FORMAT_T2_G128_FP16: qsym = 1.0f; break;
	default: qsym = (float)qmax; break;
	}
	for (uint64_t n = 0; n < g->rows; n++) {
		for (uint64_t gi = 0; gi < g->gpr; gi++) {
			uint64_t grp = n * g->gpr + gi, c0 = gi * G;
			uint64_t c1 = gi >= lg ? c0 : (c0 + G < K ? c0 + G : K);
			const float *v = vals + n * K;
			uint16_t s16 = 0;
			float maxabs;
			if (max_abs(v + c0, c1 - c0, &maxabs))
				return -EINVAL;
			if (c1 > c0) {
				s16 = nf_f32_to_f16_one(maxabs / qsym);
				if ((s16 & 0x7C00) == 0x7C00)
					return -EINVAL; /* scale not representable in binary16 */
			}
			float s = nf_f16_to_f32(s16), inv = s != 0.0f ? 1.0f / s : 0.0f;
			for (unsigned l = 0; l < G; l++) {
				uint64_t c = c0 + l;
				float x = c < c1 && s != 0.0f ? rintf(v[c] * inv) : 0.0f;
				if (x < (float)qmin)
					x = (float)qmin;
				if (x > (float)qmax)
					x = (float)qmax;
				q[l] = (int32_t)x; /* lanes >= K: code 0 (codecs §2.4) */
			}
			if (nf_rs_pack_group(g->format, out + grp * B, high ? high + grp * H : NULL,
					     q, (unsigned)G))
				return -EINVAL;
			nf_wr16(sc + 2 * grp, s16);
		}
	}
	return 0;
}

static int q_nvfp4(const struct nf_geometry *g, const float *vals, uint8_t *out)
{
	const uint64_t N = g->rows, K = g->cols;
	uint8_t *sc = out + g->planes[1].offset, *dv = out + g->planes[2].offset;

	for (uint64_t b = 0; b < N * K / 16; b++) {
		const float *v = vals + 16 * b;
		float maxabs;
		if (max_abs(v, 16, &maxabs))
			return -EINVAL;
		uint8_t s8 = e4m3_mag((double)maxabs / 6.0);
		float s = nf_e4m3fn_to_f32(s8);
		sc[nf_nv_swz(b / (K / 16), b % (K / 16), K / 64)] = s8;
		for (unsigned i = 0; i < 16; i++) {
			unsigned m = s != 0.0f ? e2m1_mag(fabsf(v[i]) / s) : 0;
			unsigned c = m | (signbit(v[i]) && s != 0.0f ? 8u : 0u);
			uint64_t e = 16 * b + i;
			out[e / 2] = (uint8_t)(out[e / 2] | c << (4 * (e % 2)));
		}
	}
	for (uint64_t i = 0; i < g->divisors; i++)
		nf_wr32(dv + 4 * i, 0x3F800000u); /* 1.0 */
	return 0;
}

static int q_fp8(const struct nf_geometry *g, const float *vals, uint8_t *out)
{
	const uint64_t K = g->cols;
	uint8_t *sc = out + g->planes[1].offset;

	for (uint64_t n = 0; n < g->rows; n++) {
		const float *v = vals + n * K;
		float maxabs;
		if (max_abs(v, K, &maxabs))
			return -EINVAL;
		uint16_t s16 = nf_f32_to_bf16_one(maxabs / 448.0f);
		float s = nf_bf16_to_f32(s16);
		nf_wr16(sc + 2 * n, s16);
		for (uint64_t c = 0; c < K; c++) {
			uint8_t code = 0;
			if (s != 0.0f) {
				float x = v[c] / s;
				code = (uint8_t)(e4m3_mag(fabs((double)x)) | (signbit(x) ? 0x80 : 0));
			}
			out[n * K + c] = code;
		}
	}
	return 0;
}

int nf_encode_f32(const struct nf_geometry *g, const float *values, uint8_t *out)
{
	if (g->layout == NF_LAYOUT_UNKNOWN || g->layout == NF_LAYOUT_RAW_BYTES_V1 ||
	    g->bytes > SIZE_MAX)
		return -EINVAL;
	if (g->layout == NF_LAYOUT_CONTIGUOUS_LE_V1) {
		for (uint64_t i = 0; i < g->elements; i++) {
			if (g->format == NF_FORMAT_BF16)
				nf_wr16(out + 2 * i, nf_f32_to_bf16_one(values[i]));
			else /* fp32 and int32 (bit patterns): copy the word */
				nf_wr32(out + 4 * i, nf_f32_bits(values[i]));
		}
		return 0;
	}
	memset(out, 0, (size_t)g->bytes); /* plane gaps are zero (codecs §0) */
	switch (g->layout) {
	case NF_LAYOUT_ROW_SPLIT_K128_V1:
		return q_row_split(g, values, out);
	case NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1:
		return q_nvfp4(g, values, out);
	default:
		return q_fp8(g, values, out);
	}
}
