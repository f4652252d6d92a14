/* codecs/avx2.c — AVX2+F16C kernels that decode straight to the output
 * dtype (binary32, bf16 or binary16), with no binary32 pass through memory.
 *
 * Every kernel equals the scalar reference (scalar.c: the f32 kernel, then
 * nf_f32_to_bf16_one() / nf_f32_to_f16_one()) bit for bit:
 * - codes are unpacked with integer operations and converted to binary32
 *   exactly; the only float operations are the reference's own single IEEE
 *   multiply (and for nvfp4 its single IEEE division, codecs §3.5, done once
 *   per (scale byte, divisor) into a table of the 16 possible values);
 * - binary32 -> binary16 is VCVTPS2PH with round-to-nearest-even from the
 *   immediate: it rounds exactly as nf_f32_to_f16_one() (subnormal results
 *   kept, |x| >= 65520 -> inf) and turns a NaN into sign | 0x7E00 | the top
 *   9 payload bits, which is the reference's NaN rule (tests/codecs checks
 *   every binary32 high half against the scalar code);
 * - binary32 -> bf16 is the reference's integer round-to-nearest-even, with
 *   the NaN select only where a NaN can occur (a row_split product with a
 *   finite scale cannot be NaN: |q| <= 128 and |scale| <= 65504).
 * Heads and tails that do not fill a 16-element vector go through the
 * reference operations one element at a time, except in the contiguous
 * kernels (fp32 / bf16 objects, the conversions), which cover them with
 * overlapping vectors (ct_run()).  No FMA (meson.build:
 * -ffp-contract=off), no flush-to-zero (MXCSR is never touched).
 *
 * Compiled for every x86-64 build; the functions carry target attributes
 * and are only reached through nf_kernels_for(), which picks this table
 * only when the CPU reports both AVX2 and F16C (simd.c). */
#include "codecs/internal.h"

#ifdef NF_HAVE_X86_SIMD

#include <immintrin.h>

#define TGT __attribute__((target("avx2,f16c")))
#define INL TGT static inline __attribute__((always_inline))

/* ---- one element through the reference operations ---- */

static inline size_t fx_size(int dx)
{
	return dx == NF_FX_F32 ? 4 : 2;
}

static inline void put_one(int dx, uint8_t *o, float v)
{
	if (dx == NF_FX_F32)
		memcpy(o, &v, 4);
	else if (dx == NF_FX_BF16)
		nf_wr16(o, nf_f32_to_bf16_one(v));
	else
		nf_wr16(o, nf_f32_to_f16_one(v));
}

/* ---- 16 binary32 values (a: elements 0-7, b: 8-15) to the dtype ---- */

/* Round to nearest even to the high half; right for every non-NaN input
 * (an overflow carries into the exponent and yields inf, as the scalar). */
INL __m256i bf16_rne(__m256i x)
{
	__m256i odd = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
	return _mm256_srli_epi32(
		_mm256_add_epi32(x, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7FFF))), 16);
}

/* nf_f32_to_bf16_one() on 8 lanes: a NaN becomes its high half | 0x0040. */
INL __m256i bf16_rne_nan(__m256 v)
{
	__m256i x = _mm256_castps_si256(v);
	__m256i q = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
	return _mm256_blendv_epi8(bf16_rne(x), q,
				  _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}

/* bf16 of 16 non-NaN values (a: 0-7, b: 8-15) in order: the high halves H
 * plus the round-to-nearest-even carry of the low halves L,
 * (L + 0x7FFF + (H & 1)) >> 16, which is the top bit of the 16-bit average
 * (L + (0x7FFE | (H & 1)) + 1) >> 1.  Same result as bf16_rne(). */
static const uint8_t halves_bytes[32] = {0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
					 0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15};

INL __m256i bf16x16(__m256 a, __m256 b)
{
	const __m256i hs = _mm256_loadu_si256((const __m256i *)(const void *)halves_bytes);
	__m256i x = _mm256_shuffle_epi8(_mm256_castps_si256(a), hs);
	__m256i y = _mm256_shuffle_epi8(_mm256_castps_si256(b), hs);
	/* per 128-bit lane: a's 4 low halves, b's 4; then the high halves */
	__m256i l = _mm256_unpacklo_epi64(x, y), h = _mm256_unpackhi_epi64(x, y);
	__m256i odd = _mm256_and_si256(h, _mm256_set1_epi16(1));
	__m256i c = _mm256_srli_epi16(
		_mm256_avg_epu16(l, _mm256_or_si256(odd, _mm256_set1_epi16(0x7FFE))), 15);
	return _mm256_permute4x64_epi64(_mm256_add_epi16(h, c), 0xD8);
}

/* Two vectors of 16-bit values in 32-bit lanes -> 16 words in order. */
INL __m256i pack16(__m256i a, __m256i b)
{
	return _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
}

/* nan: whether a NaN lane is possible (bf16 only; f16 and f32 need no
 * care). */
INL void st16(int dx, int nan, uint8_t *o, __m256 a, __m256 b)
{
	if (dx == NF_FX_F32) {
		_mm256_storeu_ps((float *)(void *)o, a);
		_mm256_storeu_ps((float *)(void *)(o + 32), b);
	} else if (dx == NF_FX_F16) {
		_mm_storeu_si128((__m128i *)(void *)o, _mm256_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT));
		_mm_storeu_si128((__m128i *)(void *)(o + 16),
				 _mm256_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT));
	} else if (nan && _mm256_movemask_ps(_mm256_or_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q),
							  _mm256_cmp_ps(b, b, _CMP_UNORD_Q)))) {
		/* a NaN among the 16: the select (one test, then the cheaper
		 * rounding for the common case below) */
		_mm256_storeu_si256((__m256i *)(void *)o, pack16(bf16_rne_nan(a), bf16_rne_nan(b)));
	} else {
		_mm256_storeu_si256((__m256i *)(void *)o, bf16x16(a, b));
	}
}

/* ---- row_split (codecs §2.3): 16 lanes of a group as int32 ---- */

static inline uint32_t ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v; /* little-endian host (decode.c checks) */
}

static inline uint32_t ld16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

/* Lanes 16j..16j+15 of a group: *a gets lanes 0-7, *b lanes 8-15.  Each
 * field is shifted to the top of its 32-bit lane (sllv) and brought down
 * with an arithmetic shift, which sign-extends it in the same step. */
