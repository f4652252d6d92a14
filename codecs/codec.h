/* codecs/codec.h — the format/layout registry: the only place that knows
 * what the bytes of a tensor object mean.
 *
 * Reference: ../shared/spec/codecs.md (cited as "codecs §N") and the
 * container seed §6 (format and layout names).
 *
 * Every function here is pure: no I/O, no global mutable state, no
 * allocation unless the name says so.  Sizes and offsets are uint64_t and
 * every computation is overflow-checked (an overflow is NF_CODEC_OVERFLOW,
 * never a wrap). */
#ifndef NF_CODECS_CODEC_H
#define NF_CODECS_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NF_MAX_RANK 16   /* seed §1: Shape has 0..16 dimensions */
#define NF_MAX_PLANES 3  /* the most planes any layout has */
#define NF_MAX_SPANS 4   /* the most byte spans one decode needs */

enum nf_format {
	NF_FORMAT_UNKNOWN = 0,
	NF_FORMAT_BF16,
	NF_FORMAT_FP32,
	NF_FORMAT_INT32,
	NF_FORMAT_Q2_G64_FP16,
	NF_FORMAT_Q4_G64_FP16,
	NF_FORMAT_Q5_G64_FP16,
	NF_FORMAT_Q6_G64_FP16,
	NF_FORMAT_Q8_G32_FP16,
	NF_FORMAT_T2_G128_FP16,
	NF_FORMAT_NVFP4,
	NF_FORMAT_FP8_E4M3FN_ROW_BF16,
};

enum nf_layout {
	NF_LAYOUT_UNKNOWN = 0,
	NF_LAYOUT_CONTIGUOUS_LE_V1,
	NF_LAYOUT_ROW_SPLIT_K128_V1,
	NF_LAYOUT_BLOCK_SCALE_K16_M128X4_V1,
	NF_LAYOUT_ROW_SCALE_V1,
	NF_LAYOUT_RAW_BYTES_V1, /* resources only (seed §5.2) */
};

/* Why a (format, layout, shape, divisors) tuple cannot be interpreted. */
enum nf_codec_status {
	NF_CODEC_OK = 0,
	NF_CODEC_UNKNOWN_FORMAT,      /* format name not in seed §6.1 */
	NF_CODEC_UNKNOWN_LAYOUT,      /* layout name not in seed §6.2 */
	NF_CODEC_PAIR_NOT_ALLOWED,    /* both known, but seed §6.2 forbids the pair */
	NF_CODEC_BAD_SHAPE,           /* shape breaks the layout's rules */
	NF_CODEC_DIVISORS_NOT_ALLOWED,/* divisors != 1 outside nvfp4 */
	NF_CODEC_BAD_DIVISORS,        /* divisors does not divide N into 128-row shares */
	NF_CODEC_OVERFLOW,            /* a size does not fit in 64 bits */
};

/* Element type of decoded output. */
enum nf_dtype {
	NF_DTYPE_F32 = 0,
	NF_DTYPE_BF16,
	NF_DTYPE_F16,
	NF_DTYPE_I32,
};

/* One plane of an encoded object: a named byte span, object-relative. */
struct nf_plane {
	const char *name;  /* "data", "base", "high", "scales", "codes", "divisors" */
	uint64_t offset;
	uint64_t length;
};

/* An object-relative byte span. */
struct nf_span {
	uint64_t offset;
	uint64_t length;
};

/* Everything the registry derives from one tensor record.  Filled by
 * nf_geometry_init(); read-only afterwards.  Fields not used by a layout
 * are zero. */
struct nf_geometry {
	enum nf_format format;
	enum nf_layout layout;
	uint32_t rank;
	uint64_t shape[NF_MAX_RANK];
	uint64_t divisors;     /* D; 1 unless nvfp4 says otherwise */
	uint64_t elements;     /* elements(shape); 1 for rank 0 */
	uint64_t bytes;        /* encoded size (codecs §1-§4) */
	uint64_t rows, cols;   /* N and K for rank-2 layouts; 0 for contiguous */
	unsigned nplanes;
	struct nf_plane planes[NF_MAX_PLANES];
	/* Layout parameters (codecs §2.1, §3.1, §4.1). */
	uint64_t group;        /* G: elements per scale group */
	uint64_t k_pad;        /* row_split: align_up(K, 128) */
	uint64_t gpr;          /* row_split: groups per row */
	uint64_t base_bytes_per_group, high_bytes_per_group; /* row_split B, H */
	uint64_t word_bytes;   /* contiguous: 2 or 4 */
};

