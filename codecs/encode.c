/* codecs/encode.c — exact packing of chosen codes and scales into encoded
 * object bytes (nf_encode_codes), with canonical padding (codecs §2.4) and
 * zero plane gaps (codecs §0).
 *
 * The packer accepts every code its bit field can hold, including the
 * codes the numeric contract calls illegal (t2 -2 = 0b10, q8 -128 = 0x80,
 * fp8 0x7F/0xFF, any nvfp4 scale byte), so tests and tools can build
 * objects that exercise the deep checker.  The quantizer (quantize.c)
 * never produces them. */
#include <errno.h>
#include <string.h>

#include "codecs/internal.h"

/* Bit-representable signed range of a row_split code (codecs §2.1, §2.3). */
static void bit_range(enum nf_format f, int *lo, int *hi)
{
	switch (f) {
	case NF_FORMAT_Q2_G64_FP16: *lo = -1; *hi = 2; return;   /* offset u-1 */
	case NF_FORMAT_T2_G128_FP16: *lo = -2; *hi = 1; return;
	case NF_FORMAT_Q4_G64_FP16: *lo = -8; *hi = 7; return;
	case NF_FORMAT_Q5_G64_FP16: *lo = -16; *hi = 15; return;
	case NF_FORMAT_Q6_G64_FP16: *lo = -32; *hi = 31; return;
	case NF_FORMAT_Q8_G32_FP16: *lo = -128; *hi = 127; return;
	default: *lo = *hi = 0; return;
	}
}

/* Legal code range of the numeric contract (codecs §2.1). */
void nf_rs_code_range(enum nf_format f, int *qmin, int *qmax)
{
	bit_range(f, qmin, qmax);
	if (f == NF_FORMAT_T2_G128_FP16 || f == NF_FORMAT_Q8_G32_FP16)
		(*qmin)++; /* 0b10 and 0x80 are outside the valid language */
}

/* Store signed q into lane l of one group (codecs §2.3). */
static void put_lane(enum nf_format f, uint8_t *base, uint8_t *high, unsigned l, int q)
{
	unsigned u;
	switch (f) {
	case NF_FORMAT_Q2_G64_FP16:
	case NF_FORMAT_T2_G128_FP16:
		u = f == NF_FORMAT_Q2_G64_FP16 ? (unsigned)(q + 1) : (unsigned)q & 3;
		base[l / 4] = (uint8_t)(base[l / 4] | u << (2 * (l % 4)));
		return;
	case NF_FORMAT_Q8_G32_FP16:
		base[l] = (uint8_t)q;
		return;
	default:
		u = (unsigned)q;
		base[l / 2] = (uint8_t)(base[l / 2] | (u & 0xF) << (4 * (l % 2)));
		if (f == NF_FORMAT_Q5_G64_FP16)
			high[l / 8] = (uint8_t)(high[l / 8] | ((u >> 4) & 1) << (l % 8));
		else if (f == NF_FORMAT_Q6_G64_FP16)
			high[l / 4] = (uint8_t)(high[l / 4] | ((u >> 4) & 3) << (2 * (l % 4)));
		return;
	}
}

int nf_rs_pack_group(enum nf_format f, uint8_t *base, uint8_t *high, const int32_t *q,
		     unsigned G)
{
	int lo, hi;

	bit_range(f, &lo, &hi);
	for (unsigned l = 0; l < G; l++) {
		if (q[l] < lo || q[l] > hi)
			return -EINVAL;
		put_lane(f, base, high, l, q[l]);
	}
	return 0;
}

