/* fuzz/fuzz_common.h — small helpers shared by the libFuzzer targets. */
#ifndef NF_FUZZ_COMMON_H
#define NF_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An invariant the code under test promised was broken: print and abort, so
 * libFuzzer saves the input as crash-*. */
#define FUZZ_CHECK(cond, ...)                                                        \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: invariant failed: %s: ", __FILE__,   \
				__LINE__, #cond);                                    \
			fprintf(stderr, __VA_ARGS__);                                \
			fputc('\n', stderr);                                         \
			abort();                                                     \
		}                                                                    \
	} while (0)

/* A cursor over the fuzz input; reads past the end give zeros. */
struct fuzz_in {
	const uint8_t *p;
	size_t n, at;
};

static inline uint64_t fuzz_bytes(struct fuzz_in *in, unsigned k)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < k; i++) {
		uint64_t b = in->at < in->n ? in->p[in->at++] : 0;
		v |= b << (8 * i);
	}
	return v;
}
static inline uint8_t fuzz_u8(struct fuzz_in *in) { return (uint8_t)fuzz_bytes(in, 1); }
static inline uint16_t fuzz_u16(struct fuzz_in *in) { return (uint16_t)fuzz_bytes(in, 2); }
static inline uint32_t fuzz_u32(struct fuzz_in *in) { return (uint32_t)fuzz_bytes(in, 4); }
static inline uint64_t fuzz_u64(struct fuzz_in *in) { return fuzz_bytes(in, 8); }
static inline size_t fuzz_left(const struct fuzz_in *in) { return in->at < in->n ? in->n - in->at : 0; }

/* A value in [0, n] (n + 1 choices), biased towards the ends. */
static inline uint64_t fuzz_upto(struct fuzz_in *in, uint64_t n)
{
	uint8_t mode = fuzz_u8(in);
	uint64_t r = fuzz_u64(in);
	switch (mode & 7) {
	case 0: return 0;
	case 1: return n;
	case 2: return n > 0 ? n - 1 : 0;
	case 3: return n > 0 ? 1 : 0;
	default: return n == UINT64_MAX ? r : r % (n + 1);
	}
}

#endif