INL void rs_lanes16(enum nf_format f, const uint8_t *base, const uint8_t *high, unsigned j,
		    __m256i *a, __m256i *b)
{
	/* 2-bit fields, lane i at bits 2i..2i+1 of a 32-bit word */
	const __m256i s2a = _mm256_setr_epi32(30, 28, 26, 24, 22, 20, 18, 16);
	const __m256i s2b = _mm256_setr_epi32(14, 12, 10, 8, 6, 4, 2, 0);
	/* nibbles, lane i at bits 4i..4i+3 */
	const __m256i s4 = _mm256_setr_epi32(28, 24, 20, 16, 12, 8, 4, 0);

	switch (f) {
	case NF_FORMAT_Q2_G64_FP16: { /* offset code: q = u - 1 */
		__m256i w = _mm256_set1_epi32((int)ld32(base + 4 * j));
		const __m256i one = _mm256_set1_epi32(1);
		*a = _mm256_sub_epi32(_mm256_srli_epi32(_mm256_sllv_epi32(w, s2a), 30), one);
		*b = _mm256_sub_epi32(_mm256_srli_epi32(_mm256_sllv_epi32(w, s2b), 30), one);
		return;
	}
	case NF_FORMAT_T2_G128_FP16: { /* 2-bit two's complement (0b10 -> -2) */
		__m256i w = _mm256_set1_epi32((int)ld32(base + 4 * j));
		*a = _mm256_srai_epi32(_mm256_sllv_epi32(w, s2a), 30);
		*b = _mm256_srai_epi32(_mm256_sllv_epi32(w, s2b), 30);
		return;
	}
	case NF_FORMAT_Q4_G64_FP16: {
		__m256i w0 = _mm256_set1_epi32((int)ld32(base + 8 * j));
		__m256i w1 = _mm256_set1_epi32((int)ld32(base + 8 * j + 4));
		*a = _mm256_srai_epi32(_mm256_sllv_epi32(w0, s4), 28);
		*b = _mm256_srai_epi32(_mm256_sllv_epi32(w1, s4), 28);
		return;
	}
	case NF_FORMAT_Q5_G64_FP16: {
		/* u = low | hb<<4, q = u - 32 if hb: q = low | (hb ? ~15 : 0) */
		const __m256i h_a = _mm256_setr_epi32(31, 30, 29, 28, 27, 26, 25, 24);
		const __m256i h_b = _mm256_setr_epi32(23, 22, 21, 20, 19, 18, 17, 16);
		const __m256i m = _mm256_set1_epi32(~15);
		__m256i w0 = _mm256_set1_epi32((int)ld32(base + 8 * j));
		__m256i w1 = _mm256_set1_epi32((int)ld32(base + 8 * j + 4));
		__m256i h = _mm256_set1_epi32((int)ld16(high + 2 * j));
		__m256i ha = _mm256_and_si256(_mm256_srai_epi32(_mm256_sllv_epi32(h, h_a), 31), m);
		__m256i hb = _mm256_and_si256(_mm256_srai_epi32(_mm256_sllv_epi32(h, h_b), 31), m);
		*a = _mm256_or_si256(_mm256_srli_epi32(_mm256_sllv_epi32(w0, s4), 28), ha);
		*b = _mm256_or_si256(_mm256_srli_epi32(_mm256_sllv_epi32(w1, s4), 28), hb);
		return;
	}
	case NF_FORMAT_Q6_G64_FP16: {
		/* u = low | h2<<4, 6-bit two's complement: q = low | (signed h2)<<4 */
		__m256i w0 = _mm256_set1_epi32((int)ld32(base + 8 * j));
		__m256i w1 = _mm256_set1_epi32((int)ld32(base + 8 * j + 4));
		__m256i h = _mm256_set1_epi32((int)ld32(high + 4 * j));
		__m256i ha = _mm256_slli_epi32(_mm256_srai_epi32(_mm256_sllv_epi32(h, s2a), 30), 4);
		__m256i hb = _mm256_slli_epi32(_mm256_srai_epi32(_mm256_sllv_epi32(h, s2b), 30), 4);
		*a = _mm256_or_si256(_mm256_srli_epi32(_mm256_sllv_epi32(w0, s4), 28), ha);
		*b = _mm256_or_si256(_mm256_srli_epi32(_mm256_sllv_epi32(w1, s4), 28), hb);
		return;
	}
	case NF_FORMAT_Q8_G32_FP16:
	default: {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(base + 16 * j));
		*a = _mm256_cvtepi8_epi32(v);
		*b = _mm256_cvtepi8_epi32(_mm_srli_si128(v, 8));
		return;
	}
	}
}

static inline unsigned rs_group_size(enum nf_format f)
{
	return f == NF_FORMAT_T2_G128_FP16 ? 128 : f == NF_FORMAT_Q8_G32_FP16 ? 32 : 64;
}

static inline unsigned rs_base_bytes(enum nf_format f)
{
	return f == NF_FORMAT_Q2_G64_FP16 ? 16 : 32;
}

static inline unsigned rs_high_bytes(enum nf_format f)
{
	return f == NF_FORMAT_Q5_G64_FP16 ? 8 : f == NF_FORMAT_Q6_G64_FP16 ? 16 : 0;
}

/* ---- row_split by table: 16-bit outputs of q4 and q5 ----
 *
 * A q4 group has 16 distinct values q * scale, a q5 group 32.  For a finite
 * scale (products finite: bf16 needs no NaN care) they are computed once per
 * group with the reference's multiply and rounding, as 16-entry tables
 * indexed by the low nibble -- one for q4, two for q5 (picked by bit 4) --
 * and VPSHUFB looks the words up, a plane of low bytes and a plane of high
 * bytes at a time.  (Four tables for q6 cost more than its vector path:
 * measured with callgrind, 2.5 against 2.3 instructions per element.) */

static const uint8_t split_bytes[32] = {0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
					0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15};

/* 16 words in order -> [low bytes 0-15 | high bytes 0-15]. */
INL __m256i split16(__m256i w)
{
	w = _mm256_shuffle_epi8(w, _mm256_loadu_si256((const __m256i *)(const void *)split_bytes));
	return _mm256_permute4x64_epi64(w, 0xD8);
}

/* Table of the words of q * scale for nibble u = 0..15, where q runs
 * qa..qa+7 for u = 0..7 and qb..qb+7 for u = 8..15; both byte planes in
 * both 128-bit lanes. */