/* Name lookups: exact, case-sensitive comparison; unknown -> *_UNKNOWN. */
enum nf_format nf_format_from_name(const char *name);
enum nf_layout nf_layout_from_name(const char *name);
const char *nf_format_name(enum nf_format f);
const char *nf_layout_name(enum nf_layout l);
const char *nf_dtype_name(enum nf_dtype d);       /* "f32", "bf16", "f16", "int32" */
unsigned nf_dtype_size(enum nf_dtype d);          /* 4, 2, 2, 4 */
const char *nf_codec_status_str(enum nf_codec_status s); /* one short sentence */

/* Interpret a tensor record.  On success fills *g and returns NF_CODEC_OK.
 * `format`/`layout` are the names as stored.  `divisors` is the JSON value
 * (1 when absent); 0 is NF_CODEC_BAD_DIVISORS for nvfp4 and
 * NF_CODEC_DIVISORS_NOT_ALLOWED elsewhere.  Resources: layout
 * "raw_bytes_v1" with format NULL or "", rank 1 and shape[0] = bytes (>= 1)
 * gives one plane "data" (they have no decode).  On failure *g is only
 * partially filled and must not be used. */
enum nf_codec_status nf_geometry_init(struct nf_geometry *g, const char *format,
				      const char *layout, uint32_t rank,
				      const uint64_t *shape, uint64_t divisors);

/* The dtype a decoded view of this object has when the user asked for
 * `wanted`: int32 objects stay NF_DTYPE_I32, everything else is `wanted`. */
enum nf_dtype nf_geometry_output_dtype(const struct nf_geometry *g, enum nf_dtype wanted);

/* Row views (codecs §2.7, §3.6, §4.3).  For rank-2 layouts: the spans of
 * rows [r0, r0+count) in each plane, in plane order; returns how many
 * spans were written (<= NF_MAX_PLANES), or 0 when the layout has no
 * row view (contiguous, or nvfp4 rows not on 128-row tiles).
 * nvfp4 (codecs §3.6): only when r0 and count are multiples of 128 and the
 * rows lie inside one divisor share; then three spans (codes, the tile-rows'
 * scales, that share's 4-byte divisor) and the standalone object has D = 1.
 * nf_rows_geometry() gives the geometry of a standalone object holding
 * `rows` rows of the parent (same format/layout/K, N = rows); the bytes of
 * such an object are the parent's row spans placed at the sub-geometry's
 * plane offsets, with zeros in the gaps (codecs §2.7). */
unsigned nf_row_spans(const struct nf_geometry *g, uint64_t r0, uint64_t count,
		      struct nf_span spans[NF_MAX_PLANES]);
enum nf_codec_status nf_rows_geometry(const struct nf_geometry *parent, uint64_t rows,
				      struct nf_geometry *out);

/* Decoding an element range [begin, end) of the object's logical C-order
 * element sequence (0 <= begin <= end <= elements).
 *
 * nf_decode_spans() says which bytes of the object the range needs: at most
 * NF_MAX_SPANS spans, increasing offsets, non-overlapping, inside
 * [0, g->bytes).  The caller fetches exactly those bytes and passes them to
 * nf_decode() as bufs[i] (bufs[i] holds spans[i].length bytes).  The cost of
 * both is proportional to end - begin (plus at most one scale tile), never
 * to the object's size. */
unsigned nf_decode_spans(const struct nf_geometry *g, uint64_t begin, uint64_t end,
			 struct nf_span spans[NF_MAX_SPANS]);

