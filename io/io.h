/* io/io.h — the segment both read engines take: one (file, offset, length,
 * buffer) span and its result.  iouring/ reads it from local fds, remote/
 * with HTTP range GETs; the range map fills it and neither engine knows
 * what the bytes are. */
#ifndef NF_IO_IO_H
#define NF_IO_IO_H

#include <stdint.h>

struct nf_io {
	uint32_t file;     /* index into the engine's file table */
	uint64_t offset;   /* absolute file offset */
	uint64_t length;
	void *dst;
	int result;        /* out: 0, or -errno (-EIO for EOF inside the span) */
};

#endif