INL void rs_table(int dx, __m256 s, float qa, float qb, __m256i *tl, __m256i *th)
{
	const __m256 i8 = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
	__m256 a = _mm256_mul_ps(_mm256_add_ps(_mm256_set1_ps(qa), i8), s); /* codecs §2.6 */
	__m256 b = _mm256_mul_ps(_mm256_add_ps(_mm256_set1_ps(qb), i8), s);
	__m256i w;

	if (dx == NF_FX_F16)
		w = _mm256_set_m128i(_mm256_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT),
				     _mm256_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT));
	else
		w = pack16(bf16_rne(_mm256_castps_si256(a)), bf16_rne(_mm256_castps_si256(b)));
	w = split16(w);
	*tl = _mm256_permute4x64_epi64(w, 0x44);
	*th = _mm256_permute4x64_epi64(w, 0xEE);
}

/* One byte plane of nt (1 or 2) tables at 32 nibble indices, table 1
 * where m4 (bit 4 of the code) is set. */
INL __m256i rs_pick(int nt, const __m256i *t, __m256i idx, __m256i m4)
{
	__m256i r = _mm256_shuffle_epi8(t[0], idx);
	if (nt == 1)
		return r;
	return _mm256_blendv_epi8(r, _mm256_shuffle_epi8(t[1], idx), m4);
}

/* 32 lanes (128-bit lane 0: codes 16k..16k+15, lane 1: 16k+32..16k+47) ->
 * their words at o (codes 16k..) and o + 64 (codes 16k+32..). */
INL void rs_lookup32(int nt, const __m256i *tl, const __m256i *th, __m256i idx, __m256i m4,
		     uint8_t *o)
{
	__m256i a = rs_pick(nt, tl, idx, m4), b = rs_pick(nt, th, idx, m4);
	__m256i lo = _mm256_unpacklo_epi8(a, b), hi = _mm256_unpackhi_epi8(a, b);
	_mm256_storeu_si256((__m256i *)(void *)o, _mm256_permute2x128_si256(lo, hi, 0x20));
	_mm256_storeu_si256((__m256i *)(void *)(o + 64), _mm256_permute2x128_si256(lo, hi, 0x31));
}

/* 0xFF in each byte whose bit sel (repeating per byte) is set in v. */
INL __m256i bitmask8(__m256i v, __m256i sel)
{
	return _mm256_cmpeq_epi8(_mm256_and_si256(v, sel), sel);
}

static const uint8_t q5_spread[2][32] = {
	/* high byte of each lane in the order of the nibble vectors below:
	 * lane 0 codes 0-15 / 16-31, lane 1 codes 32-47 / 48-63 */
	{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5},
	{2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7}};

/* A whole q4/q5 group (64 lanes) with a finite scale to 16-bit words. */
INL void rs_group_lut(enum nf_format f, int dx, const uint8_t *base, const uint8_t *high,
		      float scale, uint8_t *o)
{
	const int nt = f == NF_FORMAT_Q4_G64_FP16 ? 1 : 2;
	const __m256 s = _mm256_set1_ps(scale);
	__m256i tl[2], th[2];
	if (nt == 1) { /* q = u, or u - 16 from u = 8 */
		rs_table(dx, s, 0, -8, &tl[0], &th[0]);
	} else { /* q = u + 16 hb - 32 hb */
		rs_table(dx, s, 0, 8, &tl[0], &th[0]);
		rs_table(dx, s, -16, -8, &tl[1], &th[1]);
	}
	const __m256i m = _mm256_set1_epi8(0x0F);
	__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)base);
	__m256i lo = _mm256_and_si256(v, m), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
	/* even lanes are low nibbles (codecs §2.3): interleave per 128-bit
	 * lane, giving codes 0-15 | 32-47 and 16-31 | 48-63 */
	__m256i idx[2] = {_mm256_unpacklo_epi8(lo, hi), _mm256_unpackhi_epi8(lo, hi)};
	__m256i m4[2] = {m, m};
	if (nt == 2) { /* bit l%8 of high byte l/8 */
		const __m256i sel = _mm256_set1_epi64x(0x8040201008040201ll);
		__m256i h = _mm256_set1_epi64x((long long)(ld32(high) | (uint64_t)ld32(high + 4) << 32));
		for (int k = 0; k < 2; k++)
			m4[k] = bitmask8(_mm256_shuffle_epi8(h, _mm256_loadu_si256(
				(const __m256i *)(const void *)q5_spread[k])), sel);
	}
	rs_lookup32(nt, tl, th, idx[0], m4[0], o);      /* codes 0-15, 32-47 */
	rs_lookup32(nt, tl, th, idx[1], m4[1], o + 32); /* codes 16-31, 48-63 */
}

/* Lanes [l, l1) of one group through the reference operations (heads,
 * tails, and bf16 output under an Inf/NaN scale); returns the next output
 * byte.  Out of line: the vector loops stay free of calls. */
TGT __attribute__((noinline, cold)) static uint8_t *rs_ref(enum nf_format f, int dx,
							 const uint8_t *base,
							 const uint8_t *high, float sc,
							 unsigned l, unsigned l1, uint8_t *o)
{
	for (; l < l1; l++, o += fx_size(dx))
		put_one(dx, o, (float)nf_rs_lane(f, base, high, l) * sc);
	return o;
}

/* Lanes [l, l1) of one group with scale word w; returns the next output
 * byte. */
INL uint8_t *rs_lanes(enum nf_format f, int dx, const uint8_t *base, const uint8_t *high,
		      uint16_t w, unsigned l, unsigned l1, uint8_t *o)
{
	const size_t es = fx_size(dx);
	/* VCVTPH2PS is exact for every binary16 and keeps subnormals; it
	 * differs from nf_f16_to_f32() only by quieting a signalling NaN,
	 * which the multiply quiets anyway */
	const float sc = _cvtsh_ss(w);

	/* a finite scale gives finite products (codecs §2.6); an Inf or NaN
	 * scale word (invalid, decoded anyway) can give NaN, which the bf16
	 * vector path does not handle: the reference does */
	if (dx == NF_FX_BF16 && (w & 0x7C00) == 0x7C00)
		return rs_ref(f, dx, base, high, sc, l, l1, o);
	if (l % 16) {
		unsigned h = (l + 15) / 16 * 16 < l1 ? (l + 15) / 16 * 16 : l1;
		o = rs_ref(f, dx, base, high, sc, l, h, o);
		l = h;
	}
	const __m256 s = _mm256_set1_ps(sc);
	for (; l + 16 <= l1; l += 16, o += 16 * es) {
		__m256i a, b;
		rs_lanes16(f, base, high, l / 16, &a, &b);
		st16(dx, 0, o, _mm256_mul_ps(_mm256_cvtepi32_ps(a), s),
		     _mm256_mul_ps(_mm256_cvtepi32_ps(b), s));
	}
	if (l < l1)
		o = rs_ref(f, dx, base, high, sc, l, l1, o);
	return o;
}

