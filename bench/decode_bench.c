/* bench/decode_bench.c — decode micro-benchmark (see bench/README.md,
 * "Decode micro-benchmark").
 *
 * For every decodable format (q2, q4, q5, q6, q8, t2, nvfp4, fp8, bf16,
 * fp32) it builds one [8192, 4096] object (32 Mi elements) with random codes
 * and realistic finite scales, then, for each output dtype (f32, bf16, f16),
 * decodes the whole object the way the filesystem does --
 * nf_decode_spans() + nf_decode() per 1 MiB of output -- with the scalar
 * reference and with the SIMD path, into one output buffer the size of the
 * decoded tensor, and checks the two outputs are byte-identical.  The anchor
 * is memcpy of the same output bytes (a copy of the decoded tensor, same
 * 1 MiB chunks), timed right before each pair of decode runs in the same
 * process.
 * It also times the standalone f32 -> bf16 / f16 conversions
 * (nf_f32_to_bf16 / nf_f32_to_f16) on 32 Mi floats.
 *
 * Each figure is the median of REPS runs; a ratio is the median over the
 * runs of (memcpy time / decode time) of that run's adjacent pair, so a
 * change in the machine's load between runs moves both sides.
 *
 *   build/bench/decode-bench [REPS [ROW [ISA [ROWS]]]]
 *     REPS  runs per cell (default 5)
 *     ROW   only this format row (q4, nvfp4, fp32, f32->bf16, ...; "all")
 *     ISA   the SIMD path to time: avx2, sse2 ("best": the best one)
 *     ROWS  N of the [N, 4096] objects, a multiple of 128 (default 8192;
 *           small values fit the caches: for profilers, not for figures) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codecs/codec.h"
#include "codecs/internal.h"

#define OUT_CHUNK (1u << 20) /* output bytes per nf_decode call */
#define MAX_REPS 64

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p) {
		fprintf(stderr, "decode-bench: out of memory (%zu bytes)\n", n);
		exit(8);
	}
	/* fault the pages in before timing, with distinct non-zero words: a
	 * hypervisor may merge zero (or identical) guest pages, and the first
	 * write to a merged page then costs a copy-on-write fault */
	uint64_t *w = p;
	for (size_t i = 0; i < n / 8; i++)
		w[i] = rnd() | 1;
	memset((uint8_t *)p + n / 8 * 8, 0x5A, n % 8);
	return p;
}

static double run_decode(const struct nf_geometry *g, const uint8_t *obj, enum nf_dtype dt,
			 uint8_t *out, enum nf_isa isa)
{
	const size_t esz = nf_dtype_size(dt);
	const uint64_t per = OUT_CHUNK / esz;
	double t0 = now();
	for (uint64_t b = 0; b < g->elements; b += per) {
		uint64_t e = b + per < g->elements ? b + per : g->elements;
		struct nf_span sp[NF_MAX_SPANS];
		const uint8_t *bufs[NF_MAX_SPANS] = {0};
		unsigned n = nf_decode_spans(g, b, e, sp);
		for (unsigned i = 0; i < n; i++)
			bufs[i] = obj + sp[i].offset;
		if (nf_decode_isa(g, b, e, bufs, dt, out + b * esz, isa)) {
			fprintf(stderr, "decode-bench: nf_decode failed\n");
			exit(8);
		}
	}
	return now() - t0;
}

