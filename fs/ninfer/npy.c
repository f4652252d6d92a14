/* fs/ninfer/npy.c — NPY preambles (npy.h). */
#include "fs/ninfer/npy.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64

const char *nf_npy_descr(enum nf_dtype dtype)
{
	switch (dtype) {
	case NF_DTYPE_F32: return "<f4";
	case NF_DTYPE_F16: return "<f2";
	case NF_DTYPE_BF16: return "<u2";   /* no NumPy dtype: the words */
	case NF_DTYPE_I32: return "<i4";
	default: return NULL;
	}
}

/* Append s at out[*at] when it fits cap (the length counts always). */
static void put(char *out, uint64_t cap, uint64_t *at, const char *s)
{
	size_t n = strlen(s);

	if (out && *at <= cap && n <= cap - *at)
		memcpy(out + *at, s, n);
	*at += n;
}

/* The dict text, unpadded, at out[base...]: its length. */
static uint64_t dict_text(const char *descr, uint32_t rank, const uint64_t *shape, char *out,
			  uint64_t cap, uint64_t base)
{
	uint64_t at = base;
	char num[24];

	put(out, cap, &at, "{'descr': '");
	put(out, cap, &at, descr);
	put(out, cap, &at, "', 'fortran_order': False, 'shape': (");
	for (uint32_t i = 0; i < rank; i++) {
		snprintf(num, sizeof num, "%s%" PRIu64, i ? ", " : "", shape[i]);
		put(out, cap, &at, num);
	}
	/* a 1-tuple is written "(n,)" */
	put(out, cap, &at, rank == 1 ? ",), }" : "), }");
	return at - base;
}

uint64_t nf_npy_header(enum nf_dtype dtype, uint32_t rank, const uint64_t *shape, char *out,
		       uint64_t cap)
{
	const char *descr = nf_npy_descr(dtype);
	uint64_t text, total, pre;
	unsigned lenbytes;

	if (descr == NULL)
		return 0;
	/* at most 22 bytes a dimension: no overflow for any uint32_t rank */
	text = dict_text(descr, rank, shape, NULL, 0, 0);
	/* version 1.0 when the header length fits 16 bits, else 2.0 */
	lenbytes = 2;
	pre = NPY_MAGIC_LEN + 2 + lenbytes;
	total = (pre + text + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
	if (total - pre > UINT16_MAX) {
		lenbytes = 4;
		pre = NPY_MAGIC_LEN + 2 + lenbytes;
		total = (pre + text + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
		if (total - pre > UINT32_MAX)
			return 0;
	}
	if (out == NULL || cap < total)
		return total;
	uint64_t hlen = total - pre, at = 0;

	memcpy(out, NPY_MAGIC, NPY_MAGIC_LEN);
	out[6] = lenbytes == 2 ? 1 : 2;   /* major version; minor 0 */
	out[7] = 0;
	for (unsigned i = 0; i < lenbytes; i++)
		out[8 + i] = (char)(hlen >> (8 * i));
	at = pre;
	at += dict_text(descr, rank, shape, out, cap, at);
	memset(out + at, ' ', total - 1 - at);
	out[total - 1] = '\n';
	return total;
}
