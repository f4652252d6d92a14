/* codecs/invariants.c — deep checks of a whole encoded object (the checker's
 * --deep mode reports them as warnings with the object id).
 *
 * Stable finding codes (struct nf_violation.code):
 *   CODEC_PLANE_GAP_NONZERO        a byte between two planes (the zero fill
 *                                  up to a 256-byte boundary) is not 0
 *                                  (codecs §0, §2.2, §3.1, §4.1);
 *                                  .element = object byte offset
 *   CODEC_PADDING_NONZERO          row_split padding not canonical: a lane at
 *                                  column >= K not integer 0 (q2 0b01, others
 *                                  0), or a whole padding group with a scale
 *                                  word other than 0x0000 (codecs §2.4);
 *                                  .element = object byte offset
 *   CODEC_ILLEGAL_CODE             t2 0b10, q8 0x80 (codecs §2.1, §8.2),
 *                                  fp8 0x7F/0xFF (codecs §4.2);
 *                                  .element = logical element
 *   CODEC_BAD_SCALE                row_split scale -0/Inf/NaN (q4..t2) or
 *                                  Inf/NaN (q2) (codecs §2.5); nvfp4 scale
 *                                  byte outside 0x00..0x7E (codecs §3.4); fp8
 *                                  row scale with the sign bit set, Inf or
 *                                  NaN (codecs §4.2);
 *                                  .element = first logical element it scales
 *   CODEC_ZERO_SCALE_NONZERO_CODE  a +0 scale whose group (q4..t2) has a
 *                                  nonzero code, or an fp8 row with +0 scale
 *                                  and a code other than 0x00/0x80
 *                                  (codecs §2.5, §4.2); .element = the code
 *   CODEC_BAD_DIVISOR              an nvfp4 divisor that is not a finite
 *                                  binary32 > 0 (codecs §3.4);
 *                                  .element = divisor index
 *
 * Contiguous formats and raw bytes have no invariants (every bit pattern
 * is valid, codecs §1).  The order of checks -- and so which violation is
 * "first" -- is: plane gaps in offset order, then the layout's own checks
 * in row-major order (per group/row: scale, then codes, then padding),
 * then divisors. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "codecs/internal.h"

static bool fail(struct nf_violation *v, const char *code, uint64_t where, const char *fmt,
		 uint64_t a, uint64_t b)
{
	if (v) {
		v->code = code;
		v->element = where;
		snprintf(v->detail, sizeof v->detail, fmt, a, b);
	}
	return false;
}

static bool check_gaps(const struct nf_geometry *g, const uint8_t *obj, struct nf_violation *v)
{
	uint64_t pos = 0;
	for (unsigned p = 0; p < g->nplanes; p++) {
		for (uint64_t i = pos; i < g->planes[p].offset; i++)
			if (obj[i])
				return fail(v, "CODEC_PLANE_GAP_NONZERO", i,
					    "byte %" PRIu64 " before plane %" PRIu64
					    " is not zero", i, p);
		pos = g->planes[p].offset + g->planes[p].length;
	}
	return true;
}

static bool check_row_split(const struct nf_geometry *g, const uint8_t *obj,
			    struct nf_violation *v)
{
	const uint64_t K = g->cols, G = g->group, lg = (K + G - 1) / G;
	const uint64_t B = g->base_bytes_per_group, H = g->high_bytes_per_group;
	const uint64_t sc_off = g->planes[g->nplanes - 1].offset;
	const uint8_t *base = obj, *high = H ? obj + g->planes[1].offset : NULL;
	const enum nf_format f = g->format;
	const int q2 = f == NF_FORMAT_Q2_G64_FP16;

	for (uint64_t n = 0; n < g->rows; n++) {
		for (uint64_t gi = 0; gi < g->gpr; gi++) {
			uint64_t grp = n * g->gpr + gi, el = n * K + gi * G;
			const uint8_t *gb = base + grp * B, *gh = high ? high + grp * H : NULL;
			uint16_t s = nf_rd16(obj + sc_off + 2 * grp);
			if (gi >= lg) { /* whole padding group: scale 0, codes 0 */
				if (s != 0)
					return fail(v, "CODEC_PADDING_NONZERO", sc_off + 2 * grp,
						    "padding group of row %" PRIu64
						    " has scale word 0x%04" PRIx64, n, s);
			} else if ((s & 0x7C00) == 0x7C00 || (!q2 && s == 0x8000)) {
				return fail(v, "CODEC_BAD_SCALE", el,
					    "row %" PRIu64 " scale word 0x%04" PRIx64
					    " is not allowed", n, s);
			}
			for (unsigned l = 0; l < G; l++) {
				int q = nf_rs_lane(f, gb, gh, l);
				uint64_t col = gi * G + l;
				if (col >= K) {
					if (q != 0)
						return fail(v, "CODEC_PADDING_NONZERO",
							    grp * B + (f == NF_FORMAT_Q8_G32_FP16
									 ? l : l / (q2 || f == NF_FORMAT_T2_G128_FP16 ? 4 : 2)),
							    "padding lane %" PRIu64 " of row %" PRIu64
							    " is not code 0", col, n);
					continue;
				}
				if ((f == NF_FORMAT_T2_G128_FP16 && q == -2) ||
				    (f == NF_FORMAT_Q8_G32_FP16 && q == -128))
					return fail(v, "CODEC_ILLEGAL_CODE", el + l,
						    "row %" PRIu64 " column %" PRIu64
						    " holds an illegal code", n, col);
				if (!q2 && s == 0 && q != 0)
					return fail(v, "CODEC_ZERO_SCALE_NONZERO_CODE", el + l,
						    "row %" PRIu64 " column %" PRIu64
						    ": +0 scale with a nonzero code", n, col);
			}
		}
	}
	return true;
}