/* A whole group with scale word w (the common case: no lane bookkeeping). */
INL void rs_group(enum nf_format f, int dx, const uint8_t *base, const uint8_t *high,
		  uint16_t w, uint8_t *o)
{
	const unsigned G = rs_group_size(f);
	const size_t es = fx_size(dx);

	if ((w & 0x7C00) == 0x7C00) { /* Inf/NaN scale: rare */
		rs_lanes(f, dx, base, high, w, 0, G, o);
		return;
	}
	if ((f == NF_FORMAT_Q4_G64_FP16 || f == NF_FORMAT_Q5_G64_FP16) && dx != NF_FX_F32) {
		rs_group_lut(f, dx, base, high, _cvtsh_ss(w), o);
		return;
	}
	const __m256 s = _mm256_set1_ps(_cvtsh_ss(w));
#pragma GCC unroll 8
	for (unsigned j = 0; j < G / 16; j++) {
		__m256i a, b;
		rs_lanes16(f, base, high, j, &a, &b);
		st16(dx, 0, o + 16 * j * es, _mm256_mul_ps(_mm256_cvtepi32_ps(a), s),
		     _mm256_mul_ps(_mm256_cvtepi32_ps(b), s));
	}
}

/* n elements of one row from lane l0 of the first group (see internal.h). */
INL void rs_row(enum nf_format f, int dx, const uint8_t *base, const uint8_t *high,
		const uint8_t *scale, unsigned l0, size_t n, uint8_t *o)
{
	const unsigned G = rs_group_size(f), B = rs_base_bytes(f), H = rs_high_bytes(f);
	const size_t es = fx_size(dx);

	/* each group lies wholly inside the fetched spans, so the pointers
	 * stay within one past their ends */
	if (l0) { /* the rest of the first group */
		unsigned l1 = n < G - l0 ? l0 + (unsigned)n : G;
		o = rs_lanes(f, dx, base, high, (uint16_t)ld16(scale), l0, l1, o);
		n -= l1 - l0;
		base += B;
		if (H)
			high += H;
		scale += 2;
	}
	for (; n >= G; n -= G, o += G * es) {
		rs_group(f, dx, base, high, (uint16_t)ld16(scale), o);
		base += B;
		if (H)
			high += H;
		scale += 2;
	}
	if (n) /* the start of the last group */
		rs_lanes(f, dx, base, high, (uint16_t)ld16(scale), 0, (unsigned)n, o);
}

#define RS_FN(NAME, F, DX)                                                                    \
	TGT static void NAME(const uint8_t *base, const uint8_t *high, const uint8_t *scale,  \
			     unsigned l0, size_t n, void *out)                                \
	{                                                                                     \
		rs_row(F, DX, base, high, scale, l0, n, out);                                 \
	}
#define RS_FNS(P, F)                       \
	RS_FN(P##_f32, F, NF_FX_F32)       \
	RS_FN(P##_bf16, F, NF_FX_BF16)     \
	RS_FN(P##_f16, F, NF_FX_F16)
RS_FNS(rs_q2, NF_FORMAT_Q2_G64_FP16)
RS_FNS(rs_q4, NF_FORMAT_Q4_G64_FP16)
RS_FNS(rs_q5, NF_FORMAT_Q5_G64_FP16)
RS_FNS(rs_q6, NF_FORMAT_Q6_G64_FP16)
RS_FNS(rs_q8, NF_FORMAT_Q8_G32_FP16)
RS_FNS(rs_t2, NF_FORMAT_T2_G128_FP16)

/* ---- nvfp4 (codecs §3) ---- */

static inline float nv_one(unsigned code, float scale, float div)
{
	float p = nf_e2m1_to_f32((uint8_t)code) * scale; /* exact (codecs §3.5) */
	return p / div;                                  /* one IEEE division */
}

/* Fill table row s for the dtype: the reference's two operations on all
 * 16 codes at once. */
TGT __attribute__((noinline)) static void nv_build(int dx, struct nf_nv_tables *t, uint8_t s)
{
	const __m256 e_pos = _mm256_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f);
	__m256 e_neg = _mm256_setr_ps(-0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f);
	/* keep (-e) * s / d as written: the compiler may otherwise compute
	 * -(e * s / d), which differs from the reference in a NaN's sign
	 * (x86 returns the NaN operand unchanged: (-0.5) * NaN is +NaN) */
	__asm__("" : "+x"(e_neg));
	const __m256 sc = _mm256_set1_ps(nf_e4m3fn_to_f32(s)), d = _mm256_set1_ps(t->div);
	__m256 a = _mm256_div_ps(_mm256_mul_ps(e_pos, sc), d);
	__m256 b = _mm256_div_ps(_mm256_mul_ps(e_neg, sc), d);

	if (dx == NF_FX_F32) {
		_mm256_storeu_ps(t->v.f[s], a);
		_mm256_storeu_ps(t->v.f[s] + 8, b);
	} else {
		__m256i w;
		if (dx == NF_FX_F16)
			w = _mm256_set_m128i(_mm256_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT),
					     _mm256_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT));
		else
			w = pack16(bf16_rne_nan(a), bf16_rne_nan(b));
		_mm256_storeu_si256((__m256i *)(void *)t->v.h[s], split16(w));
	}
	t->have[s] = 1;
}

/* One whole 16-element block: 8 code bytes, low nibble first. */
INL void nv_block(int dx, const uint8_t *codes, const struct nf_nv_tables *t, uint8_t s,
		  uint8_t *o)
{
	const __m128i m = _mm_set1_epi8(0x0F);
	__m128i v = _mm_loadl_epi64((const __m128i *)(const void *)codes);
	__m128i c8 = _mm_unpacklo_epi8(_mm_and_si128(v, m),
				       _mm_and_si128(_mm_srli_epi16(v, 4), m)); /* in order */

	if (dx == NF_FX_F32) {
		const __m256 pos = _mm256_loadu_ps(t->v.f[s]), neg = _mm256_loadu_ps(t->v.f[s] + 8);
		__m256i c0 = _mm256_cvtepu8_epi32(c8), c1 = _mm256_cvtepu8_epi32(_mm_srli_si128(c8, 8));
		/* permutevar uses the low 3 bits; bit 3 (the sign) picks the
		 * table half through the blend mask's sign bit */
		__m256 a = _mm256_blendv_ps(_mm256_permutevar8x32_ps(pos, c0),
					    _mm256_permutevar8x32_ps(neg, c0),
					    _mm256_castsi256_ps(_mm256_slli_epi32(c0, 28)));
		__m256 b = _mm256_blendv_ps(_mm256_permutevar8x32_ps(pos, c1),
					    _mm256_permutevar8x32_ps(neg, c1),
					    _mm256_castsi256_ps(_mm256_slli_epi32(c1, 28)));
		_mm256_storeu_ps((float *)(void *)o, a);
		_mm256_storeu_ps((float *)(void *)(o + 32), b);
	} else {
		const __m128i lo = _mm_loadu_si128((const __m128i *)(const void *)t->v.h[s]);
		const __m128i hi = _mm_loadu_si128((const __m128i *)(const void *)(t->v.h[s] + 16));
		__m128i l = _mm_shuffle_epi8(lo, c8), h = _mm_shuffle_epi8(hi, c8);
		_mm_storeu_si128((__m128i *)(void *)o, _mm_unpacklo_epi8(l, h));
		_mm_storeu_si128((__m128i *)(void *)(o + 16), _mm_unpackhi_epi8(l, h));
	}
}

