/* fs/initx.h — INIT flags this libfuse cannot ask for.
 *
 * libfuse 3.14 (Debian 12) knows no FUSE_DIRECT_IO_ALLOW_MMAP (kernel 6.6,
 * flags2 bit 4 of the INIT reply; libfuse 3.16 has FUSE_CAP_ for it).
 * Without it the kernel refuses a MAP_SHARED mapping of a file opened with
 * FOPEN_DIRECT_IO, so -o direct_io would break numpy.memmap and
 * safetensors.  With -o direct_io the device I/O of the session goes
 * through two calls of fs/initx.c, which pass every message through
 * unchanged except the INIT reply, where the bit is added if the kernel
 * offered it.  With a
 * libfuse that has the capability, op_init() asks for it and none of this
 * is installed. */
#ifndef NF_FS_INITX_H
#define NF_FS_INITX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* State of the one INIT exchange (in struct nf_fs). */
struct nf_initx {
	uint32_t want2;               /* flags2 bits to add when offered */
	_Atomic uint64_t unique;      /* the INIT request's, 0 before it */
	_Atomic uint32_t offered2;    /* the kernel's INIT flags2 */
	atomic_bool done;             /* the INIT reply went out */
};

struct fuse_session;
struct nf_fs;

/* Route the device I/O of se (mounted, made with fs as its userdata)
 * through the INIT reply patch asking for want2 (fs->initx).  0 or a
 * negative errno. */
int nf_initx_install(struct fuse_session *se, struct nf_fs *fs, uint32_t want2);

/* FUSE_DIRECT_IO_ALLOW_MMAP >> 32, as the INIT reply's flags2 holds it. */
#define NF_INIT2_DIRECT_IO_ALLOW_MMAP (1u << 4)

#endif
