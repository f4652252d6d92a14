/* fs/ninfer/decoded.h — decoded views: the logical elements of a list of parts,
 * dequantized on the fly, only for the bytes asked for (contract §2,
 * architecture "transformed spans").
 *
 * FUSE-free: the caller supplies a fetcher that queues object-relative
 * byte spans and then reads them all (the daemon's, fs/ninfer/read.c,
 * queues them on the request: the extent map, then one engine read; tests
 * and tools can use pread), so this code is unit-tested without a
 * mount. */
#ifndef NF_FS_NINFER_DECODED_H
#define NF_FS_NINFER_DECODED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codecs/codec.h"
#include "reader/artifact.h"

/* Where a decoded read gets its source bytes and its scratch memory.  A
 * read first queues every span it needs (queue: nothing is read yet), then
 * reads them all at once (run: the daemon's is one engine read for the
 * whole FUSE request, issue 15), then decodes. */
struct nf_fetcher {
	/* Queue bytes [offset, offset + length) of object `object` (offsets
	 * relative to the object's start, inside it) to be read into dst.
	 * 0 or -errno. */
	int (*queue)(void *arg, uint32_t object, uint64_t offset, uint64_t length, uint8_t *dst);
	/* Read everything queued and empty the queue: 0 or -errno. */
	int (*run)(void *arg);
	/* n bytes of memory, 64-byte aligned, valid and never moved until the
	 * read is done; NULL on ENOMEM. */
	void *(*scratch)(void *arg, size_t n);
	void *arg;
};

/* The output dtype of a decoded view over `parts` when the user asked for
 * `wanted` (f32/bf16/f16): int32 parents stay int32.  Returns 0 and *out,
 * or -EOPNOTSUPP when a parent's format or layout is unknown, -EIO when a
 * parent cannot be interpreted (wrong encoded size, bad shape, forbidden
 * pair), -EINVAL when int32 and float parents are mixed (no one dtype
 * holds both). */
int nf_decoded_dtype(const struct nf_artifact *a, const struct nf_part *parts, uint32_t nparts,
		     enum nf_dtype wanted, enum nf_dtype *out);

/* Bytes [off, off+len) of the decoded view (the parts' elements in order,
 * little-endian `dtype`, nf_dtype_size each), clipped at the end of the
 * view.  Decodes only the elements that overlap the range and fetches only
 * the source spans those need, all in one run of the fetcher; a part whose
 * decode is the identity (fp32 as f32, bf16 as bf16, int32) is fetched
 * straight into `out`.  Returns the number of bytes written, or a negative
 * errno from the fetcher or the decoder.  Same as nf_dplan_init,
 * nf_decoded_plan and nf_decoded_finish. */
ssize_t nf_decoded_read(const struct nf_artifact *a, const struct nf_part *parts,
			uint32_t nparts, enum nf_dtype dtype, const struct nf_fetcher *f,
			uint64_t off, size_t len, uint8_t *out);

/* One read of several decoded ranges (decoded/model.safetensors, .npy
 * files): plan each range (its spans are queued, its decode steps kept in
 * the fetcher's scratch), then finish: one run of the fetcher, then every
 * decode.  A plan is used by one thread; `out` buffers must stay valid
 * until finish. */
struct nf_dstep;
struct nf_dplan {
	const struct nf_artifact *a;
	const struct nf_fetcher *f;
	struct nf_dstep *head, *tail;
};
void nf_dplan_init(struct nf_dplan *p, const struct nf_artifact *a, const struct nf_fetcher *f);
/* Plan bytes [off, off+len) of the decoded view of `parts` into out: the
 * number of bytes that finish will write (clipped at the view's end), or
 * a negative errno. */
ssize_t nf_decoded_plan(struct nf_dplan *p, const struct nf_part *parts, uint32_t nparts,
			enum nf_dtype dtype, uint64_t off, size_t len, uint8_t *out);
/* Fetch everything planned, then decode it: 0 or a negative errno. */
int nf_decoded_finish(struct nf_dplan *p);

/* Total elements of the parts (overflow-checked by the reader already). */
uint64_t nf_parts_elements(const struct nf_part *parts, uint32_t nparts);

#endif
