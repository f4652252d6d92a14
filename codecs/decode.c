/* codecs/decode.c — span planning and the decode driver for every layout.
 *
 * nf_decode_spans() and nf_decode() share one plan (struct plan): which
 * object bytes an element range [begin,end) needs, one span per plane.  The
 * reference driver walks the range in runs that share one scale (a group
 * lane run, a 16-column nvfp4 block, an fp8 row piece), hands each run to
 * the f32 kernels of the chosen ISA (scalar.c, or SSE2 in simd.c) and
 * converts to bf16/f16 afterwards.  The fused driver (AVX2+F16C, avx2.c)
 * hands each row piece to a kernel that writes the output dtype straight
 * into the caller's buffer. */
#include <errno.h>
#include <string.h>

#include "codecs/internal.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "decoders write little-endian output words straight from host words"
#endif

struct plan {
	unsigned n;
	struct nf_span s[NF_MAX_SPANS];
	int i_base, i_high, i_scale, i_div; /* span index per plane, -1 if absent */
	uint64_t first;    /* row_split: first group index; nvfp4: first code byte;
	                      fp8: first row */
	uint64_t tile0;    /* nvfp4: first 512-byte scale tile fetched */
	uint64_t div0;     /* nvfp4: first divisor index fetched */
};

static void push(struct plan *p, uint64_t off, uint64_t len)
{
	p->s[p->n].offset = off;
	p->s[p->n].length = len;
	p->n++;
}

/* Returns 0 or -EINVAL (range outside the object, unsupported layout). */
static int make_plan(const struct nf_geometry *g, uint64_t b, uint64_t e, struct plan *p)
{
	memset(p, 0, sizeof *p);
	p->i_base = p->i_high = p->i_scale = p->i_div = -1;
	if (b > e || e > g->elements)
		return -EINVAL;
	if (b == e)
		return 0;
	switch (g->layout) {
	case NF_LAYOUT_CONTIGUOUS_LE_V1:
		/* e <= elements and elements*w did not overflow (geometry) */
		p->i_base = 0;
		push(p, b * g->word_bytes, (e - b) * g->word_bytes);
		return 0;
	case NF_LAYOUT_ROW_SPLIT_K128_V1: {
		/* codecs §2.2: groups row by row; the groups of [b,e) form one
		 * contiguous group-index interval in every plane. */
		uint64_t K = g->cols, G = g->group;
		uint64_t lo = b / K * g->gpr + b % K / G;
		uint64_t hi = (e - 1) / K * g->gpr + (e - 1) % K / G + 1;
		p->first = lo;
		p->i_base = 0;
		push(p, lo * g->base_bytes_per_group, (hi - lo) * g->base_bytes_per_group);
		if (g->high_bytes_per_group) {
			p->i_high = 1;
			push(p, g->planes[1].offset + lo * g->high_bytes_per_group,
			     (hi - lo) * g->high_bytes_per_group);
		}
		p->i_scale = (int)p->n;
		push(p, g->planes[g->nplanes - 1].offset + 2 * lo, 2 * (hi - lo));
		return 0;
	}
	case NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1: {
		/* codes: two per byte, row-major (codecs §3.2); scales: whole
		 * 512-byte tiles (codecs §3.3) -- only the K-tiles of the row
		 * when the range stays in one row, else whole tile-rows. */
		uint64_t K = g->cols, kt = K / 64, n0 = b / K, n1 = (e - 1) / K;
		uint64_t t_lo, t_hi, share = g->rows / g->divisors;
		if (n0 == n1) {
			t_lo = n0 / 128 * kt + b % K / 64;
			t_hi = n0 / 128 * kt + (e - 1) % K / 64;
		} else {
			t_lo = n0 / 128 * kt;
			t_hi = n1 / 128 * kt + kt - 1;
		}
		p->first = b / 2;
		p->tile0 = t_lo;
		p->div0 = n0 / share;
		p->i_base = 0;
		push(p, b / 2, (e + 1) / 2 - b / 2);
		p->i_scale = 1;
		push(p, g->planes[1].offset + t_lo * 512, (t_hi - t_lo + 1) * 512);
		p->i_div = 2;
		push(p, g->planes[2].offset + 4 * p->div0, 4 * (n1 / share - p->div0 + 1));
		return 0;
	}
	case NF_LAYOUT_ROW_SCALE_V1: {
		/* codecs §4.1: codes n*K+k; bf16 row scales at scale_off+2n */
		uint64_t n0 = b / g->cols, n1 = (e - 1) / g->cols;
		p->first = n0;
		p->i_base = 0;
		push(p, b, e - b);
		p->i_scale = 1;
		push(p, g->planes[1].offset + 2 * n0, 2 * (n1 - n0 + 1));
		return 0;
	}
	default:
		return -EINVAL;
	}
}

