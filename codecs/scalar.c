/* codecs/scalar.c — scalar numeric primitives (codecs §0.1), output
 * conversions (codecs §8.5) and the scalar reference kernels every SIMD
 * path must match bit for bit. */
#include "codecs/internal.h"

/* binary16 -> binary32, exact, subnormals kept (codecs §0.1).  NaN keeps
 * its sign and payload (shifted into the high fraction bits). */
float nf_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t e = (h >> 10) & 0x1F, f = h & 0x3FF;

	if (e == 0) {
		/* ±f·2^-24: f < 1024 and the product by a power of two is exact */
		float v = (float)f * 0x1p-24f;
		return nf_bits_f32(nf_f32_bits(v) | sign);
	}
	if (e == 31)
		return nf_bits_f32(sign | 0x7F800000u | f << 13);
	return nf_bits_f32(sign | (e + 112) << 23 | f << 13);
}

/* bf16 -> binary32: the word is the high half (codecs §0.1). */
float nf_bf16_to_f32(uint16_t h)
{
	return nf_bits_f32((uint32_t)h << 16);
}

/* E4M3FN -> binary32 (codecs §0.1).  0x7F/0xFF are NaN (quiet, signed:
 * sign | 0x7FC00000); no infinities. */
float nf_e4m3fn_to_f32(uint8_t b)
{
	uint32_t sign = (uint32_t)(b & 0x80) << 24, mag = b & 0x7F;

	if (mag == 0x7F)
		return nf_bits_f32(sign | 0x7FC00000u);
	if (mag < 8) /* e = 0: ±m·2^-9, exact */
		return nf_bits_f32(nf_f32_bits((float)mag * 0x1p-9f) | sign);
	/* (1+m/8)·2^(e-7): rebias the exponent 7 -> 127 */
	return nf_bits_f32(sign | ((mag << 20) + (120u << 23)));
}

/* E2M1 -> binary32 (codecs §0.1): 0,0.5,1,1.5,2,3,4,6 and negatives. */
float nf_e2m1_to_f32(uint8_t code4)
{
	static const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
	float v = mag[code4 & 7];
	return (code4 & 8) ? -v : v;
}

/* binary32 -> bf16, round to nearest even; NaN -> quiet NaN keeping sign and
 * the top payload bits; overflow rounds to ±inf naturally. */
uint16_t nf_f32_to_bf16_one(float f)
{
	uint32_t x = nf_f32_bits(f);

	if ((x & 0x7FFFFFFFu) > 0x7F800000u)
		return (uint16_t)((x >> 16) | 0x0040);
	x += 0x7FFFu + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

/* binary32 -> binary16, round to nearest even, subnormal results kept
 * (F. Giesen's "fast3_rtne" construction).  NaN -> sign | 0x7E00 | top 9
 * payload bits; |x| >= 65520 -> ±inf. */
uint16_t nf_f32_to_f16_one(float f)
{
	uint32_t x = nf_f32_bits(f);
	uint32_t sign = (x >> 16) & 0x8000;
	uint16_t o;

	x &= 0x7FFFFFFFu;
	if (x >= 0x47800000u) { /* >= 65536, Inf or NaN */
		if (x > 0x7F800000u)
			o = (uint16_t)(0x7E00 | ((x >> 13) & 0x3FF));
		else
			o = 0x7C00;
	} else if (x < 0x38800000u) { /* below 2^-14: f16 subnormal or zero */
		/* adding 0.5 puts the 2^-24 unit in the last fraction bit, and
		 * the IEEE add rounds to nearest even for us */
		float t = nf_bits_f32(x) + 0.5f;
		o = (uint16_t)(nf_f32_bits(t) - 0x3F000000u);
	} else {
		uint32_t odd = (x >> 13) & 1;
		x += ((uint32_t)(15 - 127) << 23) + 0xFFF + odd;
		o = (uint16_t)(x >> 13); /* a carry into e=31 yields 0x7C00 = inf */
	}
	return (uint16_t)(o | sign);
}

/* ---- scalar reference kernels ---- */

static void k_q4(const uint8_t *grp, unsigned l0, unsigned l1, float scale, float *out)
{
	for (unsigned l = l0; l < l1; l++) {
		int u = (grp[l / 2] >> (4 * (l % 2))) & 0xF;
		*out++ = (float)(u >= 8 ? u - 16 : u) * scale;
	}
}

static void k_q8(const uint8_t *grp, unsigned l0, unsigned l1, float scale, float *out)
{
	for (unsigned l = l0; l < l1; l++)
		*out++ = (float)(int8_t)grp[l] * scale;
}

static void k_nvfp4(const uint8_t *codes, size_t nblocks, const float *scales, float div,
		    float *out)
{
	for (size_t i = 0; i < nblocks * 16; i++) {
		uint8_t c = (codes[i / 2] >> (4 * (i % 2))) & 0xF;
		/* codecs §3.5: exact product, then ONE division (never 1/d) */
		float p = nf_e2m1_to_f32(c) * scales[i / 16];
		out[i] = p / div;
	}
}

static void k_fp8(const uint8_t *codes, size_t n, float scale, float *out)
{
	for (size_t i = 0; i < n; i++) {
		/* a NaN code yields the code's NaN whatever the scale: x86
		 * returns the *first* NaN operand of a multiply, and operand
		 * order is the compiler's choice, so pin the result down */
		if ((codes[i] & 0x7F) == 0x7F)
			out[i] = nf_e4m3fn_to_f32(codes[i]);
		else
			out[i] = nf_e4m3fn_to_f32(codes[i]) * scale;
	}
}

static void k_bf16(const uint8_t *src, size_t n, float *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = nf_bf16_to_f32(nf_rd16(src + 2 * i));
}

static void k_to_bf16(const float *in, uint16_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = nf_f32_to_bf16_one(in[i]);
}

static void k_to_f16(const float *in, uint16_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = nf_f32_to_f16_one(in[i]);
}

const struct nf_kernels nf_kernels_scalar = {
	.q4 = k_q4,
	.q8 = k_q8,
	.nvfp4 = k_nvfp4,
	.fp8 = k_fp8,
	.bf16 = k_bf16,
	.to_bf16 = k_to_bf16,
	.to_f16 = k_to_f16,
};

void nf_f32_to_bf16_isa(const float *in, uint16_t *out, size_t n, enum nf_isa isa)
{
	nf_kernels_for(isa)->to_bf16(in, out, n);
}

void nf_f32_to_f16_isa(const float *in, uint16_t *out, size_t n, enum nf_isa isa)
{
	nf_kernels_for(isa)->to_f16(in, out, n);
}

void nf_f32_to_bf16(const float *in, uint16_t *out, size_t n)
{
	nf_f32_to_bf16_isa(in, out, n, NF_ISA_AUTO);
}

void nf_f32_to_f16(const float *in, uint16_t *out, size_t n)
{
	nf_f32_to_f16_isa(in, out, n, NF_ISA_AUTO);
}
