/* bench/decode_bench.c — decode micro-benchmark (see bench/README.md,
 * "Decode micro-benchmark").
 *
 * For every decodable format (q2, q4, q5, q6, q8, t2, nvfp4, fp8, bf16,
 * fp32) it builds one [8192, 4096] object (32 Mi elements) with random codes
 * and realistic finite scales (bf16 twice: row "bf16" with exponents spread
 * over 50 binades, row "bf16w" with weight-like values), then, for each
 * output dtype (f32, bf16, f16), decodes the whole object the way the
 * filesystem does --
 * nf_decode_spans() + nf_decode() per 1 MiB of output -- with the scalar
 * reference and with the SIMD path, into one output buffer the size of the
 * decoded tensor, and checks the two outputs are byte-identical.  The anchor
 * is memcpy of the same output bytes (a copy of the decoded tensor) in the
 * same 1 MiB chunks.  The three are interleaved chunk by chunk (see
 * one_run()), each with its own buffers.
 * Every row is measured twice in the same run.  First DRAM to DRAM, as
 * above.  Then "daemon-shaped" (the columns after the second bar), the
 * way ninferfs's daemon runs a decode (fs/ninfer/decoded.c): per 1 MiB of
 * output the chunk's source spans are copied from the big object into one
 * reused scratch buffer (the engine's read into the thread's work area),
 * the decode runs from there into one reused 1 MiB reply buffer (timed),
 * and the reply is copied out to a big buffer (the kernel's copy into the
 * mount's page cache); the anchor is the same with memcpy of the chunk's
 * output bytes in place of the decode.  Only the decode (or the anchor's
 * memcpy) is timed; the scratch and reply are shared by the three
 * contenders, so all three see the same addresses.
 * It also times the standalone f32 -> bf16 / f16 conversions
 * (nf_f32_to_bf16 / nf_f32_to_f16) on 32 Mi floats, and, as the floor of
 * any kernel that reads 4 bytes per 2 it writes, the same floats read with
 * no store at all (row "read-f32").
 *
 * Each figure is the median of REPS runs; a ratio is the median over the
 * runs of (memcpy time / decode time) within the run.  "best" is the SIMD
 * ratio from the fastest time of each chunk over all runs: on a loaded
 * machine a preemption only ever adds time, so it is the least disturbed
 * figure.
 *
 *   build/bench/decode-bench [REPS [ROW [ISA [ROWS]]]]
 *     REPS  runs per cell (default 5)
 *     ROW   only this format row (q4, nvfp4, fp32, f32->bf16, read-f32, ...;
 *           "all")
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
/* daemon-shaped scratch: the source spans of one chunk (at most 2 MiB of
 * floats per 1 MiB of output, plus an nvfp4 chunk's scale tiles and
 * divisors), each at a 64-byte boundary */
#define SCRATCH (4u << 20)

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
	/* page-aligned, as a daemon's work area and reply buffer are */
	void *p = aligned_alloc(4096, (n + 4095) / 4096 * 4096);
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

/* One cell of the table: a decode (g != NULL) or a standalone conversion,
 * with its own source and destination buffers for each of the three
 * contenders so that none reads what another just brought into the
 * caches. */
struct job {
	const struct nf_geometry *g;
	enum nf_dtype dt;
	int to_f16;                   /* conversion: 1 to f16, 0 to bf16, 2 read only */
	size_t out_bytes;
	enum nf_isa simd;
	const uint8_t *src_s, *src_v; /* object (or floats) for scalar, SIMD */
	uint8_t *out_s, *out_v;
	const uint8_t *mc_src;        /* memcpy: a copy of the output */
	uint8_t *mc_dst;
	/* daemon-shaped: the reused scratch (source) and reply buffers, and
	 * where each contender's replies are copied out (memcpy, scalar,
	 * SIMD) */
	uint8_t *scratch, *reply;
	uint8_t *sink[3];
};

static inline uint64_t ld64(const uint8_t *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	return w;
}

/* Read n bytes (a multiple of 64) and store nothing but one word (the
 * XOR of all, so the loads are not optimised away) at out: the time any
 * kernel needs just to read its source. */
static void read_only(const uint8_t *p, size_t n, uint8_t *out)
{
	uint64_t a = 0, b = 0, c = 0, d = 0;
	for (size_t i = 0; i < n; i += 64, p += 64) {
		a ^= ld64(p) ^ ld64(p + 32);
		b ^= ld64(p + 8) ^ ld64(p + 40);
		c ^= ld64(p + 16) ^ ld64(p + 48);
		d ^= ld64(p + 24) ^ ld64(p + 56);
	}
	a ^= b ^ c ^ d;
	memcpy(out, &a, 8);
}

