/* codecs/simd.c — runtime dispatch and the SSE2 (x86-64 baseline) decode
 * and convert kernels.  The AVX2+F16C kernels are in avx2.c.
 *
 * Every kernel is bit-identical to the scalar reference in scalar.c: codes
 * are unpacked with integer operations, int->float conversions are exact,
 * and the only floating-point operations are the same single IEEE multiply
 * (and, for nvfp4, the same single IEEE division, codecs §3.5) the scalar
 * code performs.  No FMA (-ffp-contract=off in meson.build), no reciprocal
 * approximations, no flush-to-zero (codecs §0.1).  The SSE2 f16 conversion
 * is done in integer SIMD with exactly the scalar NaN rule.
 *
 * Dispatch: per call, from what the CPU said at the first call (have_avx2:
 * its one word of state, written once).  The AVX2 level needs both AVX2
 * and F16C (VCVTPS2PH); without either the SSE2 kernels run, so the
 * binary runs on any x86-64. */
#include "codecs/internal.h"

const char *nf_isa_name(enum nf_isa isa)
{
	switch (isa) {
	case NF_ISA_AUTO: return "auto";
	case NF_ISA_SCALAR: return "scalar";
	case NF_ISA_SSE2: return "sse2";
	case NF_ISA_AVX2: return "avx2";
	}
	return "unknown";
}

#ifndef NF_HAVE_X86_SIMD

enum nf_isa nf_isa_best(void) { return NF_ISA_SCALAR; }
enum nf_isa nf_isa_resolve(enum nf_isa isa) { (void)isa; return NF_ISA_SCALAR; }
const struct nf_kernels *nf_kernels_for(enum nf_isa isa)
{
	(void)isa;
	return &nf_kernels_scalar;
}

#else

#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>

/* AVX2 (the compiler's check also asks the OS for the YMM state) and F16C
 * (CPUID.1:ECX bit 29, read directly: clang 14 has no "f16c" for
 * __builtin_cpu_supports, and fuzz/ builds with clang).
 *
 * Asked once: in a VM, CPUID traps to the hypervisor (13.5 us a call on
 * the bench machine), and every decode call resolves its kernels, so a
 * 4 KiB decoded read spent more in CPUID than in decoding (fio QD1 on a
 * decoded view 23k IOPS, raw 50k: bench/README.md, issue 14, eighth
 * pass).  The answer cannot change while the process runs; threads that
 * race at the first call store the same value. */
static int have_avx2(void)
{
	static atomic_int known;   /* 0: not asked yet, 1: no, 2: yes */
	int k = atomic_load_explicit(&known, memory_order_relaxed);
	if (k == 0) {
		unsigned a, b, c, d;
		k = __builtin_cpu_supports("avx2") && __get_cpuid(1, &a, &b, &c, &d) &&
		    (c & bit_F16C) ? 2 : 1;
		atomic_store_explicit(&known, k, memory_order_relaxed);
	}
	return k == 2;
}

enum nf_isa nf_isa_best(void)
{
	return have_avx2() ? NF_ISA_AVX2 : NF_ISA_SSE2;
}

enum nf_isa nf_isa_resolve(enum nf_isa isa)
{
	if (isa == NF_ISA_AUTO || (isa == NF_ISA_AVX2 && !have_avx2()))
		return nf_isa_best();
	return isa;
}

const struct nf_kernels *nf_kernels_for(enum nf_isa isa)
{
	switch (nf_isa_resolve(isa)) {
	case NF_ISA_AVX2: return &nf_kernels_avx2;
	case NF_ISA_SSE2: return &nf_kernels_sse2;
	default: return &nf_kernels_scalar;
	}
}

/* ================= SSE2 ================= */

/* 4-bit two's complement sign extension of nibbles held in bytes. */
static inline __m128i sx4_epi8(__m128i x)
{
	const __m128i eight = _mm_set1_epi8(8);
	return _mm_sub_epi8(_mm_xor_si128(x, eight), eight);
}