/* m < 16 elements of one block through the reference operations, from
 * nibble `rel` of codes[]; returns the next output byte. */
TGT __attribute__((noinline, cold)) static uint8_t *nv_ref(int dx, const uint8_t *codes,
							 size_t rel, size_t m, uint8_t s,
							 float div, uint8_t *o)
{
	float scale = nf_e4m3fn_to_f32(s);
	for (size_t j = rel; j < rel + m; j++, o += fx_size(dx))
		put_one(dx, o, nv_one((codes[j / 2] >> (4 * (j % 2))) & 0xF, scale, div));
	return o;
}

/* The next block's scale byte: +1 inside a 512-byte tile, else the next
 * tile (codecs §3.3). */
static inline size_t nv_next(size_t so, unsigned *ph)
{
	so += *ph == 3 ? 509 : 1;
	*ph = (*ph + 1) & 3;
	return so;
}

/* Two whole blocks (16 code bytes) to 16-bit words: block 0 by table row
 * s0, block 1 by s1, one block per 128-bit lane. */
INL void nv_block2_u16(const uint8_t *codes, const struct nf_nv_tables *t, uint8_t s0,
		       uint8_t s1, uint8_t *o)
{
	const __m128i m = _mm_set1_epi8(0x0F);
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)codes);
	__m128i lo = _mm_and_si128(v, m), hi = _mm_and_si128(_mm_srli_epi16(v, 4), m);
	__m256i idx = _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi));
#define NV_LD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
	__m256i tl = _mm256_set_m128i(NV_LD(t->v.h[s1]), NV_LD(t->v.h[s0]));
	__m256i th = _mm256_set_m128i(NV_LD(t->v.h[s1] + 16), NV_LD(t->v.h[s0] + 16));
#undef NV_LD
	__m256i a = _mm256_shuffle_epi8(tl, idx), b = _mm256_shuffle_epi8(th, idx);
	__m256i w0 = _mm256_unpacklo_epi8(a, b), w1 = _mm256_unpackhi_epi8(a, b);
	/* w0 = words 0-7 of both blocks, w1 = words 8-15 */
	_mm256_storeu_si256((__m256i *)(void *)o, _mm256_permute2x128_si256(w0, w1, 0x20));
	_mm256_storeu_si256((__m256i *)(void *)(o + 32), _mm256_permute2x128_si256(w0, w1, 0x31));
}

INL void nv_one_block(int dx, const uint8_t *codes, struct nf_nv_tables *t, uint8_t s,
		      uint8_t *o)
{
	if (!t->have[s])
		nv_build(dx, t, s);
	nv_block(dx, codes, t, s, o);
}

/* Fill the missing rows of four scale bytes (out of line: rare). */
TGT __attribute__((noinline, cold)) static void nv_build4(int dx, struct nf_nv_tables *t,
							 const uint8_t s[4])
{
	for (int i = 0; i < 4; i++)
		if (!t->have[s[i]])
			nv_build(dx, t, s[i]);
}

INL void nv_row(int dx, const uint8_t *codes, const uint8_t *sc, uint64_t c0, size_t n,
		struct nf_nv_tables *t, uint8_t *o)
{
	const size_t es = fx_size(dx);
	unsigned ph = (unsigned)(c0 / 16 % 4); /* block's place in its tile */
	size_t so = 0;                         /* offset of the block's scale byte */
	size_t in_blk = (size_t)(c0 % 16);

	if (in_blk) { /* the rest of c0's block */
		size_t m = 16 - in_blk < n ? 16 - in_blk : n;
		o = nv_ref(dx, codes, (size_t)(c0 & 1), m, sc[0], t->div, o);
		codes += ((c0 & 1) + m) / 2; /* m has c0's parity: even sum */
		n -= m;
		so = nv_next(so, &ph);
	}
	/* whole blocks up to the next tile */
	for (; n >= 16 && ph; n -= 16, codes += 8, o += 16 * es) {
		nv_one_block(dx, codes, t, sc[so], o);
		so = nv_next(so, &ph);
	}
	/* whole tiles: four blocks whose scale bytes are sc[so..so+3] */
	for (; n >= 64; n -= 64, codes += 32, o += 64 * es, so += 512) {
		const uint8_t *s = sc + so;
		if (!(t->have[s[0]] & t->have[s[1]] & t->have[s[2]] & t->have[s[3]]))
			nv_build4(dx, t, s);
		if (dx == NF_FX_F32) {
			for (int i = 0; i < 4; i++)
				nv_block(dx, codes + 8 * i, t, s[i], o + 64 * i);
		} else {
			nv_block2_u16(codes, t, s[0], s[1], o);
			nv_block2_u16(codes + 16, t, s[2], s[3], o + 64);
		}
	}
	/* whole blocks of a last partial tile, then a partial block */
	for (; n >= 16; n -= 16, codes += 8, o += 16 * es) {
		nv_one_block(dx, codes, t, sc[so], o);
		so = nv_next(so, &ph);
	}
	if (n)
		nv_ref(dx, codes, 0, n, sc[so], t->div, o);
}

#define NV_FN(NAME, DX)                                                                      \
	TGT static void NAME(const uint8_t *codes, const uint8_t *sc, uint64_t c0, size_t n, \
			     struct nf_nv_tables *t, void *out)                              \
	{                                                                                    \
		nv_row(DX, codes, sc, c0, n, t, out);                                        \
	}
NV_FN(nv_f32, NF_FX_F32)
NV_FN(nv_bf16, NF_FX_BF16)
NV_FN(nv_f16, NF_FX_F16)