static int enc_row_split(const struct nf_geometry *g, const int32_t *codes,
			 const uint16_t *scales, uint8_t *out)
{
	const uint64_t K = g->cols, G = g->group, lg = (K + G - 1) / G;
	const uint64_t B = g->base_bytes_per_group, H = g->high_bytes_per_group;
	uint8_t *base = out + g->planes[0].offset;
	uint8_t *high = H ? out + g->planes[1].offset : NULL;
	uint8_t *sc = out + g->planes[g->nplanes - 1].offset;
	int32_t q[128];

	for (uint64_t n = 0; n < g->rows; n++) {
		for (uint64_t gi = 0; gi < g->gpr; gi++) {
			uint64_t grp = n * g->gpr + gi;
			for (unsigned l = 0; l < G; l++) {
				uint64_t col = gi * G + l;
				/* codecs §2.4: lanes >= K hold integer code 0
				 * (q2 stores 0b01, everything else 0) */
				q[l] = col < K ? codes[n * K + col] : 0;
			}
			if (nf_rs_pack_group(g->format, base + grp * B, high ? high + grp * H : NULL,
					     q, (unsigned)G))
				return -EINVAL;
			/* whole padding groups: scale word 0x0000 */
			nf_wr16(sc + 2 * grp, gi < lg ? scales[n * lg + gi] : 0);
		}
	}
	return 0;
}

static int enc_nvfp4(const struct nf_geometry *g, const int32_t *codes, const uint8_t *scales,
		     const float *divisors, uint8_t *out)
{
	const uint64_t N = g->rows, K = g->cols;
	uint8_t *sc = out + g->planes[1].offset, *dv = out + g->planes[2].offset;

	for (uint64_t e = 0; e < N * K; e++) {
		if (codes[e] < 0 || codes[e] > 15)
			return -EINVAL;
		/* codecs §3.2: even k low nibble, odd k high nibble */
		out[e / 2] = (uint8_t)(out[e / 2] | (unsigned)codes[e] << (4 * (e % 2)));
	}
	for (uint64_t n = 0; n < N; n++)
		for (uint64_t grp = 0; grp < K / 16; grp++)
			sc[nf_nv_swz(n, grp, K / 64)] = scales[n * (K / 16) + grp];
	for (uint64_t i = 0; i < g->divisors; i++)
		nf_wr32(dv + 4 * i, divisors ? nf_f32_bits(divisors[i]) : 0x3F800000u);
	return 0;
}

static int enc_row_scale(const struct nf_geometry *g, const int32_t *codes,
			 const uint16_t *scales, uint8_t *out)
{
	uint8_t *sc = out + g->planes[1].offset;
	for (uint64_t e = 0; e < g->rows * g->cols; e++) {
		if (codes[e] < 0 || codes[e] > 255)
			return -EINVAL;
		out[e] = (uint8_t)codes[e];
	}
	for (uint64_t n = 0; n < g->rows; n++)
		nf_wr16(sc + 2 * n, scales[n]);
	return 0;
}

/* Contiguous formats: only int32 has "codes" (the values themselves);
 * bf16/fp32 go through nf_encode_f32(). */
int nf_encode_codes(const struct nf_geometry *g, const int32_t *codes, const void *scales,
		    const float *divisors, uint8_t *out)
{
	int rc;

	if (g->layout == NF_LAYOUT_UNKNOWN || g->layout == NF_LAYOUT_RAW_BYTES_V1 ||
	    g->bytes > SIZE_MAX)
		return -EINVAL;
	if (g->layout == NF_LAYOUT_CONTIGUOUS_LE_V1) {
		if (g->format != NF_FORMAT_INT32)
			return -EINVAL;
		for (uint64_t i = 0; i < g->elements; i++)
			nf_wr32(out + 4 * i, (uint32_t)codes[i]);
		return 0;
	}
	memset(out, 0, (size_t)g->bytes); /* plane gaps are zero (codecs §0) */
	switch (g->layout) {
	case NF_LAYOUT_ROW_SPLIT_K128_V1:
		rc = enc_row_split(g, codes, scales, out);
		break;
	case NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1:
		rc = enc_nvfp4(g, codes, scales, divisors, out);
		break;
	case NF_LAYOUT_ROW_SCALE_V1:
		rc = enc_row_scale(g, codes, scales, out);
		break;
	default:
		rc = -EINVAL;
	}
	return rc;
}