unsigned nf_decode_spans(const struct nf_geometry *g, uint64_t begin, uint64_t end,
			 struct nf_span spans[NF_MAX_SPANS])
{
	struct plan p;

	if (make_plan(g, begin, end, &p))
		return 0;
	memcpy(spans, p.s, p.n * sizeof p.s[0]);
	return p.n;
}

/* ---- per-layout decode of [b,e) (a sub-range of the planned range) ---- */

static void dec_row_split(const struct nf_geometry *g, const struct plan *p,
			  const uint8_t *const bufs[], uint64_t b, uint64_t e, float *out,
			  const struct nf_kernels *k)
{
	const uint64_t K = g->cols, G = g->group, B = g->base_bytes_per_group,
		       H = g->high_bytes_per_group;
	const uint8_t *base = bufs[p->i_base], *high = p->i_high >= 0 ? bufs[p->i_high] : NULL,
		      *sc = bufs[p->i_scale];

	while (b < e) {
		uint64_t n = b / K, col = b % K, gi = col / G;
		unsigned l0 = (unsigned)(col % G);
		uint64_t run_end = n * K + (gi + 1) * G; /* group end */
		uint64_t row_end = (n + 1) * K;
		if (run_end > row_end)
			run_end = row_end;
		if (run_end > e)
			run_end = e;
		unsigned l1 = l0 + (unsigned)(run_end - b);
		uint64_t local = n * g->gpr + gi - p->first;
		const uint8_t *gb = base + local * B;
		float scale = nf_f16_to_f32(nf_rd16(sc + 2 * local));

		if (g->format == NF_FORMAT_Q4_G64_FP16) {
			k->q4(gb, l0, l1, scale, out);
		} else if (g->format == NF_FORMAT_Q8_G32_FP16) {
			k->q8(gb, l0, l1, scale, out);
		} else {
			const uint8_t *gh = high ? high + local * H : NULL;
			for (unsigned l = l0; l < l1; l++) /* codecs §2.6: exact product */
				out[l - l0] = (float)nf_rs_lane(g->format, gb, gh, l) * scale;
		}
		out += l1 - l0;
		b = run_end;
	}
}

static inline float nv_one(uint8_t c, float scale, float div)
{
	float p = nf_e2m1_to_f32(c) * scale; /* exact (codecs §3.5) */
	return p / div;                      /* one IEEE division */
}

#define NV_BATCH 64 /* blocks per kernel call */