/* Store 16 int8 lanes times scale as 16 floats. */
static inline void sse2_i8x16_store(__m128i v, __m128 s, float *out)
{
	__m128i w0 = _mm_srai_epi16(_mm_unpacklo_epi8(v, v), 8);
	__m128i w1 = _mm_srai_epi16(_mm_unpackhi_epi8(v, v), 8);
	__m128i d0 = _mm_srai_epi32(_mm_unpacklo_epi16(w0, w0), 16);
	__m128i d1 = _mm_srai_epi32(_mm_unpackhi_epi16(w0, w0), 16);
	__m128i d2 = _mm_srai_epi32(_mm_unpacklo_epi16(w1, w1), 16);
	__m128i d3 = _mm_srai_epi32(_mm_unpackhi_epi16(w1, w1), 16);
	_mm_storeu_ps(out + 0, _mm_mul_ps(_mm_cvtepi32_ps(d0), s));
	_mm_storeu_ps(out + 4, _mm_mul_ps(_mm_cvtepi32_ps(d1), s));
	_mm_storeu_ps(out + 8, _mm_mul_ps(_mm_cvtepi32_ps(d2), s));
	_mm_storeu_ps(out + 12, _mm_mul_ps(_mm_cvtepi32_ps(d3), s));
}

static void sse2_q4(const uint8_t *grp, unsigned l0, unsigned l1, float scale, float *out)
{
	unsigned l = l0, head = (32 - l0 % 32) % 32;
	if (head > l1 - l0)
		head = l1 - l0;
	nf_kernels_scalar.q4(grp, l, l + head, scale, out);
	l += head;
	out += head;
	const __m128 s = _mm_set1_ps(scale);
	const __m128i m = _mm_set1_epi8(0x0F);
	for (; l + 32 <= l1; l += 32, out += 32) {
		__m128i v = _mm_loadu_si128((const __m128i *)(grp + l / 2));
		__m128i lo = sx4_epi8(_mm_and_si128(v, m));
		__m128i hi = sx4_epi8(_mm_and_si128(_mm_srli_epi16(v, 4), m));
		sse2_i8x16_store(_mm_unpacklo_epi8(lo, hi), s, out);
		sse2_i8x16_store(_mm_unpackhi_epi8(lo, hi), s, out + 16);
	}
	nf_kernels_scalar.q4(grp, l, l1, scale, out);
}

static void sse2_q8(const uint8_t *grp, unsigned l0, unsigned l1, float scale, float *out)
{
	unsigned l = l0;
	const __m128 s = _mm_set1_ps(scale);
	for (; l + 16 <= l1; l += 16, out += 16)
		sse2_i8x16_store(_mm_loadu_si128((const __m128i *)(grp + l)), s, out);
	nf_kernels_scalar.q8(grp, l, l1, scale, out);
}

/* E2M1 codes (int32 lanes, 0..15) -> binary32 bits: magnitude c = code&7 is
 * (c + 252 - [c==1]) << 22 for c != 0 (0.5, 1, 1.5, 2, 3, 4, 6), 0 for c=0. */
static inline __m128 sse2_e2m1(__m128i code)
{
	__m128i c = _mm_and_si128(code, _mm_set1_epi32(7));
	__m128i t = _mm_add_epi32(_mm_add_epi32(c, _mm_set1_epi32(252)),
				  _mm_cmpeq_epi32(c, _mm_set1_epi32(1)));
	__m128i bits = _mm_andnot_si128(_mm_cmpeq_epi32(c, _mm_setzero_si128()),
					_mm_slli_epi32(t, 22));
	__m128i sign = _mm_slli_epi32(_mm_and_si128(code, _mm_set1_epi32(8)), 28);
	return _mm_castsi128_ps(_mm_or_si128(bits, sign));
}

static void sse2_nvfp4(const uint8_t *codes, size_t nblocks, const float *scales, float div,
		       float *out)
{
	const __m128 d = _mm_set1_ps(div);
	const __m128i m = _mm_set1_epi8(0x0F), z = _mm_setzero_si128();
	/* no variable permute in SSE2: compute like the reference */
	for (size_t bl = 0; bl < nblocks; bl++, codes += 8, out += 16) {
		const __m128 s = _mm_set1_ps(scales[bl]);
		__m128i v = _mm_loadl_epi64((const __m128i *)codes);
		__m128i lo = _mm_and_si128(v, m), hi = _mm_and_si128(_mm_srli_epi16(v, 4), m);
		__m128i c8 = _mm_unpacklo_epi8(lo, hi); /* 16 codes in order */
		__m128i c16a = _mm_unpacklo_epi8(c8, z), c16b = _mm_unpackhi_epi8(c8, z);
		__m128i c[4] = {_mm_unpacklo_epi16(c16a, z), _mm_unpackhi_epi16(c16a, z),
				_mm_unpacklo_epi16(c16b, z), _mm_unpackhi_epi16(c16b, z)};
		for (int j = 0; j < 4; j++)
			_mm_storeu_ps(out + 4 * j, _mm_div_ps(_mm_mul_ps(sse2_e2m1(c[j]), s), d));
	}
}