/* Output chunk c (bytes [c * OUT_CHUNK, ...)) with isa, the way the
 * filesystem decodes: nf_decode_spans(), then nf_decode() on those spans
 * (here pointers into the in-memory object, no copy). */
static void do_chunk(const struct job *j, size_t c, enum nf_isa isa, const uint8_t *src,
		     uint8_t *out)
{
	size_t o = c * OUT_CHUNK, len = j->out_bytes - o < OUT_CHUNK ? j->out_bytes - o : OUT_CHUNK;

	if (!j->g) {
		const float *in = (const float *)(const void *)src + o / 2;
		uint16_t *dst = (uint16_t *)(void *)(out + o);
		if (j->to_f16 == 2)
			read_only(src + 2 * o, 2 * len, out + o);
		else if (j->to_f16)
			nf_f32_to_f16_isa(in, dst, len / 2, isa);
		else
			nf_f32_to_bf16_isa(in, dst, len / 2, isa);
		return;
	}
	const size_t esz = nf_dtype_size(j->dt);
	uint64_t b = o / esz, e = b + len / esz;
	struct nf_span sp[NF_MAX_SPANS];
	const uint8_t *bufs[NF_MAX_SPANS] = {0};
	unsigned n = nf_decode_spans(j->g, b, e, sp);
	for (unsigned i = 0; i < n; i++)
		bufs[i] = src + sp[i].offset;
	if (nf_decode_isa(j->g, b, e, bufs, j->dt, out + o, isa)) {
		fprintf(stderr, "decode-bench: nf_decode failed\n");
		exit(8);
	}
}

/* Daemon-shaped, untimed part 1: the source bytes of output chunk c
 * copied into the scratch buffer as the engine's read leaves them (each
 * span at a 64-byte boundary, as fs/ninfer/decoded.c places them);
 * bufs[] point into the scratch.  which: 0 memcpy anchor (the chunk's
 * output bytes), else a decode or conversion. */
static void dmn_fetch(const struct job *j, size_t c, int which, const uint8_t *src,
		      const uint8_t *bufs[NF_MAX_SPANS], uint64_t *b, uint64_t *e)
{
	size_t o = c * OUT_CHUNK, len = j->out_bytes - o < OUT_CHUNK ? j->out_bytes - o : OUT_CHUNK;

	if (which == 0) {
		memcpy(j->scratch, j->mc_src + o, len);
		return;
	}
	if (!j->g) {
		memcpy(j->scratch, src + 2 * o, 2 * len);
		return;
	}
	const size_t esz = nf_dtype_size(j->dt);
	struct nf_span sp[NF_MAX_SPANS];
	uint8_t *at = j->scratch;
	*b = o / esz;
	*e = *b + len / esz;
	unsigned n = nf_decode_spans(j->g, *b, *e, sp);
	for (unsigned i = 0; i < n; i++) {
		if (sp[i].length > (size_t)(j->scratch + SCRATCH - at)) {
			fprintf(stderr, "decode-bench: a chunk's source exceeds the scratch\n");
			exit(8);
		}
		memcpy(at, src + sp[i].offset, sp[i].length);
		bufs[i] = at;
		at += (sp[i].length + 63) & ~(size_t)63;
	}
}

/* Daemon-shaped, the timed part: the decode (or memcpy) from the scratch
 * into the reply. */
static void dmn_decode(const struct job *j, size_t len, int which, enum nf_isa isa,
		       const uint8_t *const bufs[NF_MAX_SPANS], uint64_t b, uint64_t e)
{
	if (which == 0) {
		memcpy(j->reply, j->scratch, len);
	} else if (!j->g) {
		const float *in = (const float *)(const void *)j->scratch;
		uint16_t *dst = (uint16_t *)(void *)j->reply;
		if (j->to_f16 == 2)
			read_only(j->scratch, 2 * len, j->reply);
		else if (j->to_f16)
			nf_f32_to_f16_isa(in, dst, len / 2, isa);
		else
			nf_f32_to_bf16_isa(in, dst, len / 2, isa);
	} else if (nf_decode_isa(j->g, b, e, bufs, j->dt, j->reply, isa)) {
		fprintf(stderr, "decode-bench: nf_decode failed\n");
		exit(8);
	}
}