static void dec_nvfp4(const struct nf_geometry *g, const struct plan *p,
		      const uint8_t *const bufs[], uint64_t b, uint64_t e, float *out,
		      const struct nf_kernels *k)
{
	const uint64_t K = g->cols, kt = K / 64, share = g->rows / g->divisors;
	const uint8_t *codes = bufs[p->i_base], *sc = bufs[p->i_scale], *dv = bufs[p->i_div];
	float scales[NV_BATCH];

	while (b < e) {
		uint64_t n = b / K, row_end = (n + 1) * K < e ? (n + 1) * K : e;
		float div = nf_bits_f32(nf_rd32(dv + 4 * (n / share - p->div0)));
		/* codecs §3.3 with the row's part hoisted: block g of row n is
		 * at rbase + (g/4)*512 + g%4, minus the first fetched tile */
		uint64_t rbase = n / 128 * kt * 512 + (n % 32) * 16 + (n % 128) / 32 * 4;
#define NV_SCALE_BYTE(col) \
	sc[rbase + (col) / 64 * 512 + (col) / 16 % 4 - p->tile0 * 512]
		/* head: up to the next block boundary (or the row's end) */
		while (b < row_end && (b % 16 || row_end - b < 16)) {
			float scale = nf_e4m3fn_to_f32(NV_SCALE_BYTE(b % K));
			uint8_t byte = codes[b / 2 - p->first];
			*out++ = nv_one((uint8_t)((byte >> (4 * (b % 2))) & 0xF), scale, div);
			b++;
		}
		/* whole blocks, NV_BATCH at a time */
		while (row_end - b >= 16) {
			size_t nb = (size_t)((row_end - b) / 16);
			uint64_t col = b % K;
			if (nb > NV_BATCH)
				nb = NV_BATCH;
			for (size_t j = 0; j < nb; j++)
				scales[j] = nf_e4m3fn_to_f32(NV_SCALE_BYTE(col + 16 * j));
			k->nvfp4(codes + (b / 2 - p->first), nb, scales, div, out);
			out += 16 * nb;
			b += 16 * nb;
		}
#undef NV_SCALE_BYTE
	}
}

static void dec_row_scale(const struct nf_geometry *g, const struct plan *p,
			  const uint8_t *const bufs[], uint64_t b, uint64_t e, float *out,
			  const struct nf_kernels *k, uint64_t plan_begin)
{
	const uint64_t K = g->cols;

	while (b < e) {
		uint64_t n = b / K, run_end = (n + 1) * K;
		if (run_end > e)
			run_end = e;
		float scale = nf_bf16_to_f32(nf_rd16(bufs[p->i_scale] + 2 * (n - p->first)));
		k->fp8(bufs[p->i_base] + (b - plan_begin), (size_t)(run_end - b), scale, out);
		out += run_end - b;
		b = run_end;
	}
}

/* Decode [b,e) of the planned range into binary32. */
static void dec_f32(const struct nf_geometry *g, const struct plan *p, const uint8_t *const bufs[],
		    uint64_t plan_begin, uint64_t b, uint64_t e, float *out,
		    const struct nf_kernels *k)
{
	switch (g->layout) {
	case NF_LAYOUT_CONTIGUOUS_LE_V1:
		if (g->format == NF_FORMAT_BF16)
			k->bf16(bufs[0] + 2 * (b - plan_begin), (size_t)(e - b), out);
		else /* fp32 as stored */
			memcpy(out, bufs[0] + 4 * (b - plan_begin), (size_t)(e - b) * 4);
		break;
	case NF_LAYOUT_ROW_SPLIT_K128_V1:
		dec_row_split(g, p, bufs, b, e, out, k);
		break;
	case NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1:
		dec_nvfp4(g, p, bufs, b, e, out, k);
		break;
	case NF_LAYOUT_ROW_SCALE_V1:
		dec_row_scale(g, p, bufs, b, e, out, k, plan_begin);
		break;
	default:
		break;
	}
}

/* ---- the fused path: straight to the output dtype (avx2.c) ---- */