/* E4M3FN bytes (int32 lanes) -> binary32, as nf_e4m3fn_to_f32(). */
static inline __m128 sse2_e4m3(__m128i b)
{
	__m128i mag = _mm_and_si128(b, _mm_set1_epi32(0x7F));
	__m128i sign = _mm_slli_epi32(_mm_and_si128(b, _mm_set1_epi32(0x80)), 24);
	__m128i norm = _mm_add_epi32(_mm_slli_epi32(mag, 20), _mm_set1_epi32(120 << 23));
	__m128i sub = _mm_castps_si128(_mm_mul_ps(_mm_cvtepi32_ps(mag), _mm_set1_ps(0x1p-9f)));
	__m128i is_sub = _mm_cmplt_epi32(mag, _mm_set1_epi32(8));
	__m128i is_nan = _mm_cmpeq_epi32(mag, _mm_set1_epi32(0x7F));
	__m128i r = _mm_or_si128(_mm_and_si128(is_sub, sub), _mm_andnot_si128(is_sub, norm));
	r = _mm_or_si128(_mm_and_si128(is_nan, _mm_set1_epi32(0x7FC00000)),
			 _mm_andnot_si128(is_nan, r));
	return _mm_castsi128_ps(_mm_or_si128(r, sign));
}

static void sse2_fp8(const uint8_t *codes, size_t n, float scale, float *out)
{
	size_t i = 0;
	const __m128 s = _mm_set1_ps(scale);
	const __m128i z = _mm_setzero_si128();
	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(codes + i));
		__m128i a = _mm_unpacklo_epi8(v, z), b = _mm_unpackhi_epi8(v, z);
		__m128i c[4] = {_mm_unpacklo_epi16(a, z), _mm_unpackhi_epi16(a, z),
				_mm_unpacklo_epi16(b, z), _mm_unpackhi_epi16(b, z)};
		for (int j = 0; j < 4; j++) {
			/* NaN code -> the code's NaN, as the scalar kernel */
			__m128 e = sse2_e4m3(c[j]);
			__m128 nan = _mm_castsi128_ps(_mm_cmpeq_epi32(
				_mm_and_si128(c[j], _mm_set1_epi32(0x7F)), _mm_set1_epi32(0x7F)));
			__m128 p = _mm_mul_ps(e, s);
			_mm_storeu_ps(out + i + 4 * j,
				      _mm_or_ps(_mm_and_ps(nan, e), _mm_andnot_ps(nan, p)));
		}
	}
	if (i < n)
		nf_kernels_scalar.fp8(codes + i, n - i, scale, out + i);
}

static void sse2_bf16(const uint8_t *src, size_t n, float *out)
{
	size_t i = 0;
	const __m128i z = _mm_setzero_si128();
	for (; i + 8 <= n; i += 8) {
		__m128i v = _mm_loadu_si128((const __m128i *)(src + 2 * i));
		_mm_storeu_si128((__m128i *)(out + i), _mm_unpacklo_epi16(z, v));
		_mm_storeu_si128((__m128i *)(out + i + 4), _mm_unpackhi_epi16(z, v));
	}
	if (i < n)
		nf_kernels_scalar.bf16(src + 2 * i, n - i, out + i);
}

/* 32-bit lanes holding 16-bit results -> packed 16-bit words (SSE2 has only
 * the signed-saturating pack: sign-extend the low halves first). */
static inline __m128i sse2_pack16(__m128i a, __m128i b)
{
	a = _mm_srai_epi32(_mm_slli_epi32(a, 16), 16);
	b = _mm_srai_epi32(_mm_slli_epi32(b, 16), 16);
	return _mm_packs_epi32(a, b);
}

