/* codecs/internal.h — shared between the codec translation units; not a
 * public API.  Tests include it to force a particular instruction set
 * (scalar reference vs SSE2 vs AVX2) and compare results bit for bit. */
#ifndef NF_CODECS_INTERNAL_H
#define NF_CODECS_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "codecs/codec.h"

/* Instruction-set choice for the decode and conversion kernels.
 * NF_ISA_AUTO picks the best one the running CPU supports (resolved per
 * call through __builtin_cpu_supports, which only reads libgcc's CPU model
 * filled once at load time, so there is no mutable state of our own). */
enum nf_isa {
	NF_ISA_AUTO = 0,
	NF_ISA_SCALAR,
	NF_ISA_SSE2,
	NF_ISA_AVX2,
};

/* The ISA NF_ISA_AUTO resolves to on this machine. */
enum nf_isa nf_isa_best(void);
/* Clamp a requested ISA to what the CPU supports (AVX2 -> SSE2 when the CPU
 * lacks AVX2; AUTO -> best). */
enum nf_isa nf_isa_resolve(enum nf_isa isa);
const char *nf_isa_name(enum nf_isa isa);

/* nf_decode() with an explicit ISA (tests, benchmark).  NF_ISA_AVX2 means
 * AVX2 and F16C (every AVX2 CPU made has F16C, but they are separate CPUID
 * bits, so both are checked). */
int nf_decode_isa(const struct nf_geometry *g, uint64_t begin, uint64_t end,
		  const uint8_t *const bufs[NF_MAX_SPANS], enum nf_dtype dtype, void *out,
		  enum nf_isa isa);
void nf_f32_to_bf16_isa(const float *in, uint16_t *out, size_t n, enum nf_isa isa);
void nf_f32_to_f16_isa(const float *in, uint16_t *out, size_t n, enum nf_isa isa);

/* Scalar conversions of one value (the reference the SIMD paths match). */
uint16_t nf_f32_to_bf16_one(float f);
uint16_t nf_f32_to_f16_one(float f);

/* nvfp4 value tables for one divisor (codecs §3.5), filled lazily per scale
 * byte by the fused kernels: row s holds the 16 values (e2m1(c) * e4m3(s)) /
 * div, computed with exactly the reference's two IEEE operations, in the
 * output dtype -- binary32 (f) or the 16-bit words split into a plane of low
 * bytes and a plane of high bytes (h[s][0..15], h[s][16..31]) for a byte
 * shuffle.  Lives on the caller's stack for one nf_decode() call. */
struct nf_nv_tables {
	float div;
	uint8_t have[256];
	union {
		float f[256][16];
		uint8_t h[256][32];
	} v;
};

/* Index of an output dtype in the fused kernel arrays. */
enum { NF_FX_F32 = 0, NF_FX_BF16, NF_FX_F16, NF_FX_N };

/* Kernel table: one per ISA.
 *
 * The reference path (scalar, SSE2): each f32 kernel decodes a run of
 * elements that share one scale (or, for nvfp4, one scale and one divisor)
 * into binary32; the driver converts to bf16/f16 afterwards with to_bf16 /
 * to_f16.  Bit-identical across ISAs by construction: integer unpacking,
 * exact int->float conversion, one IEEE multiply (and one IEEE divide for
 * nvfp4).
 *
 * The fused path (AVX2+F16C, `fused` set; the f32 kernels are then NULL):
 * every kernel writes the output dtype straight (index NF_FX_*), with no
 * binary32 pass through memory, and must equal the reference f32 kernel
 * followed by nf_f32_to_bf16_one() / nf_f32_to_f16_one() bit for bit.
 * Fused kernels take and write unaligned bytes; n is in elements. */
struct nf_kernels {
	/* q4 lanes [l0,l1) of a group whose base bytes start at grp. */
	void (*q4)(const uint8_t *grp, unsigned l0, unsigned l1, float scale, float *out);
	/* q8 lanes [l0,l1) of a group whose bytes start at grp. */
	void (*q8)(const uint8_t *grp, unsigned l0, unsigned l1, float scale, float *out);
	/* nvfp4: nblocks whole 16-element blocks of one row, starting at the
	 * block's first code byte `codes` (low nibble first).  Block j has
	 * E4M3FN scale value scales[j]; every value is (e2m1 * scale) / div
	 * (codecs §3.5). */
	void (*nvfp4)(const uint8_t *codes, size_t nblocks, const float *scales, float div,
		      float *out);
	/* fp8: n E4M3FN bytes times one row scale. */
	void (*fp8)(const uint8_t *codes, size_t n, float scale, float *out);
	/* bf16 words (little-endian, possibly unaligned) to binary32. */
	void (*bf16)(const uint8_t *src, size_t n, float *out);
	void (*to_bf16)(const float *in, uint16_t *out, size_t n);
	void (*to_f16)(const float *in, uint16_t *out, size_t n);

