/* codecs/registry.c — format/layout names, shape rules, encoded sizes,
 * plane geometry and row views (codecs §1-§5, seed §6).
 *
 * Names are compared exactly (byte for byte, case-sensitive): forks reuse
 * similar names for incompatible encodings (codecs §9), so anything not in
 * the seed tables is unknown and fails only the object that uses it. */
#include <errno.h>
#include <string.h>

#include "codecs/internal.h"

static const char *const format_names[] = {
	[NF_FORMAT_UNKNOWN] = NULL,
	[NF_FORMAT_BF16] = "bf16",
	[NF_FORMAT_FP32] = "fp32",
	[NF_FORMAT_INT32] = "int32",
	[NF_FORMAT_Q2_G64_FP16] = "q2_g64_fp16",
	[NF_FORMAT_Q4_G64_FP16] = "q4_g64_fp16",
	[NF_FORMAT_Q5_G64_FP16] = "q5_g64_fp16",
	[NF_FORMAT_Q6_G64_FP16] = "q6_g64_fp16",
	[NF_FORMAT_Q8_G32_FP16] = "q8_g32_fp16",
	[NF_FORMAT_T2_G128_FP16] = "t2_g128_fp16",
	[NF_FORMAT_NVFP4] = "nvfp4",
	[NF_FORMAT_FP8_E4M3FN_ROW_BF16] = "fp8_e4m3fn_row_bf16",
};