static inline __m128i sse2_bf16_one(__m128i x)
{
	__m128i abs = _mm_and_si128(x, _mm_set1_epi32(0x7FFFFFFF));
	__m128i nan = _mm_cmpgt_epi32(abs, _mm_set1_epi32(0x7F800000));
	__m128i odd = _mm_and_si128(_mm_srli_epi32(x, 16), _mm_set1_epi32(1));
	__m128i r = _mm_srli_epi32(_mm_add_epi32(_mm_add_epi32(x, _mm_set1_epi32(0x7FFF)), odd), 16);
	__m128i q = _mm_or_si128(_mm_srli_epi32(x, 16), _mm_set1_epi32(0x40));
	return _mm_or_si128(_mm_and_si128(nan, q), _mm_andnot_si128(nan, r));
}

static void sse2_to_bf16(const float *in, uint16_t *out, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m128i a = sse2_bf16_one(_mm_castps_si128(_mm_loadu_ps(in + i)));
		__m128i b = sse2_bf16_one(_mm_castps_si128(_mm_loadu_ps(in + i + 4)));
		_mm_storeu_si128((__m128i *)(out + i), sse2_pack16(a, b));
	}
	if (i < n)
		nf_kernels_scalar.to_bf16(in + i, out + i, n - i);
}

static inline __m128i sse2_f16_one(__m128i xi)
{
	__m128i sign = _mm_and_si128(_mm_srli_epi32(xi, 16), _mm_set1_epi32(0x8000));
	__m128i x = _mm_and_si128(xi, _mm_set1_epi32(0x7FFFFFFF));
	/* large: inf or NaN */
	__m128i is_nan = _mm_cmpgt_epi32(x, _mm_set1_epi32(0x7F800000));
	__m128i big = _mm_or_si128(
		_mm_and_si128(is_nan, _mm_or_si128(_mm_set1_epi32(0x7E00),
						   _mm_and_si128(_mm_srli_epi32(x, 13),
								 _mm_set1_epi32(0x3FF)))),
		_mm_andnot_si128(is_nan, _mm_set1_epi32(0x7C00)));
	__m128i is_big = _mm_cmpgt_epi32(x, _mm_set1_epi32(0x477FFFFF));
	/* subnormal: IEEE add of 0.5 rounds to the 2^-24 grid */
	__m128i sub = _mm_sub_epi32(
		_mm_castps_si128(_mm_add_ps(_mm_castsi128_ps(x), _mm_set1_ps(0.5f))),
		_mm_set1_epi32(0x3F000000));
	__m128i is_sub = _mm_cmplt_epi32(x, _mm_set1_epi32(0x38800000));
	/* normal */
	__m128i odd = _mm_and_si128(_mm_srli_epi32(x, 13), _mm_set1_epi32(1));
	__m128i nrm = _mm_srli_epi32(
		_mm_add_epi32(_mm_add_epi32(x, _mm_set1_epi32((int)0xC8000FFFu)), odd), 13);
	__m128i r = _mm_or_si128(_mm_and_si128(is_sub, sub), _mm_andnot_si128(is_sub, nrm));
	r = _mm_or_si128(_mm_and_si128(is_big, big), _mm_andnot_si128(is_big, r));
	return _mm_or_si128(_mm_and_si128(r, _mm_set1_epi32(0xFFFF)), sign);
}

static void sse2_to_f16(const float *in, uint16_t *out, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m128i a = sse2_f16_one(_mm_castps_si128(_mm_loadu_ps(in + i)));
		__m128i b = sse2_f16_one(_mm_castps_si128(_mm_loadu_ps(in + i + 4)));
		_mm_storeu_si128((__m128i *)(out + i), sse2_pack16(a, b));
	}
	if (i < n)
		nf_kernels_scalar.to_f16(in + i, out + i, n - i);
}

const struct nf_kernels nf_kernels_sse2 = {
	.q4 = sse2_q4,
	.q8 = sse2_q8,
	.nvfp4 = sse2_nvfp4,
	.fp8 = sse2_fp8,
	.bf16 = sse2_bf16,
	.to_bf16 = sse2_to_bf16,
	.to_f16 = sse2_to_f16,
};

#endif /* NF_HAVE_X86_SIMD */