static bool check_nvfp4(const struct nf_geometry *g, const uint8_t *obj, struct nf_violation *v)
{
	const uint64_t N = g->rows, K = g->cols, kt = K / 64;
	const uint8_t *sc = obj + g->planes[1].offset, *dv = obj + g->planes[2].offset;

	for (uint64_t n = 0; n < N; n++)
		for (uint64_t grp = 0; grp < K / 16; grp++) {
			uint64_t o = nf_nv_swz(n, grp, kt);
			if (sc[o] > 0x7E)
				return fail(v, "CODEC_BAD_SCALE", n * K + grp * 16,
					    "row %" PRIu64 " block scale byte 0x%02" PRIx64
					    " is not 0x00..0x7E", n, sc[o]);
		}
	for (uint64_t i = 0; i < g->divisors; i++) {
		float d = nf_bits_f32(nf_rd32(dv + 4 * i));
		if (!(d > 0.0f) || d == __builtin_inff())
			return fail(v, "CODEC_BAD_DIVISOR", i,
				    "divisor %" PRIu64 " (bits 0x%08" PRIx64
				    ") is not a finite value > 0", i, nf_rd32(dv + 4 * i));
	}
	return true;
}

static bool check_row_scale(const struct nf_geometry *g, const uint8_t *obj,
			    struct nf_violation *v)
{
	const uint64_t K = g->cols;
	const uint8_t *sc = obj + g->planes[1].offset;

	for (uint64_t n = 0; n < g->rows; n++) {
		uint16_t s = nf_rd16(sc + 2 * n);
		if ((s & 0x8000) || (s & 0x7F80) == 0x7F80)
			return fail(v, "CODEC_BAD_SCALE", n * K,
				    "row %" PRIu64 " bf16 scale 0x%04" PRIx64
				    " is negative or not finite", n, s);
		for (uint64_t c = 0; c < K; c++) {
			uint8_t b = obj[n * K + c];
			if ((b & 0x7F) == 0x7F)
				return fail(v, "CODEC_ILLEGAL_CODE", n * K + c,
					    "row %" PRIu64 " column %" PRIu64
					    " holds an E4M3FN NaN", n, c);
			if (s == 0 && (b & 0x7F) != 0)
				return fail(v, "CODEC_ZERO_SCALE_NONZERO_CODE", n * K + c,
					    "row %" PRIu64 " column %" PRIu64
					    ": +0 row scale with a nonzero code", n, c);
		}
	}
	return true;
}

bool nf_check_invariants(const struct nf_geometry *g, const uint8_t *object,
			 struct nf_violation *v)
{
	if (v)
		memset(v, 0, sizeof *v);
	switch (g->layout) {
	case NF_LAYOUT_ROW_SPLIT_K128_V1:
		return check_gaps(g, object, v) && check_row_split(g, object, v);
	case NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1:
		return check_gaps(g, object, v) && check_nvfp4(g, object, v);
	case NF_LAYOUT_ROW_SCALE_V1:
		return check_gaps(g, object, v) && check_row_scale(g, object, v);
	default:
		return true;
	}
}