/* ---- fp8_e4m3fn_row_bf16 (codecs §4) ---- */

/* E4M3FN bytes (int32 lanes) -> binary32, as nf_e4m3fn_to_f32(). */
INL __m256 e4m3(__m256i b)
{
	__m256i mag = _mm256_and_si256(b, _mm256_set1_epi32(0x7F));
	__m256i sign = _mm256_slli_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x80)), 24);
	__m256i norm = _mm256_add_epi32(_mm256_slli_epi32(mag, 20), _mm256_set1_epi32(120 << 23));
	__m256 sub = _mm256_mul_ps(_mm256_cvtepi32_ps(mag), _mm256_set1_ps(0x1p-9f));
	__m256i is_sub = _mm256_cmpgt_epi32(_mm256_set1_epi32(8), mag);
	__m256i is_nan = _mm256_cmpeq_epi32(mag, _mm256_set1_epi32(0x7F));
	__m256 r = _mm256_blendv_ps(_mm256_castsi256_ps(norm), sub, _mm256_castsi256_ps(is_sub));
	r = _mm256_blendv_ps(r, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000)),
			     _mm256_castsi256_ps(is_nan));
	return _mm256_or_ps(r, _mm256_castsi256_ps(sign));
}

/* A NaN code yields the code's NaN whatever the scale (scalar.c k_fp8). */
INL __m256 fp8_mul(__m256i c, __m256 s)
{
	const __m256i m7f = _mm256_set1_epi32(0x7F);
	__m256 e = e4m3(c);
	__m256 nan = _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(c, m7f), m7f));
	return _mm256_blendv_ps(_mm256_mul_ps(e, s), e, nan);
}

static inline float fp8_one(uint8_t c, float scale)
{
	return (c & 0x7F) == 0x7F ? nf_e4m3fn_to_f32(c) : nf_e4m3fn_to_f32(c) * scale;
}

/* E4M3FN -> binary32 through binary16: sign<<15 | (byte & 0x7F)<<7 is the
 * binary16 word of value/256 (exponent bias 15 = 7 + 8; e = 0 lands on the
 * binary16 subnormals), exact in VCVTPH2PS.  Times s256 = 256 * scale (when
 * that is exact: fp8_run) the product is the real value e4m3 * scale, so its
 * one rounding is the reference's.  Not for the NaN codes 0x7F/0xFF (they
 * would read as +-480). */
INL void fp8_16(const __m128i v, __m256 s256, __m256 *a, __m256 *b)
{
	/* byte << 8, shifted right arithmetically: the sign lands in bits 15
	 * and 14, the magnitude in 13..7; clearing bit 14 and the low bits
	 * leaves sign<<15 | (byte & 0x7F)<<7 */
	__m256i w = _mm256_srai_epi16(_mm256_slli_epi16(_mm256_cvtepu8_epi16(v), 8), 1);
	__m256i h = _mm256_and_si256(w, _mm256_set1_epi16((short)0xBF80));
	*a = _mm256_mul_ps(_mm256_cvtph_ps(_mm256_castsi256_si128(h)), s256);
	*b = _mm256_mul_ps(_mm256_cvtph_ps(_mm256_extracti128_si256(h, 1)), s256);
}

/* Whether any of the 16 codes is a NaN code (0x7F, 0xFF). */
INL int fp8_has_nan(__m128i v)
{
	return _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_or_si128(v, _mm_set1_epi8((char)0x80)),
						_mm_set1_epi8((char)0xFF)));
}

/* 16 codes: through binary16 when no NaN code is among them, else the
 * reference's select (a NaN code yields its own NaN). */
INL void fp8_vec(int dx, int nan, __m128i v, __m256 s, __m256 s256, int fast, uint8_t *o)
{
	if (fast && !fp8_has_nan(v)) {
		__m256 a, b;
		fp8_16(v, s256, &a, &b);
		st16(dx, nan, o, a, b);
	} else {
		st16(dx, 1, o, fp8_mul(_mm256_cvtepu8_epi32(v), s),
		     fp8_mul(_mm256_cvtepu8_epi32(_mm_srli_si128(v, 8)), s));
	}
}

/* n codes; fast: 256 * scale is exact; nan: a NaN product is possible. */
INL void fp8_loop(int dx, int nan, int fast, const uint8_t *codes, size_t n, float scale,
		  uint8_t *o)
{
	const size_t es = fx_size(dx);
	const __m256 s = _mm256_set1_ps(scale), s256 = _mm256_set1_ps(scale * 256.0f);
	size_t i = 0;

	for (; fast && i + 64 <= n; i += 64, o += 64 * es) {
		const __m128i *p = (const __m128i *)(const void *)(codes + i);
		__m128i v0 = _mm_loadu_si128(p), v1 = _mm_loadu_si128(p + 1);
		__m128i v2 = _mm_loadu_si128(p + 2), v3 = _mm_loadu_si128(p + 3);
		/* one NaN-code test for 64 codes: a NaN code has bits 0-6 set */
		const __m128i k = _mm_set1_epi8(0x7F);
		__m128i e = _mm_or_si128(
			_mm_or_si128(_mm_cmpeq_epi8(_mm_and_si128(v0, k), k),
				     _mm_cmpeq_epi8(_mm_and_si128(v1, k), k)),
			_mm_or_si128(_mm_cmpeq_epi8(_mm_and_si128(v2, k), k),
				     _mm_cmpeq_epi8(_mm_and_si128(v3, k), k)));
		if (__builtin_expect(_mm_movemask_epi8(e) == 0, 1)) {
			__m256 a, b;
			fp8_16(v0, s256, &a, &b);
			st16(dx, nan, o, a, b);
			fp8_16(v1, s256, &a, &b);
			st16(dx, nan, o + 16 * es, a, b);
			fp8_16(v2, s256, &a, &b);
			st16(dx, nan, o + 32 * es, a, b);
			fp8_16(v3, s256, &a, &b);
			st16(dx, nan, o + 48 * es, a, b);
		} else {
			fp8_vec(dx, nan, v0, s, s256, 1, o);
			fp8_vec(dx, nan, v1, s, s256, 1, o + 16 * es);
			fp8_vec(dx, nan, v2, s, s256, 1, o + 32 * es);
			fp8_vec(dx, nan, v3, s, s256, 1, o + 48 * es);
		}
	}
	for (; i + 16 <= n; i += 16, o += 16 * es)
		fp8_vec(dx, nan, _mm_loadu_si128((const __m128i *)(const void *)(codes + i)), s,
			s256, fast, o);
	for (; i < n; i++, o += es)
		put_one(dx, o, fp8_one(codes[i], scale));
}