/* Times of one cell: per run (t[0] memcpy, t[1] scalar, t[2] SIMD), and
 * per output chunk the fastest of all runs. */
struct cell {
	double t[3][MAX_REPS];
	double *best[3];
	double dt[3][MAX_REPS]; /* daemon-shaped */
	double *dbest[3];
	size_t nchunks;
};

static void cell_init(struct cell *c, size_t out_bytes)
{
	c->nchunks = (out_bytes + OUT_CHUNK - 1) / OUT_CHUNK;
	for (int k = 0; k < 3; k++) {
		c->best[k] = malloc(c->nchunks * sizeof(double));
		c->dbest[k] = malloc(c->nchunks * sizeof(double));
		if (!c->best[k] || !c->dbest[k]) {
			fprintf(stderr, "decode-bench: out of memory\n");
			exit(8);
		}
		for (size_t i = 0; i < c->nchunks; i++)
			c->best[k][i] = c->dbest[k][i] = 1e9;
	}
}

static void cell_free(struct cell *c)
{
	for (int k = 0; k < 3; k++) {
		free(c->best[k]);
		free(c->dbest[k]);
	}
}

/* One run: every output chunk by memcpy, the scalar reference and SIMD in
 * turn, the order rotating with the run, so a change in the load of the
 * shared machine hits all three alike. */
static void one_run(const struct job *j, int run, struct cell *cl)
{
	for (int k = 0; k < 3; k++)
		cl->t[k][run] = 0;
	for (size_t c = 0; c * OUT_CHUNK < j->out_bytes; c++) {
		size_t o = c * OUT_CHUNK;
		size_t len = j->out_bytes - o < OUT_CHUNK ? j->out_bytes - o : OUT_CHUNK;
		for (int k = 0; k < 3; k++) {
			int which = (k + run) % 3;
			double t0 = now();
			if (which == 0)
				memcpy(j->mc_dst + o, j->mc_src + o, len);
			else if (which == 1)
				do_chunk(j, c, NF_ISA_SCALAR, j->src_s, j->out_s);
			else
				do_chunk(j, c, j->simd, j->src_v, j->out_v);
			double t = now() - t0;
			cl->t[which][run] += t;
			if (t < cl->best[which][c])
				cl->best[which][c] = t;
		}
	}
}

/* One daemon-shaped run: the same rotation, each contender's chunk
 * fetched into the shared scratch, decoded into the shared reply (timed)
 * and copied out to its own sink. */
static void one_run_daemon(const struct job *j, int run, struct cell *cl)
{
	const uint8_t *srcs[3] = {NULL, j->src_s, j->src_v};

	for (int k = 0; k < 3; k++)
		cl->dt[k][run] = 0;
	for (size_t c = 0; c * OUT_CHUNK < j->out_bytes; c++) {
		size_t o = c * OUT_CHUNK;
		size_t len = j->out_bytes - o < OUT_CHUNK ? j->out_bytes - o : OUT_CHUNK;
		for (int k = 0; k < 3; k++) {
			int which = (k + run) % 3;
			const uint8_t *bufs[NF_MAX_SPANS] = {0};
			uint64_t b = 0, e = 0;
			dmn_fetch(j, c, which, srcs[which], bufs, &b, &e);
			double t0 = now();
			dmn_decode(j, len, which, which == 2 ? j->simd : NF_ISA_SCALAR, bufs, b, e);
			double t = now() - t0;
			memcpy(j->sink[which] + o, j->reply, len);
			cl->dt[which][run] += t;
			if (t < cl->dbest[which][c])
				cl->dbest[which][c] = t;
		}
	}
}