static double run_memcpy(uint8_t *dst, const uint8_t *src, size_t n)
{
	double t0 = now();
	for (size_t o = 0; o < n; o += OUT_CHUNK)
		memcpy(dst + o, src + o, n - o < OUT_CHUNK ? n - o : OUT_CHUNK);
	return now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof v[0], cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Times of one cell: memcpy, scalar and SIMD per run. */
struct cell {
	double mc[MAX_REPS], sc[MAX_REPS], sv[MAX_REPS];
	double r_sc[MAX_REPS], r_sv[MAX_REPS]; /* memcpy/decode per run */
};

static void print_cell(const char *name, const char *dt, double src_bytes, double out_bytes,
		       struct cell *c, int reps)
{
	for (int i = 0; i < reps; i++) {
		c->r_sc[i] = c->mc[i] / c->sc[i];
		c->r_sv[i] = c->mc[i] / c->sv[i];
	}
	double ts = median(c->sc, reps), tv = median(c->sv, reps), tm = median(c->mc, reps);
	double rs = median(c->r_sc, reps), rv = median(c->r_sv, reps);
	printf("%-10s %-5s %7.1f %7.1f | %8.2f %8.2f %8.2f | %8.2f | %6.2fx %6.2fx %6.1fx%s\n",
	       name, dt, src_bytes / 1048576.0, out_bytes / 1048576.0, out_bytes / ts / 1e9,
	       out_bytes / tv / 1e9, src_bytes / tv / 1e9, out_bytes / tm / 1e9, rs, rv, ts / tv,
	       rv < 0.8 ? "  < 0.8" : "");
	fflush(stdout);
}

struct row {
	const char *name, *format, *layout;
};

/* Random object bytes; scale words get realistic finite values. */
static void fill_object(const struct nf_geometry *g, uint8_t *obj)
{
	for (uint64_t i = 0; i < g->bytes; i++)
		obj[i] = (uint8_t)rnd();
	if (g->layout == NF_LAYOUT_ROW_SPLIT_K128_V1) {
		const struct nf_plane *sp = &g->planes[g->nplanes - 1];
		for (uint64_t i = 0; i < sp->length / 2; i++)
			nf_wr16(obj + sp->offset + 2 * i, (uint16_t)(0x2000 + rnd() % 0x1000));
		if (g->format == NF_FORMAT_T2_G128_FP16) /* no illegal 0b10 codes */
			for (uint64_t i = 0; i < g->planes[0].length; i++)
				for (unsigned j = 0; j < 8; j += 2)
					if ((obj[i] >> j & 3) == 2)
						obj[i] ^= (uint8_t)(1u << j); /* -2 -> -1 */
		if (g->format == NF_FORMAT_Q8_G32_FP16) /* no illegal 0x80 */
			for (uint64_t i = 0; i < g->planes[0].length; i++)
				obj[i] = obj[i] == 0x80 ? 0x81 : obj[i];
	} else if (g->layout == NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1) {
		for (uint64_t i = 0; i < g->planes[1].length; i++)
			obj[g->planes[1].offset + i] = (uint8_t)(rnd() % 0x7F);
		for (uint64_t i = 0; i < g->divisors; i++)
			nf_wr32(obj + g->planes[2].offset + 4 * i, 0x40400000u); /* 3.0 */
	} else if (g->layout == NF_LAYOUT_ROW_SCALE_V1) {
		for (uint64_t i = 0; i < g->planes[0].length; i++)
			obj[i] = (obj[i] & 0x7F) == 0x7F ? 0x7E : obj[i];
		for (uint64_t i = 0; i < g->rows; i++)
			nf_wr16(obj + g->planes[1].offset + 2 * i, (uint16_t)(0x3C00 + rnd() % 0x100));
	} else if (g->format == NF_FORMAT_FP32) {
		/* finite values of weight-like magnitude */
		for (uint64_t i = 0; i < g->elements; i++) {
			uint32_t u = (uint32_t)rnd();
			nf_wr32(obj + 4 * i, (u & 0x807FFFFFu) | (uint32_t)(100 + u % 50) << 23);
		}
	} else if (g->format == NF_FORMAT_BF16) {
		for (uint64_t i = 0; i < g->elements; i++) {
			uint16_t u = (uint16_t)rnd();
			nf_wr16(obj + 2 * i, (uint16_t)((u & 0x807F) | (100 + u % 50) << 7));
		}
	}
}

static int bench_format(const struct row *r, int reps, enum nf_isa simd, uint64_t nrows)
{
	static const enum nf_dtype dts[3] = {NF_DTYPE_F32, NF_DTYPE_BF16, NF_DTYPE_F16};
	struct nf_geometry g;
	uint64_t shape[2] = {nrows, 4096};

	if (nf_geometry_init(&g, r->format, r->layout, 2, shape, 1)) {
		fprintf(stderr, "decode-bench: bad geometry for %s\n", r->name);
		return 8;
	}
	uint8_t *obj = xmalloc(g.bytes);
	fill_object(&g, obj);
	size_t max_out = (size_t)g.elements * 4;
	uint8_t *a = xmalloc(max_out), *b = xmalloc(max_out), *src = xmalloc(max_out);
	for (int d = 0; d < 3; d++) {
		size_t out_bytes = (size_t)g.elements * nf_dtype_size(dts[d]);
		struct cell c;
		/* the anchor copies the decoded bytes themselves: on this class
		 * of machine memcpy of zero pages runs ~1.6x faster than memcpy
		 * of random data (bench/README.md), so a zeroed source would
		 * overstate the ceiling */
		run_decode(&g, obj, dts[d], src, NF_ISA_SCALAR);
		for (int i = 0; i < reps; i++) {
			c.mc[i] = run_memcpy(b, src, out_bytes);
			/* alternate the order so neither side always runs first */
			if (i % 2) {
				c.sv[i] = run_decode(&g, obj, dts[d], b, simd);
				c.sc[i] = run_decode(&g, obj, dts[d], a, NF_ISA_SCALAR);
			} else {
				c.sc[i] = run_decode(&g, obj, dts[d], a, NF_ISA_SCALAR);
				c.sv[i] = run_decode(&g, obj, dts[d], b, simd);
			}
		}
		if (memcmp(a, src, out_bytes) != 0 || memcmp(b, src, out_bytes) != 0) {
			fprintf(stderr, "decode-bench: %s %s: SIMD output differs from scalar\n",
				r->name, nf_dtype_name(dts[d]));
			return 1;
		}
		print_cell(r->name, nf_dtype_name(dts[d]), (double)g.bytes, (double)out_bytes, &c,
			   reps);
	}
	free(obj);
	free(a);
	free(b);
	free(src);
	return 0;
}

/* The standalone output conversions: 32 Mi floats -> 64 MiB of bf16/f16. */
static int bench_conversions(const char *only, int reps, enum nf_isa simd, uint64_t nrows)
{
	size_t n = (size_t)nrows * 4096;
	float *in = xmalloc(n * 4);
	uint16_t *o = xmalloc(n * 2), *o2 = xmalloc(n * 2);
	uint8_t *src = xmalloc(n * 2);

	for (size_t i = 0; i < n; i++) {
		uint32_t u = (uint32_t)rnd();
		u = (u & 0x807FFFFFu) | (uint32_t)(100 + rnd() % 50) << 23;
		memcpy(in + i, &u, 4);
	}
	for (int which = 0; which < 2; which++) {
		const char *name = which ? "f32->f16" : "f32->bf16";
		struct cell c;
		if (only && strcmp(only, name) != 0)
			continue;
		/* the anchor copies the converted bytes (see bench_format) */
		if (which)
			nf_f32_to_f16_isa(in, (uint16_t *)(void *)src, n, NF_ISA_SCALAR);
		else
			nf_f32_to_bf16_isa(in, (uint16_t *)(void *)src, n, NF_ISA_SCALAR);
		for (int i = 0; i < reps; i++) {
			c.mc[i] = run_memcpy((uint8_t *)o2, src, n * 2);
			for (int k = 0; k < 2; k++) {
				int isa = (k + i) % 2;
				enum nf_isa use = isa ? simd : NF_ISA_SCALAR;
				uint16_t *dst = isa ? o2 : o;
				double t0 = now();
				for (size_t at = 0; at < n; at += OUT_CHUNK / 2) {
					if (which)
						nf_f32_to_f16_isa(in + at, dst + at, OUT_CHUNK / 2, use);
					else
						nf_f32_to_bf16_isa(in + at, dst + at, OUT_CHUNK / 2, use);
				}
				*(isa ? &c.sv[i] : &c.sc[i]) = now() - t0;
			}
		}
		if (memcmp(o, src, n * 2) != 0 || memcmp(o2, src, n * 2) != 0) {
			fprintf(stderr, "decode-bench: %s SIMD differs from scalar\n", name);
			return 1;
		}
		print_cell(name, which ? "f16" : "bf16", (double)n * 4, (double)n * 2, &c, reps);
	}
	free(in);
	free(o);
	free(o2);
	free(src);
	return 0;
}

static void print_load(const char *when)
{
	char buf[128] = "?";
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (!fgets(buf, sizeof buf, f))
			strcpy(buf, "?\n");
		fclose(f);
	}
	printf("load average %s: %s", when, buf);
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	const char *only = argc > 2 && strcmp(argv[2], "all") != 0 ? argv[2] : NULL;
	enum nf_isa simd = nf_isa_best();
	static const struct row rows[] = {
		{"q2", "q2_g64_fp16", "row_split_k128_v1"},
		{"q4", "q4_g64_fp16", "row_split_k128_v1"},
		{"q5", "q5_g64_fp16", "row_split_k128_v1"},
		{"q6", "q6_g64_fp16", "row_split_k128_v1"},
		{"q8", "q8_g32_fp16", "row_split_k128_v1"},
		{"t2", "t2_g128_fp16", "row_split_k128_v1"},
		{"nvfp4", "nvfp4", "block_scale_k16_m128x4_v1"},
		{"fp8", "fp8_e4m3fn_row_bf16", "row_scale_v1"},
		{"bf16", "bf16", "contiguous_le_v1"},
		{"fp32", "fp32", "contiguous_le_v1"},
	};

	uint64_t nrows = argc > 4 ? strtoull(argv[4], NULL, 10) : 8192;
	if (nrows == 0 || nrows % 128 || nrows > (1u << 20)) {
		fprintf(stderr, "decode-bench: ROWS is a multiple of 128 up to 2^20\n");
		return 2;
	}
	if (argc > 3 && strcmp(argv[3], "best") != 0) {
		if (strcmp(argv[3], "sse2") == 0)
			simd = NF_ISA_SSE2;
		else if (strcmp(argv[3], "avx2") == 0)
			simd = NF_ISA_AVX2;
		else {
			fprintf(stderr, "decode-bench: ISA is avx2 or sse2\n");
			return 2;
		}
		simd = nf_isa_resolve(simd);
	}
	if (reps < 1)
		reps = 1;
	if (reps > MAX_REPS)
		reps = MAX_REPS;
	printf("decode-bench: %d runs per cell (medians), SIMD = %s, %u KiB output per "
	       "nf_decode call\n", reps, nf_isa_name(simd), OUT_CHUNK / 1024);
	print_load("at start");
	printf("%-10s %-5s %7s %7s | %8s %8s %8s | %8s | %7s %7s %7s\n", "format", "out",
	       "src MiB", "out MiB", "scalar", "simd", "simd src", "memcpy", "scal/mc",
	       "simd/mc", "speedup");
	printf("%-10s %-5s %7s %7s | %8s %8s %8s | %8s |\n", "", "", "", "", "GB/s out",
	       "GB/s out", "GB/s", "GB/s");
	for (unsigned r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		if (only && strcmp(only, rows[r].name) != 0)
			continue;
		int rc = bench_format(&rows[r], reps, simd, nrows);
		if (rc)
			return rc;
	}
	if (!only || strncmp(only, "f32->", 5) == 0) {
		int rc = bench_conversions(only, reps, simd, nrows);
		if (rc)
			return rc;
	}
	print_load("at end");
	return 0;
}
