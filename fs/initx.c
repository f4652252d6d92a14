/* fs/initx.c — the INIT reply patch of fs/initx.h.
 *
 * The kernel sends FUSE_INIT first and sends nothing else until it has
 * the reply, and libfuse answers it on the thread that read it: so the
 * read call below sees the request (and notes its unique and the flags2
 * the kernel offers) before the write call sees the reply, and once the
 * reply is out both calls only test `done`.  Everything else is read(2)
 * and writev(2) of the device, as libfuse does without custom I/O (it
 * then uses no splice either; ninferfs never asked for splice). */
#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include <errno.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fs/context.h"
#include "fs/initx.h"

/* The INIT request as far as flags2 (kernels since 5.17 send it). */
enum {
	INIT_IN_END = sizeof(struct fuse_in_header) + offsetof(struct fuse_init_in, flags2) +
		      sizeof(uint32_t),
	INIT_OUT_END = offsetof(struct fuse_init_out, flags2) + sizeof(uint32_t),
};

static ssize_t initx_read(int fd, void *buf, size_t len, void *userdata)
{
	struct nf_initx *x = &((struct nf_fs *)userdata)->initx;
	ssize_t r = read(fd, buf, len);

	if (r >= INIT_IN_END && !atomic_load_explicit(&x->done, memory_order_acquire)) {
		const struct fuse_in_header *h = buf;
		const struct fuse_init_in *in = (const void *)(h + 1);

		if (h->opcode == FUSE_INIT) {
			atomic_store(&x->offered2, in->flags & FUSE_INIT_EXT ? in->flags2 : 0);
			atomic_store(&x->unique, h->unique);
		}
	}
	return r;
}

/* Add the wanted bits the kernel offered to a successful INIT reply. */
static void patch_reply(struct nf_initx *x, struct iovec *iov, int count)
{
	const struct fuse_out_header *h = iov[0].iov_base;
	uint64_t unique = atomic_load(&x->unique);

	if (unique == 0 || count < 2 || iov[0].iov_len != sizeof *h || h->unique != unique)
		return;
	atomic_store_explicit(&x->done, true, memory_order_release);
	if (h->error != 0 || iov[1].iov_len < INIT_OUT_END)
		return;
	struct fuse_init_out *out = iov[1].iov_base;
	uint32_t add = x->want2 & atomic_load(&x->offered2);
	/* flags2 counts only with FUSE_INIT_EXT, which libfuse sets when
	 * the kernel offered it; the kernel offers bits of flags2 only then */
	if (add != 0 && (out->flags & FUSE_INIT_EXT))
		out->flags2 |= add;
}

static ssize_t initx_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct nf_initx *x = &((struct nf_fs *)userdata)->initx;

	if (!atomic_load_explicit(&x->done, memory_order_acquire))
		patch_reply(x, iov, count);
	return writev(fd, iov, count);
}

int nf_initx_install(struct fuse_session *se, struct nf_fs *fs, uint32_t want2)
{
	static const struct fuse_custom_io io = {.read = initx_read, .writev = initx_writev};
	int fd = fuse_session_fd(se);

	fs->initx.want2 = want2;
	if (fd < 0)
		return -EBADF;
	return fuse_session_custom_io(se, &io, fd);
}