	int fused;
	/* row_split (index: format - NF_FORMAT_Q2_G64_FP16): n elements of one
	 * row, from lane l0 of the group whose base bytes, high bytes (NULL
	 * without a high plane) and binary16 scale word start at base, high,
	 * scale; the row's later groups follow contiguously (codecs §2.2). */
	void (*rs[6][NF_FX_N])(const uint8_t *base, const uint8_t *high, const uint8_t *scale,
			       unsigned l0, size_t n, void *out);
	/* nvfp4: n elements of one row from column c0 (n <= K - c0).  codes is
	 * the byte holding column c0; sc is the scale byte of c0's 16-column
	 * block, the row's next blocks at +1, +1, +1, then +509 (the next
	 * 512-byte tile, codecs §3.3).  t->div is the row's divisor. */
	void (*nv[NF_FX_N])(const uint8_t *codes, const uint8_t *sc, uint64_t c0, size_t n,
			    struct nf_nv_tables *t, void *out);
	/* fp8: n codes of one row times the row's scale (codecs §4.3). */
	void (*fp8x[NF_FX_N])(const uint8_t *codes, size_t n, float scale, void *out);
	/* contiguous bf16 / fp32 words (codecs §1); the identity entries
	 * (bf16 -> bf16, fp32 -> f32) are NULL: the driver copies. */
	void (*bf16x[NF_FX_N])(const uint8_t *src, size_t n, void *out);
	void (*f32x[NF_FX_N])(const uint8_t *src, size_t n, void *out);
};

extern const struct nf_kernels nf_kernels_scalar;
#if defined(__x86_64__) /* SSE2 is part of the x86-64 baseline */
#define NF_HAVE_X86_SIMD 1
extern const struct nf_kernels nf_kernels_sse2;
extern const struct nf_kernels nf_kernels_avx2;
#endif
const struct nf_kernels *nf_kernels_for(enum nf_isa isa);

/* Helpers shared by the translation units. */
static inline uint64_t nf_align_up(uint64_t x, uint64_t a, int *ovf)
{
	uint64_t r;
	if (__builtin_add_overflow(x, a - 1, &r)) {
		*ovf = 1;
		return 0;
	}
	return r / a * a;
}

static inline uint16_t nf_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}
static inline uint32_t nf_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void nf_wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void nf_wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}
static inline float nf_bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static inline uint32_t nf_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

/* Row-split per-format constants (codecs §2.1). */
static inline int nf_is_row_split(enum nf_format f)
{
	return f >= NF_FORMAT_Q2_G64_FP16 && f <= NF_FORMAT_T2_G128_FP16;
}

/* Signed integer q of lane l in group grp (codecs §2.3); base/high point at
 * the group's first base/high byte. */
static inline int nf_rs_lane(enum nf_format f, const uint8_t *base, const uint8_t *high,
			     unsigned l)
{
	unsigned u;
	switch (f) {
	case NF_FORMAT_Q2_G64_FP16:
		return (int)((base[l / 4] >> (2 * (l % 4))) & 3) - 1;
	case NF_FORMAT_T2_G128_FP16:
		u = (base[l / 4] >> (2 * (l % 4))) & 3;
		return u >= 2 ? (int)u - 4 : (int)u; /* 0b10 -> -2 (codecs §8.2) */
	case NF_FORMAT_Q4_G64_FP16:
		u = (base[l / 2] >> (4 * (l % 2))) & 0xF;
		return u >= 8 ? (int)u - 16 : (int)u;
	case NF_FORMAT_Q5_G64_FP16:
		u = ((base[l / 2] >> (4 * (l % 2))) & 0xF) | (((high[l / 8] >> (l % 8)) & 1u) << 4);
		return u >= 16 ? (int)u - 32 : (int)u;
	case NF_FORMAT_Q6_G64_FP16:
		u = ((base[l / 2] >> (4 * (l % 2))) & 0xF) | (((high[l / 4] >> (2 * (l % 4))) & 3u) << 4);
		return u >= 32 ? (int)u - 64 : (int)u;
	case NF_FORMAT_Q8_G32_FP16:
		return (int)(int8_t)base[l]; /* 0x80 -> -128 (codecs §8.2) */
	default:
		return 0;
	}
}

/* Integer range of legal codes (codecs §2.1) for the encoder/quantizer. */
void nf_rs_code_range(enum nf_format f, int *qmin, int *qmax);

/* Pack the G signed codes q[] of one row_split group into its (zeroed)
 * base and high bytes (codecs §2.3); -EINVAL if a code does not fit the
 * format's bit field. */
int nf_rs_pack_group(enum nf_format f, uint8_t *base, uint8_t *high, const int32_t *q,
		     unsigned G);

/* nvfp4 scale swizzle (codecs §3.3): byte offset of row n, 16-column
 * group grp inside the scale plane, kt = K/64. */
static inline uint64_t nf_nv_swz(uint64_t n, uint64_t grp, uint64_t kt)
{
	return (n / 128 * kt + grp / 4) * 512 + (n % 32) * 16 + (n % 128) / 32 * 4 + grp % 4;
}

#endif
