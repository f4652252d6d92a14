/* fs/ninfer/safetensors.h — decoded/model.safetensors: every decodable binding as
 * one safetensors file.  Only the header lives in memory (made on the
 * first read; its size is counted at mount); the data section
 * is the bindings' decoded views back to back, decoded on read.
 *
 * Layout (safetensors format): u64 little-endian header length H, then H
 * bytes of JSON padded with spaces so that the data starts at a multiple of
 * 8, then the tensors in binding order with no gaps.  The JSON holds
 * "__metadata__" (artifact_id, dtype, entry, and "omitted": a JSON list, as
 * a string, of the bindings left out because they cannot be decoded or are
 * named "__metadata__") and one member per binding: dtype F32/BF16/F16/I32,
 * shape (the binding's shape rule), data_offsets relative to the data. */
#ifndef NF_FS_NINFER_SAFETENSORS_H
#define NF_FS_NINFER_SAFETENSORS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs/ninfer/decoded.h"

struct nf_st_entry {
	uint32_t binding;
	enum nf_dtype dtype;
	uint64_t begin;  /* absolute offset of the tensor's first byte in the file */
	uint64_t bytes;
};

struct nf_safetensors {
	_Atomic(uint8_t *) header; /* 8-byte length + JSON + padding; made on the first read */
	pthread_mutex_t lock;   /* making the header */
	enum nf_dtype wanted;
	uint64_t header_bytes;  /* = offset of the data section */
	uint64_t size;          /* whole file */
	uint32_t nentries;
	struct nf_st_entry *entries;
	uint32_t nomitted;
};

/* Build the header for `a` with float views decoded as `wanted`.
 * Returns 0 or -ENOMEM/-EOVERFLOW. */
int nf_safetensors_build(struct nf_safetensors *st, const struct nf_artifact *a,
			 enum nf_dtype wanted);
void nf_safetensors_free(struct nf_safetensors *st);

/* Bytes [off, off+len) of the file, clipped at its end.  Returns the bytes
 * written or a negative errno. */
ssize_t nf_safetensors_read(const struct nf_safetensors *st, const struct nf_artifact *a,
			    const struct nf_fetcher *f, uint64_t off, size_t len, uint8_t *out);

#endif
