/* fs/ninfer/npy.h — the header of decoded/npy/ files: NPY format 1.0 (2.0
 * when the header needs more than 65535 bytes), so that numpy.load(path,
 * mmap_mode="r") gets the dtype and shape with no xattr (issue 15).
 *
 * An NPY file (numpy's format description, "NPY format"): the magic
 * "\x93NUMPY", a major and a minor version byte, the header length
 * (uint16 little-endian in 1.0, uint32 in 2.0), then the header: the ASCII
 * text of a Python dict literal with the keys 'descr', 'fortran_order' and
 * 'shape', padded with spaces and ended by '\n' so that the whole preamble
 * is a multiple of 64 bytes; the array's bytes follow, C order.  Here they
 * are the decoded file's bytes as they are: f32 '<f4', f16 '<f2', int32
 * '<i4', and bf16, which NumPy has no dtype for, '<u2' (its 16-bit words;
 * user.ninfer.dtype says bf16).  FUSE-free. */
#ifndef NF_FS_NINFER_NPY_H
#define NF_FS_NINFER_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/codec.h"

/* The 'descr' of `dtype`: "<f4", "<f2", "<u2" (bf16), "<i4"; NULL for
 * another value. */
const char *nf_npy_descr(enum nf_dtype dtype);

/* The NPY preamble (magic to the '\n', a multiple of 64 bytes) of an
 * array of `dtype` and shape[0..rank): its length, and when out is not
 * NULL and cap is at least that, the bytes in out.  0 when the dtype has
 * no descr or the length overflows. */
uint64_t nf_npy_header(enum nf_dtype dtype, uint32_t rank, const uint64_t *shape, char *out,
		       uint64_t cap);

#endif
