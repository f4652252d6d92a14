/* fuzz-codecs: the codec registry on random tuples and random bytes.
 *
 * Input: format, layout, rank, shape (small), divisors, an element range
 * and a row range, then the object bytes (zero-padded to the encoded size).
 * Checks, when nf_geometry_init() accepts the tuple:
 *   - geometry: elements = product(shape), planes increasing, disjoint and
 *     inside [0, bytes);
 *   - nf_decode_spans(): at most NF_MAX_SPANS spans, increasing,
 *     non-overlapping, inside [0, bytes).  Only those spans are copied, each
 *     into its own exact-size malloc'd buffer, so ASan reports any read
 *     outside them; nf_decode() must succeed for the output dtype and fail
 *     with -EINVAL for the others;
 *   - splitting [begin, end) at a midpoint decodes to the same values;
 *   - nf_check_invariants() on the whole object (exact-size buffer);
 *   - rank-2 row views: nf_row_spans() spans lie inside the parent's planes
 *     and match nf_rows_geometry()'s plane lengths; the standalone rows
 *     object built from them (codecs §2.7) decodes to the parent's rows. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "codecs/codec.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OBJECT_BYTES (1u << 20)
#define MAX_DECODE (1u << 16)

/* Bitwise equality, except that any NaN equals any NaN of the same dtype. */
static bool same_values(enum nf_dtype d, const void *a, const void *b, uint64_t n)
{
	if (memcmp(a, b, n * nf_dtype_size(d)) == 0)
		return true;
	for (uint64_t i = 0; i < n; i++) {
		if (d == NF_DTYPE_F32) {
			float x, y;
			memcpy(&x, (const char *)a + 4 * i, 4);
			memcpy(&y, (const char *)b + 4 * i, 4);
			if (memcmp(&x, &y, 4) && !(isnan(x) && isnan(y)))
				return false;
		} else if (d == NF_DTYPE_I32) {
			if (memcmp((const char *)a + 4 * i, (const char *)b + 4 * i, 4))
				return false;
		} else {
			uint16_t x, y;
			memcpy(&x, (const char *)a + 2 * i, 2);
			memcpy(&y, (const char *)b + 2 * i, 2);
			unsigned em = d == NF_DTYPE_BF16 ? 0x7f80 : 0x7c00;
			unsigned mm = d == NF_DTYPE_BF16 ? 0x007f : 0x03ff;
			bool nx = (x & em) == em && (x & mm), ny = (y & em) == em && (y & mm);
			if (x != y && !(nx && ny))
				return false;
		}
	}
	return true;
}

/* Decode [begin, end) of `object` as `dtype` through nf_decode_spans, with
 * every span in its own exact-size buffer.  Returns a malloc'd output, or
 * NULL when dtype is not the object's output dtype (then nf_decode must
 * have said -EINVAL). */
static void *decode_range(const struct nf_geometry *g, const uint8_t *object, uint64_t begin,
			  uint64_t end, enum nf_dtype dtype)
{
	struct nf_span spans[NF_MAX_SPANS];
	memset(spans, 0xa5, sizeof spans);
	unsigned n = nf_decode_spans(g, begin, end, spans);
	FUZZ_CHECK(n <= NF_MAX_SPANS, "%u spans", n);
	uint64_t prev_end = 0;
	for (unsigned i = 0; i < n; i++) {
		FUZZ_CHECK(spans[i].offset >= prev_end, "span %u at %llu before %llu", i,
			   (unsigned long long)spans[i].offset, (unsigned long long)prev_end);
		FUZZ_CHECK(spans[i].offset <= g->bytes && spans[i].length <= g->bytes - spans[i].offset,
			   "span %u [%llu,+%llu) outside %llu bytes", i,
			   (unsigned long long)spans[i].offset, (unsigned long long)spans[i].length,
			   (unsigned long long)g->bytes);
		prev_end = spans[i].offset + spans[i].length;
	}
	uint8_t *bufs[NF_MAX_SPANS] = {0};
	for (unsigned i = 0; i < n; i++) {
		bufs[i] = malloc(spans[i].length);
		FUZZ_CHECK(bufs[i] != NULL || spans[i].length == 0, "oom");
		memcpy(bufs[i], object + spans[i].offset, spans[i].length);
	}
	uint64_t count = end - begin;
	void *out = malloc(count * nf_dtype_size(dtype) + 1);
	FUZZ_CHECK(out != NULL, "oom");
	const uint8_t *const *cb = (const uint8_t *const *)bufs;
	int rc = nf_decode(g, begin, end, cb, dtype, out);
	for (unsigned i = 0; i < n; i++)
		free(bufs[i]);
	if (nf_geometry_output_dtype(g, dtype) != dtype) {
		FUZZ_CHECK(rc == -EINVAL, "decode as %s (not the output dtype) gave %d",
			   nf_dtype_name(dtype), rc);
		free(out);
		return NULL;
	}
	FUZZ_CHECK(rc == 0, "decode [%llu,%llu) as %s gave %d", (unsigned long long)begin,
		   (unsigned long long)end, nf_dtype_name(dtype), rc);
	return out;
}