/* Decode [begin, end) into `out` as `dtype` (end - begin elements of
 * nf_dtype_size(dtype) bytes, little-endian; `out` and bufs[] need no
 * particular alignment).  dtype must be
 * nf_geometry_output_dtype(g, dtype).  Returns 0, or -EINVAL for a
 * mismatched dtype or range, or a layout without decode (raw_bytes_v1).
 * bf16 objects asked for as bf16 are copied unchanged (NaN payloads kept);
 * every other bf16/f16 output is the binary32 value rounded once (see
 * nf_f32_to_bf16).  On CPUs with AVX2 and F16C the output dtype is written
 * straight into `out` (no binary32 pass through memory), so `out` can be the
 * buffer a reply is sent from; the bytes are the same on every CPU.
 * Thread-safe; allocates nothing (uses at most about 17 KiB of stack). */
int nf_decode(const struct nf_geometry *g, uint64_t begin, uint64_t end,
	      const uint8_t *const bufs[NF_MAX_SPANS], enum nf_dtype dtype, void *out);

/* Output conversions from binary32 (codecs §0.1, §8.5): round to nearest
 * even, NaN stays NaN, overflow to infinity.  Subnormal results are kept.
 * A NaN becomes a quiet NaN with the same sign and top payload bits
 * (bf16: high half | 0x0040; f16: 0x7E00 | fraction >> 13). */
void nf_f32_to_bf16(const float *in, uint16_t *out, size_t n);
void nf_f32_to_f16(const float *in, uint16_t *out, size_t n);

/* Scalar primitives (codecs §0.1), exposed for tests and tools. */
float nf_f16_to_f32(uint16_t h);
float nf_bf16_to_f32(uint16_t h);
float nf_e4m3fn_to_f32(uint8_t b);
float nf_e2m1_to_f32(uint8_t code4);

/* Encoding (the writer and tests).  `out` has g->bytes bytes; every byte is
 * written, padding canonical (codecs §2.4).
 *
 * nf_encode_f32(): the canonical reference quantizer from logical values
 * (elements floats; for int32 objects the values are int32 bit patterns).
 * Returns 0 or -EINVAL (value not representable, e.g. NaN/Inf into a
 * scaled format, or a row_split scale beyond binary16); after -EINVAL `out`
 * is partially written.  The quantization rules are documented at the top
 * of codecs/quantize.c (nvfp4: divisors all 1.0).  Allocates nothing. */
int nf_encode_f32(const struct nf_geometry *g, const float *values, uint8_t *out);

/* nf_encode_codes(): exact packing from chosen codes and scales.
 *   codes:  one int32 per logical element: the signed integer q for the
 *           row_split formats, the raw 4-bit code for nvfp4, the raw byte
 *           for fp8 (ignored for contiguous formats: use nf_encode_f32).
 *   scales: uint16 binary16 per logical group (row_split: N*logical_groups,
 *           row-major), uint8 E4M3FN per 16-column group (nvfp4: N*K/16,
 *           row-major, swizzled by the encoder), uint16 bf16 per row (fp8).
 *   divisors: D binary32 values (nvfp4 only; NULL means all 1.0).
 * Any code the bit field can hold is packed, including the ones the
 * contract calls illegal (t2 -2, q8 -128, fp8 0x7F/0xFF, nvfp4 scale bytes
 * >= 0x7F), so tests can build objects for nf_check_invariants().  For
 * contiguous objects only int32 is accepted (codes = the values); bf16 and
 * fp32 return -EINVAL.  Returns 0 or -EINVAL (code out of its bit range). */
int nf_encode_codes(const struct nf_geometry *g, const int32_t *codes, const void *scales,
		    const float *divisors, uint8_t *out);

/* Deep invariants (codecs §2.4, §2.5, §3.4, §4.2) of a whole encoded object
 * held in memory: zero plane gaps, canonical padding lanes and groups,
 * legal codes, finite scales, positive divisors.  Returns true when clean;
 * otherwise fills *v (may be NULL) with the first violation.  The finding
 * codes and the check order are listed at the top of codecs/invariants.c.
 * Contiguous and raw objects are always clean. */
struct nf_violation {
	const char *code;   /* stable finding code, e.g. "CODEC_PADDING_NONZERO" */
	uint64_t element;   /* first offending logical element, or byte offset */
	char detail[160];   /* human evidence */
};
bool nf_check_invariants(const struct nf_geometry *g, const uint8_t *object, struct nf_violation *v);

#endif