static void fx_row_split(const struct nf_geometry *g, const struct plan *p,
			 const uint8_t *const bufs[], uint64_t b, uint64_t e, int dx,
			 uint8_t *out, const struct nf_kernels *k)
{
	const uint64_t K = g->cols, G = g->group, B = g->base_bytes_per_group,
		       H = g->high_bytes_per_group;
	const uint8_t *base = bufs[p->i_base], *high = p->i_high >= 0 ? bufs[p->i_high] : NULL,
		      *sc = bufs[p->i_scale];
	const size_t es = nf_dtype_size(dx == NF_FX_F32 ? NF_DTYPE_F32 : NF_DTYPE_F16);
	void (*const fn)(const uint8_t *, const uint8_t *, const uint8_t *, unsigned, size_t,
			 void *) = k->rs[g->format - NF_FORMAT_Q2_G64_FP16][dx];
	uint64_t n = b / K, col = b % K;

	/* one kernel call per row piece: a row's groups are contiguous in
	 * every plane (codecs §2.2) */
	while (b < e) {
		uint64_t cnt = e - b < K - col ? e - b : K - col;
		uint64_t local = n * g->gpr + col / G - p->first;
		fn(base + local * B, high ? high + local * H : NULL, sc + 2 * local,
		   (unsigned)(col % G), (size_t)cnt, out);
		out += cnt * es;
		b += cnt;
		n++;
		col = 0;
	}
}

static void fx_nvfp4(const struct nf_geometry *g, const struct plan *p,
		     const uint8_t *const bufs[], uint64_t b, uint64_t e, int dx, uint8_t *out,
		     const struct nf_kernels *k, struct nf_nv_tables *t)
{
	const uint64_t K = g->cols, kt = K / 64, share = g->rows / g->divisors;
	const uint8_t *codes = bufs[p->i_base], *sc = bufs[p->i_scale], *dv = bufs[p->i_div];
	const size_t es = dx == NF_FX_F32 ? 4 : 2;
	uint64_t n = b / K, col = b % K;
	uint32_t div_bits = 0;
	int have_div = 0;

	while (b < e) {
		uint64_t cnt = e - b < K - col ? e - b : K - col;
		uint32_t db = nf_rd32(dv + 4 * (n / share - p->div0));
		if (!have_div || db != div_bits) {
			/* the tables hold values for one divisor */
			t->div = nf_bits_f32(db);
			memset(t->have, 0, sizeof t->have);
			div_bits = db;
			have_div = 1;
		}
		/* codecs §3.3: the scale byte of (n, col/16), minus the first
		 * fetched tile */
		uint64_t so = n / 128 * kt * 512 + (n % 32) * 16 + (n % 128) / 32 * 4 +
			      col / 64 * 512 + col / 16 % 4 - p->tile0 * 512;
		k->nv[dx](codes + (b / 2 - p->first), sc + so, col, (size_t)cnt, t, out);
		out += cnt * es;
		b += cnt;
		n++;
		col = 0;
	}
}

static void fx_row_scale(const struct nf_geometry *g, const struct plan *p,
			 const uint8_t *const bufs[], uint64_t b, uint64_t e, int dx,
			 uint8_t *out, const struct nf_kernels *k)
{
	const uint64_t K = g->cols, begin = b;
	const size_t es = dx == NF_FX_F32 ? 4 : 2;

	while (b < e) {
		uint64_t n = b / K, run_end = (n + 1) * K < e ? (n + 1) * K : e;
		float scale = nf_bf16_to_f32(nf_rd16(bufs[p->i_scale] + 2 * (n - p->first)));
		k->fp8x[dx](bufs[p->i_base] + (b - begin), (size_t)(run_end - b), scale, out);
		out += (run_end - b) * es;
		b = run_end;
	}
}