/* fp8 -> bf16 by a row table (issue 15: in the daemon's in-cache regime
 * the binary32 product and its bf16 rounding cost ~21 vector operations
 * per 16 codes, bench/README.md).  A normal code (e = 1..15, mantissa m)
 * has the value 2^e * (1 + m/8) * 2^-7; with the row's scale the product
 * (1 + m/8) * 2^-7 * scale is exact in binary32 and, when it and all its
 * 2^e multiples are normal and finite, its bf16 rounding is the same bit
 * pattern whatever e is: bf16(code * scale) = T[m] + (e << 7), the
 * exponent field added.  A subnormal code (e = 0) is m * 2^-9, its
 * products T[8 + m] are taken as they are; the code's sign flips the
 * result's (round to nearest even is symmetric; a zero code gives the
 * signed zero of +-0 * scale).  Both 8-entry halves come from the
 * reference's own multiply and rounding, computed per call.  Valid when
 * the scale's exponent field is 27..227 (|scale| in [2^-100, 2^101)):
 * then every T entry is normal and T + (15 << 7) stays below the inf
 * exponent; NaN codes take the general path. */
static const float fp8_tab_vals[16] = {
	0x1p-7f * 1.0f,   0x1p-7f * 1.125f, 0x1p-7f * 1.25f, 0x1p-7f * 1.375f,
	0x1p-7f * 1.5f,   0x1p-7f * 1.625f, 0x1p-7f * 1.75f, 0x1p-7f * 1.875f,
	0.0f,             0x1p-9f * 1,      0x1p-9f * 2,     0x1p-9f * 3,
	0x1p-9f * 4,      0x1p-9f * 5,      0x1p-9f * 6,     0x1p-9f * 7};

static inline int fp8_tab_ok(float scale)
{
	const uint32_t ex = nf_f32_bits(scale) >> 23 & 0xFF;
	return ex >= 27 && ex <= 227;
}

/* The table's 16 words as their low bytes (*lo) and high bytes (*hi), each
 * in both 128-bit lanes (VPSHUFB looks up within a lane). */
INL void fp8_tab(float scale, __m256i *lo, __m256i *hi)
{
	const __m256 s = _mm256_set1_ps(scale);
	__m256i w = bf16x16(_mm256_mul_ps(_mm256_loadu_ps(fp8_tab_vals), s),
			    _mm256_mul_ps(_mm256_loadu_ps(fp8_tab_vals + 8), s));
	/* per lane: the 8 low bytes, then the 8 high bytes */
	const __m256i sp = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
					    0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
	w = _mm256_shuffle_epi8(w, sp);
	__m128i a = _mm256_castsi256_si128(w), b = _mm256_extracti128_si256(w, 1);
	*lo = _mm256_broadcastsi128_si256(_mm_unpacklo_epi64(a, b));
	*hi = _mm256_broadcastsi128_si256(_mm_unpackhi_epi64(a, b));
}

/* 32 codes, none a NaN code, to 32 bf16 words at o. */
INL void fp8_tab32(__m256i v, __m256i lo, __m256i hi, uint8_t *o)
{
	/* quarters 0 2 | 1 3: the byte unpacks below then give codes 0-15
	 * and 16-31 in order */
	v = _mm256_permute4x64_epi64(v, 0xD8);
	__m256i ez = _mm256_cmpeq_epi8(_mm256_and_si256(v, _mm256_set1_epi8(0x78)),
				       _mm256_setzero_si256());
	__m256i idx = _mm256_or_si256(_mm256_and_si256(v, _mm256_set1_epi8(7)),
				      _mm256_and_si256(ez, _mm256_set1_epi8(8)));
	__m256i tl = _mm256_shuffle_epi8(lo, idx), th = _mm256_shuffle_epi8(hi, idx);
	/* the code in the high byte of its word: sign at bit 15, e at 11-14 */
	__m256i c0 = _mm256_unpacklo_epi8(_mm256_setzero_si256(), v);
	__m256i c1 = _mm256_unpackhi_epi8(_mm256_setzero_si256(), v);
	const __m256i me = _mm256_set1_epi16(0x7800), ms = _mm256_set1_epi16((short)0x8000);
	__m256i w0 = _mm256_add_epi16(_mm256_unpacklo_epi8(tl, th),
				      _mm256_srli_epi16(_mm256_and_si256(c0, me), 4));
	__m256i w1 = _mm256_add_epi16(_mm256_unpackhi_epi8(tl, th),
				      _mm256_srli_epi16(_mm256_and_si256(c1, me), 4));
	_mm256_storeu_si256((__m256i *)(void *)o, _mm256_xor_si256(w0, _mm256_and_si256(c0, ms)));
	_mm256_storeu_si256((__m256i *)(void *)(o + 32),
			    _mm256_xor_si256(w1, _mm256_and_si256(c1, ms)));
}

/* n >= 64 codes to bf16 with the table; fp8_tab_ok(scale). */
INL void fp8_tab_loop(const uint8_t *codes, size_t n, float scale, uint8_t *o)
{
	const __m256 s = _mm256_set1_ps(scale), s256 = _mm256_set1_ps(scale * 256.0f);
	__m256i lo, hi;
	size_t i = 0;

	fp8_tab(scale, &lo, &hi);
	for (; i + 64 <= n; i += 64, o += 128) {
		const __m256i *p = (const __m256i *)(const void *)(codes + i);
		__m256i v0 = _mm256_loadu_si256(p), v1 = _mm256_loadu_si256(p + 1);
		/* one NaN-code test for 64 codes: a NaN code has bits 0-6 set */
		const __m256i k = _mm256_set1_epi8(0x7F);
		__m256i e = _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_and_si256(v0, k), k),
					    _mm256_cmpeq_epi8(_mm256_and_si256(v1, k), k));
		if (__builtin_expect(_mm256_testz_si256(e, e), 1)) {
			fp8_tab32(v0, lo, hi, o);
			fp8_tab32(v1, lo, hi, o + 64);
		} else {
			for (unsigned q = 0; q < 4; q++)
				fp8_vec(NF_FX_BF16, 0,
					_mm_loadu_si128((const __m128i *)(const void *)(codes + i) + q),
					s, s256, 1, o + 32 * q);
		}
	}
	if (i < n) /* |scale| < 2^101: 256 * scale is exact (fp8_run) */
		fp8_loop(NF_FX_BF16, 0, 1, codes + i, n - i, scale, o);
}