static const char *const layout_names[] = {
	[NF_LAYOUT_UNKNOWN] = NULL,
	[NF_LAYOUT_CONTIGUOUS_LE_V1] = "contiguous_le_v1",
	[NF_LAYOUT_ROW_SPLIT_K128_V1] = "row_split_k128_v1",
	[NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1] = "block_scale_k16_m128x4_v1",
	[NF_LAYOUT_ROW_SCALE_V1] = "row_scale_v1",
	[NF_LAYOUT_RAW_BYTES_V1] = "raw_bytes_v1",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

enum nf_format nf_format_from_name(const char *name)
{
	if (!name)
		return NF_FORMAT_UNKNOWN;
	for (size_t i = 1; i < COUNT(format_names); i++)
		if (strcmp(name, format_names[i]) == 0)
			return (enum nf_format)i;
	return NF_FORMAT_UNKNOWN;
}

enum nf_layout nf_layout_from_name(const char *name)
{
	if (!name)
		return NF_LAYOUT_UNKNOWN;
	for (size_t i = 1; i < COUNT(layout_names); i++)
		if (strcmp(name, layout_names[i]) == 0)
			return (enum nf_layout)i;
	return NF_LAYOUT_UNKNOWN;
}

const char *nf_format_name(enum nf_format f)
{
	if ((unsigned)f >= COUNT(format_names) || !format_names[f])
		return "unknown";
	return format_names[f];
}

const char *nf_layout_name(enum nf_layout l)
{
	if ((unsigned)l >= COUNT(layout_names) || !layout_names[l])
		return "unknown";
	return layout_names[l];
}

const char *nf_dtype_name(enum nf_dtype d)
{
	switch (d) {
	case NF_DTYPE_F32: return "f32";
	case NF_DTYPE_BF16: return "bf16";
	case NF_DTYPE_F16: return "f16";
	case NF_DTYPE_I32: return "int32";
	}
	return "unknown";
}

unsigned nf_dtype_size(enum nf_dtype d)
{
	switch (d) {
	case NF_DTYPE_F32: return 4;
	case NF_DTYPE_BF16: return 2;
	case NF_DTYPE_F16: return 2;
	case NF_DTYPE_I32: return 4;
	}
	return 0;
}

const char *nf_codec_status_str(enum nf_codec_status s)
{
	switch (s) {
	case NF_CODEC_OK: return "ok";
	case NF_CODEC_UNKNOWN_FORMAT: return "unknown tensor format";
	case NF_CODEC_UNKNOWN_LAYOUT: return "unknown storage layout";
	case NF_CODEC_PAIR_NOT_ALLOWED: return "format not allowed with this layout";
	case NF_CODEC_BAD_SHAPE: return "shape not allowed by the layout";
	case NF_CODEC_DIVISORS_NOT_ALLOWED: return "divisors other than 1 outside nvfp4";
	case NF_CODEC_BAD_DIVISORS: return "divisors must divide N into multiples of 128 rows";
	case NF_CODEC_OVERFLOW: return "encoded size overflows 64 bits";
	}
	return "unknown codec status";
}

/* Which layout each format is allowed with (seed §6.2). */
static enum nf_layout layout_of(enum nf_format f)
{
	switch (f) {
	case NF_FORMAT_BF16:
	case NF_FORMAT_FP32:
	case NF_FORMAT_INT32:
		return NF_LAYOUT_CONTIGUOUS_LE_V1;
	case NF_FORMAT_Q2_G64_FP16:
	case NF_FORMAT_Q4_G64_FP16:
	case NF_FORMAT_Q5_G64_FP16:
	case NF_FORMAT_Q6_G64_FP16:
	case NF_FORMAT_Q8_G32_FP16:
	case NF_FORMAT_T2_G128_FP16:
		return NF_LAYOUT_ROW_SPLIT_K128_V1;
	case NF_FORMAT_NVFP4:
		return NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1;
	case NF_FORMAT_FP8_E4M3FN_ROW_BF16:
		return NF_LAYOUT_ROW_SCALE_V1;
	case NF_FORMAT_UNKNOWN:
		break;
	}
	return NF_LAYOUT_UNKNOWN;
}

static void add_plane(struct nf_geometry *g, const char *name, uint64_t off, uint64_t len)
{
	g->planes[g->nplanes].name = name;
	g->planes[g->nplanes].offset = off;
	g->planes[g->nplanes].length = len;
	g->nplanes++;
}

/* codecs §1: C-order words, bytes = elements * w. */
static enum nf_codec_status geom_contiguous(struct nf_geometry *g)
{
	g->word_bytes = g->format == NF_FORMAT_BF16 ? 2 : 4;
	if (__builtin_mul_overflow(g->elements, g->word_bytes, &g->bytes))
		return NF_CODEC_OVERFLOW;
	add_plane(g, "data", 0, g->bytes);
	return NF_CODEC_OK;
}

/* codecs §2.1 */
static enum nf_codec_status geom_row_split(struct nf_geometry *g)
{
	static const struct { uint64_t G, B, H; } t[] = {
		[NF_FORMAT_Q2_G64_FP16] = {64, 16, 0},
		[NF_FORMAT_Q4_G64_FP16] = {64, 32, 0},
		[NF_FORMAT_Q5_G64_FP16] = {64, 32, 8},
		[NF_FORMAT_Q6_G64_FP16] = {64, 32, 16},
		[NF_FORMAT_Q8_G32_FP16] = {32, 32, 0},
		[NF_FORMAT_T2_G128_FP16] = {128, 32, 0},
	};
	uint64_t N = g->rows, groups, base, high, scales, high_off, scale_off, t1;
	int ovf = 0;

	g->group = t[g->format].G;
	g->base_bytes_per_group = t[g->format].B;
	g->high_bytes_per_group = t[g->format].H;
	g->k_pad = nf_align_up(g->cols, 128, &ovf);
	if (ovf)
		return NF_CODEC_OVERFLOW;
	g->gpr = g->k_pad / g->group;
	if (__builtin_mul_overflow(N, g->gpr, &groups) ||
	    __builtin_mul_overflow(groups, g->base_bytes_per_group, &base) ||
	    __builtin_mul_overflow(groups, g->high_bytes_per_group, &high) ||
	    __builtin_mul_overflow(groups, 2, &scales))
		return NF_CODEC_OVERFLOW;
	high_off = nf_align_up(base, 256, &ovf);
	t1 = nf_align_up(high, 256, &ovf);
	if (ovf || __builtin_add_overflow(high_off, t1, &scale_off) ||
	    __builtin_add_overflow(scale_off, scales, &g->bytes))
		return NF_CODEC_OVERFLOW;
	add_plane(g, "base", 0, base);
	if (high)
		add_plane(g, "high", high_off, high);
	add_plane(g, "scales", scale_off, scales);
	return NF_CODEC_OK;
}

/* codecs §3.1 */
static enum nf_codec_status geom_nvfp4(struct nf_geometry *g)
{
	uint64_t N = g->rows, K = g->cols, D = g->divisors, code, scale_off, scales, div_off, dbytes;
	int ovf = 0;

	if (N == 0 || K == 0 || N % 128 || K % 64)
		return NF_CODEC_BAD_SHAPE;
	if (D == 0 || N % D || (D > 1 && (N / D) % 128))
		return NF_CODEC_BAD_DIVISORS;
	g->group = 16;
	if (__builtin_mul_overflow(N, K / 2, &code))
		return NF_CODEC_OVERFLOW;
	scale_off = nf_align_up(code, 256, &ovf);
	scales = N * (K / 16); /* <= code bytes, cannot overflow */
	if (ovf || __builtin_add_overflow(scale_off, scales, &div_off) ||
	    __builtin_mul_overflow(D, 4, &dbytes) ||
	    __builtin_add_overflow(div_off, dbytes, &g->bytes))
		return NF_CODEC_OVERFLOW;
	add_plane(g, "codes", 0, code);
	add_plane(g, "scales", scale_off, scales);
	add_plane(g, "divisors", div_off, dbytes);
	return NF_CODEC_OK;
}

/* codecs §4.1 */
static enum nf_codec_status geom_row_scale(struct nf_geometry *g)
{
	uint64_t code, scale_off, scales;
	int ovf = 0;

	g->group = g->cols;
	if (__builtin_mul_overflow(g->rows, g->cols, &code) ||
	    __builtin_mul_overflow(g->rows, 2, &scales))
		return NF_CODEC_OVERFLOW;
	scale_off = nf_align_up(code, 256, &ovf);
	if (ovf || __builtin_add_overflow(scale_off, scales, &g->bytes))
		return NF_CODEC_OVERFLOW;
	add_plane(g, "codes", 0, code);
	add_plane(g, "scales", scale_off, scales);
	return NF_CODEC_OK;
}

/* Resources (codecs §5): format must be NULL or empty; the single shape
 * dimension is the resource length (>= 1); one plane "data". */
enum nf_codec_status nf_geometry_init(struct nf_geometry *g, const char *format,
				      const char *layout, uint32_t rank,
				      const uint64_t *shape, uint64_t divisors)
{
	memset(g, 0, sizeof *g);
	g->layout = nf_layout_from_name(layout);
	g->divisors = divisors;
	if (g->layout == NF_LAYOUT_RAW_BYTES_V1) {
		if (format && *format)
			return NF_CODEC_PAIR_NOT_ALLOWED;
		if (rank != 1 || !shape || shape[0] == 0)
			return NF_CODEC_BAD_SHAPE;
		if (divisors != 1)
			return NF_CODEC_DIVISORS_NOT_ALLOWED;
		g->rank = 1;
		g->shape[0] = g->elements = g->bytes = shape[0];
		g->word_bytes = 1;
		add_plane(g, "data", 0, g->bytes);
		return NF_CODEC_OK;
	}
	g->format = nf_format_from_name(format);
	if (g->format == NF_FORMAT_UNKNOWN)
		return NF_CODEC_UNKNOWN_FORMAT;
	if (g->layout == NF_LAYOUT_UNKNOWN)
		return NF_CODEC_UNKNOWN_LAYOUT;
	if (layout_of(g->format) != g->layout)
		return NF_CODEC_PAIR_NOT_ALLOWED;
	if (rank > NF_MAX_RANK || (rank && !shape))
		return NF_CODEC_BAD_SHAPE;
	g->rank = rank;
	g->elements = 1;
	for (uint32_t i = 0; i < rank; i++) {
		g->shape[i] = shape[i];
		if (__builtin_mul_overflow(g->elements, shape[i], &g->elements))
			return NF_CODEC_OVERFLOW;
	}
	if (g->layout != NF_LAYOUT_CONTIGUOUS_LE_V1) {
		/* rank-2 layouts: N, K >= 1 (codecs §2-§4) */
		if (rank != 2 || shape[0] == 0 || shape[1] == 0)
			return NF_CODEC_BAD_SHAPE;
		g->rows = shape[0];
		g->cols = shape[1];
	}
	if (g->format == NF_FORMAT_NVFP4)
		return geom_nvfp4(g);
	if (divisors != 1) /* codecs §3.1: D > 1 only for nvfp4 */
		return NF_CODEC_DIVISORS_NOT_ALLOWED;
	switch (g->layout) {
	case NF_LAYOUT_CONTIGUOUS_LE_V1: return geom_contiguous(g);
	case NF_LAYOUT_ROW_SPLIT_K128_V1: return geom_row_split(g);
	case NF_LAYOUT_ROW_SCALE_V1: return geom_row_scale(g);
	default: break;
	}
	return NF_CODEC_UNKNOWN_LAYOUT;
}

enum nf_dtype nf_geometry_output_dtype(const struct nf_geometry *g, enum nf_dtype wanted)
{
	if (g->format == NF_FORMAT_INT32)
		return NF_DTYPE_I32;
	if (wanted == NF_DTYPE_I32) /* a float object has no int32 view */
		return NF_DTYPE_F32;
	return wanted;
}

/* Row views.  row_split (codecs §2.7): base/high/scales spans of the rows.
 * row_scale (codecs §4.3): codes + scales.  nvfp4 (codecs §3.6): only when
 * r0 and count are multiples of 128 and the rows lie inside one divisor
 * share; then codes, the tile-rows' scale span, and that share's divisor
 * word, so the standalone object (nf_rows_geometry: D = 1) is exact.
 * Contiguous and raw layouts: 0 (a contiguous row range is a plain byte
 * range; the caller does not need a view for it). */
unsigned nf_row_spans(const struct nf_geometry *g, uint64_t r0, uint64_t count,
		      struct nf_span spans[NF_MAX_PLANES])
{
	uint64_t end;

	if (count == 0 || __builtin_add_overflow(r0, count, &end) || end > g->rows)
		return 0;
	switch (g->layout) {
	case NF_LAYOUT_ROW_SPLIT_K128_V1: {
		unsigned n = 0;
		for (unsigned p = 0; p < g->nplanes; p++) {
			/* a row's share of a plane is (plane length / N): exact */
			uint64_t per_row = g->planes[p].length / g->rows;
			spans[n].offset = g->planes[p].offset + r0 * per_row;
			spans[n].length = count * per_row;
			n++;
		}
		return n;
	}
	case NF_LAYOUT_ROW_SCALE_V1:
		spans[0].offset = r0 * g->cols;
		spans[0].length = count * g->cols;
		spans[1].offset = g->planes[1].offset + 2 * r0;
		spans[1].length = 2 * count;
		return 2;
	case NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1: {
		uint64_t share = g->rows / g->divisors;
		if (r0 % 128 || count % 128 || r0 / share != (end - 1) / share)
			return 0;
		spans[0].offset = r0 * (g->cols / 2);
		spans[0].length = count * (g->cols / 2);
		/* rows [128t,128t+128) own 8K scale bytes at t*8K (codecs §3.3) */
		spans[1].offset = g->planes[1].offset + r0 / 128 * 8 * g->cols;
		spans[1].length = count / 128 * 8 * g->cols;
		spans[2].offset = g->planes[2].offset + 4 * (r0 / share);
		spans[2].length = 4;
		return 3;
	}
	default:
		return 0;
	}
}

enum nf_codec_status nf_rows_geometry(const struct nf_geometry *parent, uint64_t rows,
				      struct nf_geometry *out)
{
	uint64_t shape[2] = {rows, parent->cols};

	if (parent->rank != 2 || parent->layout == NF_LAYOUT_CONTIGUOUS_LE_V1 ||
	    parent->layout == NF_LAYOUT_RAW_BYTES_V1) {
		memset(out, 0, sizeof *out);
		return NF_CODEC_BAD_SHAPE;
	}
	return nf_geometry_init(out, nf_format_name(parent->format),
				nf_layout_name(parent->layout), 2, shape, 1);
}
