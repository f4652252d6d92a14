/* bench/decode_bench.c — decode micro-benchmark (see bench/README.md,
 * "Decode micro-benchmark").
 *
 * For q4, q8, nvfp4, fp8 and bf16 it builds one ~64 MiB encoded object with
 * random codes and scales, then decodes the whole object to f32 the way the
 * filesystem does -- nf_decode_spans() + nf_decode() per 1 MiB of output --
 * with the scalar reference and with the best SIMD path, and measures
 * memcpy of the same number of output bytes (same 1 MiB chunks, separate
 * source buffer) in the same run as the ceiling.  Best of REPS runs.
 * It also times the f32 -> bf16 / f16 output conversions.
 *
 *   build/bench/decode-bench [reps [only]]   (default 5 reps; `only` runs
 *                                            just the row of that name) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codecs/codec.h"
#include "codecs/internal.h"

#define OUT_CHUNK (1u << 20) /* output bytes per nf_decode call */

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
	memset(p, 0, n); /* fault the pages in before timing */
	return p;
}

static double run_decode(const struct nf_geometry *g, const uint8_t *obj, float *out,
			 enum nf_isa isa)
{
	const uint64_t per = OUT_CHUNK / 4;
	double t0 = now();
	for (uint64_t b = 0; b < g->elements; b += per) {
		uint64_t e = b + per < g->elements ? b + per : g->elements;
		struct nf_span sp[NF_MAX_SPANS];
		const uint8_t *bufs[NF_MAX_SPANS] = {0};
		unsigned n = nf_decode_spans(g, b, e, sp);
		for (unsigned i = 0; i < n; i++)
			bufs[i] = obj + sp[i].offset;
		if (nf_decode_isa(g, b, e, bufs, NF_DTYPE_F32, out + b, isa)) {
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

struct row {
	const char *name, *format, *layout;
	uint64_t n, k;
};

static void print_header(void)
{
	printf("%-10s %8s %8s | %9s %9s %9s | %9s | %7s %7s %7s\n", "format", "src MiB",
	       "out MiB", "scalar", "simd", "simd src", "memcpy", "scal/mc", "simd/mc",
	       "speedup");
	printf("%-10s %8s %8s | %9s %9s %9s | %9s | %7s %7s %7s\n", "", "", "", "GB/s out",
	       "GB/s out", "GB/s", "GB/s", "", "", "");
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	const char *only = argc > 2 ? argv[2] : NULL;
	static const struct row rows[] = {
		{"q4", "q4_g64_fp16", "row_split_k128_v1", 30840, 4096},
		{"q8", "q8_g32_fp16", "row_split_k128_v1", 15420, 4096},
		{"nvfp4", "nvfp4", "block_scale_k16_m128x4_v1", 29056, 4096},
		{"fp8", "fp8_e4m3fn_row_bf16", "row_scale_v1", 16376, 4096},
		{"bf16", "bf16", "contiguous_le_v1", 16384, 2048},
	};
	enum nf_isa simd = nf_isa_best();

	if (reps < 1)
		reps = 1;
	printf("decode-bench: %d reps (best), SIMD = %s, %u KiB output per nf_decode call\n",
	       reps, nf_isa_name(simd), OUT_CHUNK / 1024);
	print_header();
	for (unsigned r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		struct nf_geometry g;
		uint64_t shape[2] = {rows[r].n, rows[r].k};
		if (only && strcmp(only, rows[r].name) != 0)
			continue;
		if (nf_geometry_init(&g, rows[r].format, rows[r].layout, 2, shape, 1)) {
			fprintf(stderr, "decode-bench: bad geometry for %s\n", rows[r].name);
			return 8;
		}
		uint8_t *obj = xmalloc(g.bytes);
		/* random bytes are a valid encoding for every format here except
		 * the scale words; give those realistic finite values */
		for (uint64_t i = 0; i < g.bytes; i++)
			obj[i] = (uint8_t)rnd();
		if (g.layout == NF_LAYOUT_ROW_SPLIT_K128_V1)
			for (uint64_t i = 0; i < g.planes[g.nplanes - 1].length / 2; i++)
				nf_wr16(obj + g.planes[g.nplanes - 1].offset + 2 * i,
					(uint16_t)(0x2000 + rnd() % 0x1000));
		else if (g.layout == NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1) {
			for (uint64_t i = 0; i < g.planes[1].length; i++)
				obj[g.planes[1].offset + i] = (uint8_t)(rnd() % 0x7F);
			nf_wr32(obj + g.planes[2].offset, 0x40400000u); /* 3.0 */
		} else if (g.layout == NF_LAYOUT_ROW_SCALE_V1)
			for (uint64_t i = 0; i < g.rows; i++)
				nf_wr16(obj + g.planes[1].offset + 2 * i, (uint16_t)(0x3C00 + rnd() % 0x100));
		size_t out_bytes = (size_t)g.elements * 4;
		float *out = xmalloc(out_bytes), *out2 = xmalloc(out_bytes);
		uint8_t *src = xmalloc(out_bytes);
		double ts = 1e9, tv = 1e9, tm = 1e9;
		for (int i = 0; i < reps; i++) {
			double t = run_memcpy((uint8_t *)out2, src, out_bytes);
			if (t < tm)
				tm = t;
			t = run_decode(&g, obj, out, NF_ISA_SCALAR);
			if (t < ts)
				ts = t;
			t = run_decode(&g, obj, out2, simd);
			if (t < tv)
				tv = t;
		}
		if (memcmp(out, out2, out_bytes) != 0) {
			fprintf(stderr, "decode-bench: %s SIMD output differs from scalar\n",
				rows[r].name);
			return 1;
		}
		double ob = (double)out_bytes;
		printf("%-10s %8.1f %8.1f | %9.2f %9.2f %9.2f | %9.2f | %6.0f%% %6.0f%% %6.1fx\n",
		       rows[r].name, (double)g.bytes / 1048576.0, ob / 1048576.0, ob / ts / 1e9,
		       ob / tv / 1e9, (double)g.bytes / tv / 1e9, ob / tm / 1e9,
		       100.0 * tm / ts, 100.0 * tm / tv, ts / tv);
		free(obj);
		free(out);
		free(out2);
		free(src);
	}
	if (only && strncmp(only, "f32->", 5) != 0)
		return 0;
	/* output conversions: 256 MiB of f32 -> 128 MiB of bf16 / f16 (larger
	 * than the last-level cache, like the decode rows) */
	{
		size_t n = 64u << 20;
		float *in = xmalloc(n * 4);
		uint16_t *o = xmalloc(n * 2), *o2 = xmalloc(n * 2);
		uint8_t *src = xmalloc(n * 2);
		for (size_t i = 0; i < n; i++) {
			uint32_t u = (uint32_t)rnd();
			u = (u & 0x807FFFFFu) | (uint32_t)(100 + rnd() % 50) << 23;
			memcpy(in + i, &u, 4);
		}
		for (int which = 0; which < 2; which++) {
			double ts = 1e9, tv = 1e9, tm = 1e9;
			for (int i = 0; i < reps; i++) {
				double t0, t;
				t = run_memcpy((uint8_t *)o2, src, n * 2);
				if (t < tm)
					tm = t;
				for (int isa = 0; isa < 2; isa++) {
					enum nf_isa use = isa ? simd : NF_ISA_SCALAR;
					uint16_t *dst = isa ? o2 : o;
					t0 = now();
					for (size_t c = 0; c < n; c += OUT_CHUNK / 2) {
						if (which)
							nf_f32_to_f16_isa(in + c, dst + c, OUT_CHUNK / 2, use);
						else
							nf_f32_to_bf16_isa(in + c, dst + c, OUT_CHUNK / 2, use);
					}
					t = now() - t0;
					if (isa && t < tv)
						tv = t;
					if (!isa && t < ts)
						ts = t;
				}
			}
			if (memcmp(o, o2, n * 2) != 0) {
				fprintf(stderr, "decode-bench: conversion SIMD differs from scalar\n");
				return 1;
			}
			double ob = (double)n * 2;
			printf("%-10s %8.1f %8.1f | %9.2f %9.2f %9.2f | %9.2f | %6.0f%% %6.0f%% %6.1fx\n",
			       which ? "f32->f16" : "f32->bf16", (double)n * 4 / 1048576.0,
			       ob / 1048576.0, ob / ts / 1e9, ob / tv / 1e9, (double)n * 4 / tv / 1e9,
			       ob / tm / 1e9, 100.0 * tm / ts, 100.0 * tm / tv, ts / tv);
		}
		free(in);
		free(o);
		free(o2);
		free(src);
	}
	return 0;
}