static void run_cell(const struct job *j, int reps, struct cell *c)
{
	cell_init(c, j->out_bytes);
	for (int i = 0; i < reps; i++)
		one_run(j, i, c);
	for (int i = 0; i < reps; i++)
		one_run_daemon(j, i, c);
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

static void print_cell(const char *name, const char *dt, double src_bytes, double out_bytes,
		       struct cell *c, int reps)
{
	double r_sc[MAX_REPS], r_sv[MAX_REPS], r_dv[MAX_REPS], best[3] = {0, 0, 0},
							      dbest[3] = {0, 0, 0};
	for (int i = 0; i < reps; i++) {
		r_sc[i] = c->t[0][i] / c->t[1][i];
		r_sv[i] = c->t[0][i] / c->t[2][i];
		r_dv[i] = c->dt[0][i] / c->dt[2][i];
	}
	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i < c->nchunks; i++) {
			best[k] += c->best[k][i];
			dbest[k] += c->dbest[k][i];
		}
	double dm = median(c->dt[0], reps), dv = median(r_dv, reps);
	double tm = median(c->t[0], reps), ts = median(c->t[1], reps), tv = median(c->t[2], reps);
	double rs = median(r_sc, reps), rv = median(r_sv, reps);
	printf("%-10s %-5s %7.1f %7.1f | %8.2f %8.2f %8.2f | %8.2f | %6.2fx %6.2fx %6.2fx "
	       "%6.1fx%s | %8.2f %6.2fx %6.2fx%s\n",
	       name, dt, src_bytes / 1048576.0, out_bytes / 1048576.0, out_bytes / ts / 1e9,
	       out_bytes / tv / 1e9, src_bytes / tv / 1e9, out_bytes / tm / 1e9, rs, rv,
	       best[0] / best[2], ts / tv, rv < 0.8 ? "  < 0.8" : "       ", out_bytes / dm / 1e9,
	       dv, dbest[0] / dbest[2], dv < 0.8 ? "  < 0.8" : "");
	fflush(stdout);
	cell_free(c);
}

struct row {
	const char *name, *format, *layout;
	int weights; /* bf16 only: weight-like values instead of wide exponents */
};

/* A weight-like value: the sum of four uniforms, centred and scaled to a
 * standard deviation of 0.02 (close to a normal law, also near 0, where it
 * decides how often a bf16 -> f16 vector holds an f16 subnormal). */
static float weight_value(void)
{
	double s = 0;
	for (int i = 0; i < 4; i++)
		s += (double)(rnd() >> 11) * 0x1p-53;
	return (float)((s - 2.0) * 0.02 * 1.7320508075688772);
}

/* Random object bytes; scale words get realistic finite values. */
static void fill_object(const struct nf_geometry *g, uint8_t *obj, int weights)
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
	} else if (g->format == NF_FORMAT_BF16 && weights) {
		for (uint64_t i = 0; i < g->elements; i++)
			nf_wr16(obj + 2 * i, nf_f32_to_bf16_one(weight_value()));
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
	uint8_t *obj = xmalloc(g.bytes), *obj2 = xmalloc(g.bytes);
	fill_object(&g, obj, r->weights);
	memcpy(obj2, obj, g.bytes);
	size_t max_out = (size_t)g.elements * 4;
	uint8_t *a = xmalloc(max_out), *b = xmalloc(max_out), *src = xmalloc(max_out),
		*m = xmalloc(max_out), *scratch = xmalloc(SCRATCH), *reply = xmalloc(OUT_CHUNK);
	for (int d = 0; d < 3; d++) {
		/* the daemon-shaped replies are copied out over the DRAM-shaped
		 * outputs: the check below covers both */
		struct job j = {.g = &g, .dt = dts[d], .simd = simd, .src_s = obj, .src_v = obj2,
				.out_s = a, .out_v = b, .mc_src = src, .mc_dst = m,
				.scratch = scratch, .reply = reply, .sink = {m, a, b}};
		j.out_bytes = (size_t)g.elements * nf_dtype_size(dts[d]);
		/* the anchor copies the decoded bytes themselves: on this VM
		 * memcpy from a zero-filled buffer ran ~1.6x faster than from
		 * random bytes (bench/README.md) */
		for (size_t c = 0; c * OUT_CHUNK < j.out_bytes; c++)
			do_chunk(&j, c, NF_ISA_SCALAR, obj, src);
		struct cell c;
		run_cell(&j, reps, &c);
		if (memcmp(a, src, j.out_bytes) != 0 || memcmp(b, src, j.out_bytes) != 0) {
			fprintf(stderr, "decode-bench: %s %s: SIMD output differs from scalar\n",
				r->name, nf_dtype_name(dts[d]));
			return 1;
		}
		print_cell(r->name, nf_dtype_name(dts[d]), (double)g.bytes, (double)j.out_bytes,
			   &c, reps);
	}
	free(obj);
	free(obj2);
	free(a);
	free(b);
	free(src);
	free(m);
	free(scratch);
	free(reply);
	return 0;
}