static void check_geometry(const struct nf_geometry *g, uint32_t rank, const uint64_t *shape)
{
	uint64_t el = 1;
	for (uint32_t i = 0; i < rank; i++)
		el *= shape[i]; /* init accepted it, so it did not overflow */
	FUZZ_CHECK(g->elements == el, "elements %llu != %llu", (unsigned long long)g->elements,
		   (unsigned long long)el);
	FUZZ_CHECK(g->nplanes >= 1 && g->nplanes <= NF_MAX_PLANES, "nplanes %u", g->nplanes);
	uint64_t prev_end = 0;
	for (unsigned i = 0; i < g->nplanes; i++) {
		const struct nf_plane *p = &g->planes[i];
		FUZZ_CHECK(p->offset >= prev_end && p->offset <= g->bytes &&
			   p->length <= g->bytes - p->offset, "plane %u [%llu,+%llu) of %llu", i,
			   (unsigned long long)p->offset, (unsigned long long)p->length,
			   (unsigned long long)g->bytes);
		prev_end = p->offset + p->length;
	}
}

static void check_rows(const struct nf_geometry *g, const uint8_t *object, uint64_t r0,
		       uint64_t count)
{
	struct nf_span spans[NF_MAX_PLANES];
	unsigned n = nf_row_spans(g, r0, count, spans);
	if (n == 0)
		return;
	FUZZ_CHECK(n == g->nplanes, "%u row spans for %u planes", n, g->nplanes);
	struct nf_geometry sub;
	enum nf_codec_status st = nf_rows_geometry(g, count, &sub);
	FUZZ_CHECK(st == NF_CODEC_OK, "rows_geometry(%llu) = %d after row spans",
		   (unsigned long long)count, (int)st);
	FUZZ_CHECK(sub.nplanes == n && sub.cols == g->cols && sub.rows == count &&
		   sub.format == g->format && sub.layout == g->layout, "sub geometry");
	for (unsigned i = 0; i < n; i++) {
		const struct nf_plane *p = &g->planes[i];
		FUZZ_CHECK(spans[i].offset >= p->offset && spans[i].offset <= p->offset + p->length &&
			   spans[i].length <= p->offset + p->length - spans[i].offset,
			   "row span %u outside plane %s", i, p->name);
		FUZZ_CHECK(spans[i].length <= sub.planes[i].length, "row span %u longer than sub plane", i);
	}
	if (sub.bytes > MAX_OBJECT_BYTES || sub.elements > MAX_DECODE)
		return;
	uint8_t *obj = calloc(1, sub.bytes ? sub.bytes : 1);
	FUZZ_CHECK(obj != NULL, "oom");
	for (unsigned i = 0; i < n; i++)
		memcpy(obj + sub.planes[i].offset, object + spans[i].offset, spans[i].length);
	enum nf_dtype d = nf_geometry_output_dtype(g, NF_DTYPE_F32);
	void *a = decode_range(&sub, obj, 0, sub.elements, d);
	void *b = decode_range(g, object, r0 * g->cols, (r0 + count) * g->cols, d);
	FUZZ_CHECK(a && b && same_values(d, a, b, sub.elements),
		   "rows [%llu,+%llu) decode differently standalone", (unsigned long long)r0,
		   (unsigned long long)count);
	free(a);
	free(b);
	free(obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size, 0};
	uint8_t fsel = fuzz_u8(&in), lsel = fuzz_u8(&in), rsel = fuzz_u8(&in);
	const char *format = (fsel & 0x80) ? "bogus" : nf_format_name((enum nf_format)(1 + fsel % 11));
	const char *layout = (lsel & 0x80) ? "contiguous" : nf_layout_name((enum nf_layout)(1 + lsel % 5));
	uint32_t rank = rsel & 0x40 ? rsel % 17 : rsel % 4;
	uint64_t shape[NF_MAX_RANK];
	for (uint32_t i = 0; i < rank; i++) {
		uint16_t v = fuzz_u16(&in);
		switch (v >> 13) {
		case 0: shape[i] = 128u << (v & 3); break;   /* tile-friendly */
		case 1: shape[i] = 64u * (1 + (v & 7)); break;
		case 2: shape[i] = (uint64_t)1 << (v & 63); break; /* overflow hunting */
		default: shape[i] = v & 0x1ff; break;
		}
		if (rank > 3 && i + 3 < rank)
			shape[i] = 1 + (v & 1);
	}
	uint8_t dsel = fuzz_u8(&in);
	uint64_t divisors = dsel < 160 ? 1 : dsel < 250 ? (uint64_t)(dsel & 7) : fuzz_u64(&in);
	uint64_t rb = fuzz_u64(&in), re = fuzz_u64(&in), mid = fuzz_u64(&in);
	uint64_t rr0 = fuzz_u32(&in), rcount = fuzz_u32(&in);

	struct nf_geometry g;
	if (format && layout && nf_geometry_init(&g, format, layout, rank, shape, divisors) == NF_CODEC_OK) {
		check_geometry(&g, rank, shape);
		if (g.bytes <= MAX_OBJECT_BYTES) {
			uint8_t *object = malloc(g.bytes ? g.bytes : 1);
			FUZZ_CHECK(object != NULL, "oom");
			size_t have = fuzz_left(&in) < g.bytes ? fuzz_left(&in) : (size_t)g.bytes;
			memcpy(object, data + in.at, have);
			memset(object + have, 0, g.bytes - have);

			struct nf_violation v;
			memset(&v, 0, sizeof v);
			if (!nf_check_invariants(&g, object, &v))
				FUZZ_CHECK(v.code != NULL && memchr(v.detail, 0, sizeof v.detail),
					   "violation without code");

			uint64_t begin = rb % (g.elements + 1);
			uint64_t end = begin + re % (g.elements - begin + 1);
			if (end - begin > MAX_DECODE)
				end = begin + MAX_DECODE;
			uint64_t m = begin + mid % (end - begin + 1);
			for (int d = NF_DTYPE_F32; d <= NF_DTYPE_I32; d++) {
				void *whole = decode_range(&g, object, begin, end, (enum nf_dtype)d);
				if (!whole)
					continue;
				void *lo = decode_range(&g, object, begin, m, (enum nf_dtype)d);
				void *hi = decode_range(&g, object, m, end, (enum nf_dtype)d);
				unsigned es = nf_dtype_size((enum nf_dtype)d);
				FUZZ_CHECK(same_values((enum nf_dtype)d, whole, lo, m - begin) &&
					   same_values((enum nf_dtype)d, (char *)whole + (m - begin) * es, hi, end - m),
					   "[%llu,%llu) split at %llu decodes differently as %s",
					   (unsigned long long)begin, (unsigned long long)end,
					   (unsigned long long)m, nf_dtype_name((enum nf_dtype)d));
				free(whole);
				free(lo);
				free(hi);
			}
			if (g.rank == 2 && g.rows > 0) {
				uint64_t r0 = rr0 % g.rows;
				uint64_t count = 1 + rcount % (g.rows - r0);
				check_rows(&g, object, r0, count);
			}
			free(object);
		}
	}
	return 0;
}