INL void fp8_run(int dx, const uint8_t *codes, size_t n, float scale, uint8_t *o)
{
	const uint32_t sb = nf_f32_bits(scale) & 0x7FFFFFFFu;
	if (dx == NF_FX_BF16 && n >= 64 && fp8_tab_ok(scale)) {
		fp8_tab_loop(codes, n, scale, o);
		return;
	}
	/* 256 * scale is exact unless |scale| >= 2^120 (finite); with a
	 * finite scale and no NaN code a product is finite or +-inf, never
	 * NaN (codecs §4.3) */
	if (sb < (247u << 23))
		fp8_loop(dx, 0, 1, codes, n, scale, o);
	else if (sb >= 0x7F800000u)
		fp8_loop(dx, 1, 1, codes, n, scale, o);
	else
		fp8_loop(dx, 0, 0, codes, n, scale, o);
}

#define FP8_FN(NAME, DX)                                                               \
	TGT static void NAME(const uint8_t *codes, size_t n, float scale, void *out)   \
	{                                                                              \
		fp8_run(DX, codes, n, scale, out);                                     \
	}
FP8_FN(fp8_f32, NF_FX_F32)
FP8_FN(fp8_bf16, NF_FX_BF16)
FP8_FN(fp8_f16, NF_FX_F16)

/* ---- contiguous bf16 and fp32 (codecs §1) ----
 *
 * These kernels read as many bytes as they write (bf16 -> f16 / f32: half
 * as many) or twice as many (fp32 -> bf16 / f16), with a few instructions
 * per 16 elements: their speed is memory traffic (bench/README.md).  So:
 * every store after the first vector's on a 32-byte boundary of the output
 * (when the output is element-aligned: a store across two cache lines costs
 * two line accesses), two vectors per step; the last 16 elements are
 * one more vector ending at the end, which rewrites the few words of the
 * vector before it with the same values instead of a scalar tail; fewer
 * than 16 elements go through the same vector on a copy of the input. */

enum { CT_BF16, CT_FP32 };

/* 16 source words as binary32, elements 0-7 in *a and 8-15 in *b. */
INL void ct_load16(int sf, const uint8_t *src, __m256 *a, __m256 *b)
{
	if (sf == CT_BF16) {
		/* quarters 0 2 | 1 3, then each word into the high half of a
		 * 32-bit lane (codecs §0.1) */
		__m256i v = _mm256_permute4x64_epi64(
			_mm256_loadu_si256((const __m256i *)(const void *)src), 0xD8);
		*a = _mm256_castsi256_ps(_mm256_unpacklo_epi16(_mm256_setzero_si256(), v));
		*b = _mm256_castsi256_ps(_mm256_unpackhi_epi16(_mm256_setzero_si256(), v));
	} else {
		*a = _mm256_loadu_ps((const float *)(const void *)src);
		*b = _mm256_loadu_ps((const float *)(const void *)(src + 32));
	}
}

/* 16 elements from src to o in the dtype (any alignment). */
INL void ct16(int sf, int dx, const uint8_t *src, uint8_t *o)
{
	__m256 a, b;
	ct_load16(sf, src, &a, &b);
	/* f16: two 16-byte stores (one 32-byte store needs a VINSERTI128,
	 * about 30% slower in L1 on Zen 3, bench/README.md); bf16 (from fp32
	 * only): checked for NaN */
	st16(dx, 1, o, a, b);
}

INL void ct_run(int sf, int dx, const uint8_t *src, size_t n, uint8_t *o)
{
	const size_t es = fx_size(dx), ss = sf == CT_BF16 ? 2 : 4;

	if (n < 16) {
		uint8_t in[64] = {0}, w[64];
		memcpy(in, src, n * ss);
		ct16(sf, dx, in, w);
		memcpy(o, w, n * es);
		return;
	}
	ct16(sf, dx, src, o);
	/* elements up to the output's next 32-byte boundary: 1..16 */
	const size_t mis = (size_t)((uintptr_t)o % 32);
	size_t i = mis && mis % es == 0 ? (32 - mis) / es : 16;
	for (; i + 32 <= n; i += 32) {
		ct16(sf, dx, src + i * ss, o + i * es);
		ct16(sf, dx, src + (i + 16) * ss, o + (i + 16) * es);
	}
	if (i + 16 <= n) {
		ct16(sf, dx, src + i * ss, o + i * es);
		i += 16;
	}
	if (i < n) /* n >= 16: the last whole vector */
		ct16(sf, dx, src + (n - 16) * ss, o + (n - 16) * es);
}

#define CT_FN(NAME, SF, DX)                                                  \
	TGT static void NAME(const uint8_t *src, size_t n, void *out)        \
	{                                                                    \
		ct_run(SF, DX, src, n, out);                                 \
	}
CT_FN(bf16_f32, CT_BF16, NF_FX_F32)
CT_FN(bf16_f16, CT_BF16, NF_FX_F16)
CT_FN(f32_bf16, CT_FP32, NF_FX_BF16)
CT_FN(f32_f16, CT_FP32, NF_FX_F16)

/* nf_f32_to_bf16() / nf_f32_to_f16() (aligned or not, the same code). */
TGT static void to_bf16(const float *in, uint16_t *out, size_t n)
{
	ct_run(CT_FP32, NF_FX_BF16, (const uint8_t *)in, n, (uint8_t *)out);
}

TGT static void to_f16(const float *in, uint16_t *out, size_t n)
{
	ct_run(CT_FP32, NF_FX_F16, (const uint8_t *)in, n, (uint8_t *)out);
}

const struct nf_kernels nf_kernels_avx2 = {
	.to_bf16 = to_bf16,
	.to_f16 = to_f16,
	.fused = 1,
	.rs = {
		{rs_q2_f32, rs_q2_bf16, rs_q2_f16},
		{rs_q4_f32, rs_q4_bf16, rs_q4_f16},
		{rs_q5_f32, rs_q5_bf16, rs_q5_f16},
		{rs_q6_f32, rs_q6_bf16, rs_q6_f16},
		{rs_q8_f32, rs_q8_bf16, rs_q8_f16},
		{rs_t2_f32, rs_t2_bf16, rs_t2_f16},
	},
	.nv = {nv_f32, nv_bf16, nv_f16},
	.fp8x = {fp8_f32, fp8_bf16, fp8_f16},
	.bf16x = {bf16_f32, NULL, bf16_f16},
	.f32x = {NULL, f32_bf16, f32_f16},
};

#endif /* NF_HAVE_X86_SIMD */