/* The standalone output conversions: ROWS * 4096 floats to bf16 / f16. */
static int bench_conversions(const char *only, int reps, enum nf_isa simd, uint64_t nrows)
{
	size_t n = (size_t)nrows * 4096;
	float *in = xmalloc(n * 4), *in2 = xmalloc(n * 4);
	uint8_t *o = xmalloc(n * 2), *o2 = xmalloc(n * 2), *src = xmalloc(n * 2),
		*m = xmalloc(n * 2), *scratch = xmalloc(SCRATCH), *reply = xmalloc(OUT_CHUNK);

	for (size_t i = 0; i < n; i++) {
		uint32_t u = (uint32_t)rnd();
		u = (u & 0x807FFFFFu) | (uint32_t)(100 + rnd() % 50) << 23;
		memcpy(in + i, &u, 4);
	}
	memcpy(in2, in, n * 4);
	for (int which = 0; which < 3; which++) {
		const char *name = which == 2 ? "read-f32" : which ? "f32->f16" : "f32->bf16";
		struct job j = {.to_f16 = which, .out_bytes = n * 2, .simd = simd,
				.src_s = (const uint8_t *)in, .src_v = (const uint8_t *)in2,
				.out_s = o, .out_v = o2, .mc_src = src, .mc_dst = m,
				.scratch = scratch, .reply = reply, .sink = {m, o, o2}};
		struct cell c;
		if (only && strcmp(only, name) != 0)
			continue;
		if (which == 2) {
			/* the floor: the anchor copies the f16 bytes of the row
			 * before, both contenders only read the floats */
			run_cell(&j, reps, &c);
			print_cell(name, "none", (double)n * 4, (double)n * 2, &c, reps);
			continue;
		}
		/* the anchor copies the converted bytes (see bench_format) */
		for (size_t k = 0; k * OUT_CHUNK < j.out_bytes; k++)
			do_chunk(&j, k, NF_ISA_SCALAR, j.src_s, src);
		run_cell(&j, reps, &c);
		if (memcmp(o, src, n * 2) != 0 || memcmp(o2, src, n * 2) != 0) {
			fprintf(stderr, "decode-bench: %s SIMD differs from scalar\n", name);
			return 1;
		}
		print_cell(name, which ? "f16" : "bf16", (double)n * 4, (double)n * 2, &c, reps);
	}
	free(in);
	free(in2);
	free(o);
	free(o2);
	free(src);
	free(m);
	free(scratch);
	free(reply);
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
		{"q2", "q2_g64_fp16", "row_split_k128_v1", 0},
		{"q4", "q4_g64_fp16", "row_split_k128_v1", 0},
		{"q5", "q5_g64_fp16", "row_split_k128_v1", 0},
		{"q6", "q6_g64_fp16", "row_split_k128_v1", 0},
		{"q8", "q8_g32_fp16", "row_split_k128_v1", 0},
		{"t2", "t2_g128_fp16", "row_split_k128_v1", 0},
		{"nvfp4", "nvfp4", "block_scale_k16_m128x4_v1", 0},
		{"fp8", "fp8_e4m3fn_row_bf16", "row_scale_v1", 0},
		{"bf16", "bf16", "contiguous_le_v1", 0},
		{"bf16w", "bf16", "contiguous_le_v1", 1},
		{"fp32", "fp32", "contiguous_le_v1", 0},
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
	printf("%-10s %-5s %7s %7s | %-58s | %s\n", "", "", "", "",
	       "DRAM to DRAM (the whole tensor streams)",
	       "daemon-shaped (scratch -> reply)");
	printf("%-10s %-5s %7s %7s | %8s %8s %8s | %8s | %7s %7s %7s %7s        | %8s %7s %7s\n",
	       "format", "out", "src MiB", "out MiB", "scalar", "simd", "simd src", "memcpy",
	       "scal/mc", "simd/mc", "best", "speedup", "memcpy", "simd/mc", "best");
	printf("%-10s %-5s %7s %7s | %8s %8s %8s | %8s | %38s | %8s\n", "", "", "", "",
	       "GB/s out", "GB/s out", "GB/s", "GB/s", "", "GB/s");
	for (unsigned r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		if (only && strcmp(only, rows[r].name) != 0)
			continue;
		int rc = bench_format(&rows[r], reps, simd, nrows);
		if (rc)
			return rc;
	}
	if (!only || strncmp(only, "f32->", 5) == 0 || strcmp(only, "read-f32") == 0) {
		int rc = bench_conversions(only, reps, simd, nrows);
		if (rc)
			return rc;
	}
	print_load("at end");
	return 0;
}