static void decode_fused(const struct nf_geometry *g, const struct plan *p,
			 const uint8_t *const bufs[], uint64_t b, uint64_t e, enum nf_dtype dtype,
			 uint8_t *out, const struct nf_kernels *k)
{
	const int dx = dtype == NF_DTYPE_F32 ? NF_FX_F32 : dtype == NF_DTYPE_BF16 ? NF_FX_BF16
										 : NF_FX_F16;
	switch (g->layout) {
	case NF_LAYOUT_CONTIGUOUS_LE_V1:
		if (g->format == NF_FORMAT_FP32 && dx == NF_FX_F32)
			memcpy(out, bufs[0], (size_t)(e - b) * 4);
		else if (g->format == NF_FORMAT_FP32)
			k->f32x[dx](bufs[0], (size_t)(e - b), out);
		else /* bf16 -> bf16 was copied by the caller */
			k->bf16x[dx](bufs[0], (size_t)(e - b), out);
		break;
	case NF_LAYOUT_ROW_SPLIT_K128_V1:
		fx_row_split(g, p, bufs, b, e, dx, out, k);
		break;
	case NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1: {
		/* the value tables live on the stack for this call (16.3 KiB) */
		struct nf_nv_tables t;
		fx_nvfp4(g, p, bufs, b, e, dx, out, k, &t);
		break;
	}
	case NF_LAYOUT_ROW_SCALE_V1:
		fx_row_scale(g, p, bufs, b, e, dx, out, k);
		break;
	default:
		break;
	}
}

#define CHUNK 1024 /* elements decoded to a stack binary32 buffer per step */

int nf_decode_isa(const struct nf_geometry *g, uint64_t begin, uint64_t end,
		  const uint8_t *const bufs[NF_MAX_SPANS], enum nf_dtype dtype, void *out,
		  enum nf_isa isa)
{
	struct plan p;
	const struct nf_kernels *k = nf_kernels_for(isa);
	uint64_t n = end - begin;

	if (g->layout == NF_LAYOUT_RAW_BYTES_V1 || g->layout == NF_LAYOUT_UNKNOWN ||
	    nf_geometry_output_dtype(g, dtype) != dtype || nf_dtype_size(dtype) == 0 ||
	    make_plan(g, begin, end, &p))
		return -EINVAL;
	if (n == 0)
		return 0;
	if (dtype == NF_DTYPE_I32 ||
	    (dtype == NF_DTYPE_BF16 && g->format == NF_FORMAT_BF16)) {
		/* int32 stays int32; bf16 -> bf16 is the identity (bits kept,
		 * NaN payloads included) */
		memcpy(out, bufs[0], (size_t)n * nf_dtype_size(dtype));
		return 0;
	}
	if (k->fused) {
		/* straight into the caller's buffer, aligned or not */
		decode_fused(g, &p, bufs, begin, end, dtype, out, k);
		return 0;
	}
	/* the reference path: binary32 first.  The caller's buffer need not
	 * be aligned (e.g. a FUSE reply at an odd offset): then every chunk
	 * goes through the stack and memcpy */
	const int aligned = (uintptr_t)out % nf_dtype_size(dtype) == 0;
	if (dtype == NF_DTYPE_F32 && aligned) {
		dec_f32(g, &p, bufs, begin, begin, end, out, k);
		return 0;
	}
	float tmp[CHUNK];
	uint16_t tmp16[CHUNK];
	uint8_t *o8 = out;
	for (uint64_t b = begin; b < end; b += CHUNK) {
		uint64_t e = end - b < CHUNK ? end : b + CHUNK;
		size_t m = (size_t)(e - b);
		dec_f32(g, &p, bufs, begin, b, e, tmp, k);
		if (dtype == NF_DTYPE_F32) {
			memcpy(o8, tmp, m * 4);
		} else {
			uint16_t *t16 = aligned ? (uint16_t *)(void *)o8 : tmp16;
			if (dtype == NF_DTYPE_BF16)
				k->to_bf16(tmp, t16, m);
			else
				k->to_f16(tmp, t16, m);
			if (!aligned)
				memcpy(o8, t16, m * 2);
		}
		o8 += m * nf_dtype_size(dtype);
	}
	return 0;
}

int nf_decode(const struct nf_geometry *g, uint64_t begin, uint64_t end,
	      const uint8_t *const bufs[NF_MAX_SPANS], enum nf_dtype dtype, void *out)
{
	return nf_decode_isa(g, begin, end, bufs, dtype, out, NF_ISA_AUTO);
}
