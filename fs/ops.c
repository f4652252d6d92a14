/* fs/ops.c — the FUSE low-level operations.
 *
 * Lookups, getattr and readdir only read the immutable tree; reads of the
 * generic view kinds go through readpath.c, those of family kinds to the
 * family (fs/family.h), and so do extended attributes; SEEK_DATA and
 * SEEK_HOLE are answered from the views' pieces (fs/view.c); everything
 * that would change the tree answers EROFS. */
#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <syslog.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/attrs.h"
#include "fs/context.h"

static struct nf_fs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* Node index of an inode number, or -1. */
static int64_t node_of(const struct nf_fs *fs, fuse_ino_t ino)
{
	return (ino >= FUSE_ROOT_ID && ino <= fs->tree.nnodes) ? (int64_t)(ino - 1) : -1;
}

static void fill_stat(const struct nf_fs *fs, uint32_t idx, struct stat *st)
{
	const struct nf_node *n = &fs->tree.nodes[idx];

	memset(st, 0, sizeof *st);
	st->st_ino = (ino_t)idx + 1;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_atim = st->st_mtim = st->st_ctim = fs->mtime;
	st->st_blksize = 4096;
	if (n->is_dir) {
		st->st_mode = S_IFDIR | (0555 & ~fs->umask);
		st->st_nlink = 2 + n->nsubdirs;
		return;
	}
	st->st_mode = S_IFREG | (0444 & ~fs->umask);
	st->st_nlink = 1;
	st->st_size = (off_t)nf_view_st_size(n->kind, n->size);
	st->st_blocks = (blkcnt_t)((n->size + 511) / 512);
}

static double attr_timeout(const struct nf_node *n)
{
	return !n->is_dir && n->kind == NF_VIEW_STATS ? 0.0 : NF_TIMEOUT;
}

static bool family_kind(const struct nf_node *n)
{
	return !n->is_dir && n->kind >= NF_VIEW_FAMILY && n->kind != NF_NODE_SPAN;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct nf_fs *fs = userdata;

	/* The kernel keeps the smaller of this and what it offered (128 KiB
	 * by default); the bdi read_ahead_kb is raised after INIT (main.c). */
	conn->max_readahead = NF_READ_AHEAD_KB * 1024u;
	/* Readahead requests are background requests: let the kernel keep
	 * enough of them in flight for every worker thread. */
	conn->max_background = 64;
	conn->congestion_threshold = 48;
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
	/* -o direct_io: shared mappings still map, through the page cache
	 * (kernel 6.6+; fs/initx.h asks for it where libfuse cannot) */
#ifdef FUSE_CAP_DIRECT_IO_ALLOW_MMAP
	if (fs->opt.direct_io && (conn->capable & FUSE_CAP_DIRECT_IO_ALLOW_MMAP))
		conn->want |= FUSE_CAP_DIRECT_IO_ALLOW_MMAP;
	else if (fs->opt.direct_io)
#else
	if (fs->opt.direct_io &&
	    !(atomic_load(&fs->initx.offered2) & NF_INIT2_DIRECT_IO_ALLOW_MMAP))
#endif
		nf_log(fs, LOG_INFO, "-o direct_io: this kernel cannot map a direct_io file "
				     "shared (no FUSE_DIRECT_IO_ALLOW_MMAP): MAP_SHARED fails");
	/* Directories need no open state: with this, the opendir below
	 * answers ENOSYS once and the kernel stops sending OPENDIR and
	 * RELEASEDIR, two of the four round trips a directory cost `ls -lR`
	 * (it then caches directory pages, as cache_readdir asked). */
	if (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) {
		conn->want |= FUSE_CAP_NO_OPENDIR_SUPPORT;
		fs->no_opendir = true;
	}
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct nf_fs *fs = fs_of(req);
	int64_t p = node_of(fs, parent), c;
	struct fuse_entry_param e;

	if (p < 0)
		return (void)fuse_reply_err(req, ENOENT);
	if (!fs->tree.nodes[p].is_dir)
		return (void)fuse_reply_err(req, ENOTDIR);
	c = nf_tree_lookup(&fs->tree, (uint32_t)p, name, strlen(name));
	if (c < 0)
		return (void)fuse_reply_err(req, ENOENT);
	memset(&e, 0, sizeof e);
	e.ino = (fuse_ino_t)c + 1;
	e.generation = 1;
	fill_stat(fs, (uint32_t)c, &e.attr);
	e.attr_timeout = attr_timeout(&fs->tree.nodes[c]);
	e.entry_timeout = NF_TIMEOUT;
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct nf_fs *fs = fs_of(req);
	int64_t n = node_of(fs, ino);
	struct stat st;

	(void)fi;
	if (n < 0)
		return (void)fuse_reply_err(req, ENOENT);
	fill_stat(fs, (uint32_t)n, &st);
	fuse_reply_attr(req, &st, attr_timeout(&fs->tree.nodes[n]));
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct nf_fs *fs = fs_of(req);
	int64_t n = node_of(fs, ino);

	if (n < 0)
		return (void)fuse_reply_err(req, ENOENT);
	if (!fs->tree.nodes[n].is_dir)
		return (void)fuse_reply_err(req, ENOTDIR);
	if (fs->no_opendir)
		return (void)fuse_reply_err(req, ENOSYS);
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

/* One directory entry at position i (0 ".", 1 "..", 2+k child k) into
 * buf; returns the bytes it needs (more than `room` when it did not fit). */
static size_t add_entry(fuse_req_t req, const struct nf_fs *fs, const struct nf_node *d,
			uint32_t dir, uint64_t i, char *buf, size_t room, bool plus)
{
	struct fuse_entry_param e;
	const char *name;
	uint32_t idx;

	if (i < 2) {
		idx = i == 0 ? dir : d->parent;
		name = i == 0 ? "." : "..";
	} else {
		idx = fs->tree.children[d->first_child + (i - 2)];
		name = nf_node_name(&fs->tree, &fs->tree.nodes[idx]);
	}
	memset(&e, 0, sizeof e);
	fill_stat(fs, idx, &e.attr);
	if (!plus)
		return fuse_add_direntry(req, buf, room, name, &e.attr, (off_t)(i + 1));
	e.ino = (fuse_ino_t)idx + 1;
	e.generation = 1;
	e.attr_timeout = attr_timeout(&fs->tree.nodes[idx]);
	e.entry_timeout = NF_TIMEOUT;
	return fuse_add_direntry_plus(req, buf, room, name, &e, (off_t)(i + 1));
}

/* Offsets: 1 is after ".", 2 after "..", 2+i+1 after child i; the
 * children array never changes, so offsets stay valid across calls.
 * Inodes are never forgotten (forget is a no-op), so readdirplus need not
 * track lookup counts. */
static void list_dir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	struct nf_fs *fs = fs_of(req);
	int64_t n = node_of(fs, ino);
	const struct nf_node *d;
	char *buf;
	size_t used = 0;

	if (n < 0 || off < 0)
		return (void)fuse_reply_err(req, n < 0 ? ENOENT : EINVAL);
	d = &fs->tree.nodes[n];
	if (!d->is_dir)
		return (void)fuse_reply_err(req, ENOTDIR);
	buf = malloc(size);
	if (buf == NULL)
		return (void)fuse_reply_err(req, ENOMEM);
	for (uint64_t i = (uint64_t)off; i < 2 + (uint64_t)d->nchildren; i++) {
		size_t need = add_entry(req, fs, d, (uint32_t)n, i, buf + used, size - used, plus);
		if (need > size - used)
			break;
		used += need;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)fi;
	list_dir(req, ino, size, off, false);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	(void)fi;
	list_dir(req, ino, size, off, true);
}

/* A view read through the engine keeps the engine's stream of that open
 * (remote: its prefetch windows) in fh, tagged with the low bit: heap
 * pointers are aligned, and a family document is an untagged fh. */
#define NF_FH_STREAM 1u

static void *stream_of(const struct fuse_file_info *fi)
{
	return fi->fh & NF_FH_STREAM ? (void *)(uintptr_t)(fi->fh & ~(uint64_t)NF_FH_STREAM) : NULL;
}

/* A stream for an open of view v the engine reads, if the engine keeps
 * them (a failure only costs the prefetch: fh stays 0), told where the
 * view's bytes lie. */
static void open_stream(struct nf_fs *fs, struct fuse_file_info *fi, uint32_t node,
			const struct nf_view *v)
{
	void *stream = NULL;

	if (fs->engine.ops->stream_new == NULL ||
	    fs->engine.ops->stream_new(fs->engine.state, &stream) < 0 || stream == NULL)
		return;
	nf_read_path(fs, stream, node, v);
	fi->fh = (uint64_t)(uintptr_t)stream | NF_FH_STREAM;
}

/* What an open holds: a generated file's state (fs/handles.c,
 * files_doc.c, a family's document), or the engine's stream. */
static void release_handle(struct nf_fs *fs, const struct nf_node *node, uint32_t idx,
			   const struct fuse_file_info *fi)
{
	if (fi->fh == 0 || node->is_dir)
		return;
	if (fi->fh & NF_FH_STREAM)
		fs->engine.ops->stream_free(fs->engine.state, stream_of(fi));
	else if (node->kind == NF_VIEW_STATS)
		nf_snap_close(fs, (struct nf_snap *)(uintptr_t)fi->fh);
	else if (node->kind == NF_VIEW_FILES)
		nf_files_doc_close(fs, (struct nf_files_doc *)(uintptr_t)fi->fh);
	else if (family_kind(node) && fs->family->release_doc)
		fs->family->release_doc(fs->fam, idx, (const char *)(uintptr_t)fi->fh);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct nf_fs *fs = fs_of(req);
	int64_t n = node_of(fs, ino);
	const struct nf_node *node;

	if (n < 0)
		return (void)fuse_reply_err(req, ENOENT);
	node = &fs->tree.nodes[n];
	if (node->is_dir)
		return (void)fuse_reply_err(req, EISDIR);
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
		return (void)fuse_reply_err(req, EROFS);
	fi->fh = 0;
	if (node->kind == NF_VIEW_STATS) {
		struct nf_snap *snap;
		int rc = nf_snap_open(fs, &snap);
		if (rc < 0)
			return (void)fuse_reply_err(req, -rc);
		fi->fh = (uint64_t)(uintptr_t)snap;
		fi->direct_io = 1; /* size known only now: st_size stays 0 */
	} else if (family_kind(node) && fs->family->open_doc) {
		/* a document the family makes now (NInfer: uses.json), or a
		 * view it reads (0 keeps fh 0) */
		const char *doc = NULL;
		struct nf_view v;
		nf_tree_view(&fs->tree, (uint32_t)n, &v);
		int rc = fs->family->open_doc(fs->fam, (uint32_t)n, &v, &doc);
		if (rc < 0)
			return (void)fuse_reply_err(req, -rc);
		fi->fh = rc == 0 ? (uint64_t)(uintptr_t)doc : 0;
		if (rc == 1)
			open_stream(fs, fi, (uint32_t)n, &v);
		fi->keep_cache = !nf_node_touches_changed(fs, (uint32_t)n);
	} else if (node->kind == NF_VIEW_FILES) {
		const char *text;
		size_t len;
		struct nf_files_doc *d = nf_files_doc_open(fs, &text, &len);
		if (d == NULL)
			return (void)fuse_reply_err(req, ENOMEM);
		fi->fh = (uint64_t)(uintptr_t)d;
		fi->direct_io = 1;   /* its length is known only now: st_size stays 0 */
	} else {
		/* The kernel keeps the pages of an unchanged view; a view on a
		 * file that changed while mounted starts afresh (issue 11). */
		fi->keep_cache = !nf_node_touches_changed(fs, (uint32_t)n);
		if (node->kind == NF_VIEW_PIECES || node->kind == NF_NODE_SPAN ||
		    node->kind == NF_VIEW_FILE || family_kind(node)) {
			struct nf_view v;
			nf_tree_view(&fs->tree, (uint32_t)n, &v);
			open_stream(fs, fi, (uint32_t)n, &v);
		}
	}
	/* -o direct_io: every read reaches the daemon and is copied straight
	 * into the reader's buffer; the reader's kernel no longer allocates
	 * and fills 4 KiB page-cache pages (FUSE has no large folios on the
	 * kernels measured: bench/README.md, issue 15, kernel side), half
	 * the CPU of a streamed GiB.  A mapping still goes through the page
	 * cache: shared ones only with FUSE_DIRECT_IO_ALLOW_MMAP (op_init,
	 * fs/initx.h), else the kernel refuses them with ENODEV. */
	if (fs->opt.direct_io)
		fi->direct_io = 1;
	if (fuse_reply_open(req, fi) != 0)
		release_handle(fs, node, (uint32_t)n, fi);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct nf_fs *fs = fs_of(req);
	int64_t n = node_of(fs, ino);

	if (n >= 0)
		release_handle(fs, &fs->tree.nodes[n], (uint32_t)n, fi);
	fuse_reply_err(req, 0);
}

static void reply_memory(fuse_req_t req, const char *mem, uint64_t size, size_t len, off_t off)
{
	if ((uint64_t)off >= size)
		return (void)fuse_reply_buf(req, NULL, 0);
	if (len > size - (uint64_t)off)
		len = (size_t)(size - (uint64_t)off);
	fuse_reply_buf(req, mem + off, len);
}

/* PIECES, FILE and family views: built in the thread's reply buffer (its
 * work area), which is the buffer the reply is sent from. */
static void read_view(fuse_req_t req, struct nf_fs *fs, struct nf_thread *th, uint32_t node,
		      const struct nf_view *v, size_t len, off_t off,
		      void *stream)
{
	char *buf;
	int rc;

	if ((uint64_t)off >= v->size)
		return (void)fuse_reply_buf(req, NULL, 0);
	if (len > v->size - (uint64_t)off)
		len = (size_t)(v->size - (uint64_t)off);
	if ((buf = nf_thread_reply(th, len)) == NULL)
		return (void)fuse_reply_err(req, ENOMEM);
	if (v->kind == NF_VIEW_PIECES) {
		rc = nf_read_pieces(fs, th, stream, v, (uint64_t)off, len, buf);
	} else if (v->kind == NF_VIEW_FILE) {
		rc = nf_read_file(fs, th, stream, v, (uint64_t)off, len, buf);
	} else if (len == 0) {
		rc = 0;
	} else {
		struct nf_rd rd = {.fs = fs, .th = th, .stream = stream};
		rc = fs->family->read(fs->fam, &rd, node, v, (uint64_t)off, len, buf);
	}
	if (rc < 0)
		return (void)fuse_reply_err(req, -rc);
	nf_count(&th->c.bytes, len);
	/* bytes the engine left in its own memory are sent from there (the
	 * kernel copies them during the write: they may go right after) */
	const struct iovec *iov;
	size_t niov = nf_read_reply(th, buf, len, &iov);
	if (niov > 0)
		fuse_reply_iov(req, iov, (int)niov);
	else
		fuse_reply_buf(req, buf, len);
	nf_read_release(th);
}

/* The reply is made from a copy in the thread's buffer: the kernel may
 * complete the request, and release() free the snapshot, before writev()
 * returns to us. */
static void read_snapshot(fuse_req_t req, struct nf_thread *th, const char *snap, size_t size,
			  size_t len, off_t off)
{
	char *buf;

	if ((uint64_t)off >= size)
		return (void)fuse_reply_buf(req, NULL, 0);
	if (len > size - (size_t)off)
		len = size - (size_t)off;
	if ((buf = nf_thread_reply(th, len)) == NULL)
		return (void)fuse_reply_err(req, ENOMEM);
	memcpy(buf, snap + off, len);
	fuse_reply_buf(req, buf, len);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct nf_fs *fs = fs_of(req);
	int64_t n = node_of(fs, ino);
	struct nf_thread *th;
	struct nf_view view;
	const struct nf_view *v = &view;

	if (n < 0 || off < 0)
		return (void)fuse_reply_err(req, n < 0 ? ENOENT : EINVAL);
	if ((th = nf_thread_get(fs)) == NULL)
		return (void)fuse_reply_err(req, ENOMEM);
	nf_tree_view(&fs->tree, (uint32_t)n, &view);
	/* counted on this thread: no cache line shared with the others */
	nf_count(&th->c.reads, 1);
	nf_count(&th->c.sizes[nf_size_bucket(size)], 1);
	switch (v->kind) {
	case NF_VIEW_MEMORY:
		return reply_memory(req, v->mem, v->size, size, off);
	case NF_VIEW_STATS: {
		const struct nf_snap *s = (const struct nf_snap *)(uintptr_t)fi->fh;
		return read_snapshot(req, th, s ? s->text : NULL, s ? s->len : 0, size, off);
	}
	case NF_VIEW_FILES: {
		size_t len;
		const char *text = nf_files_doc_text((struct nf_files_doc *)(uintptr_t)fi->fh, &len);
		return read_snapshot(req, th, text, len, size, off);
	}
	case NF_VIEW_PIECES:
	case NF_VIEW_FILE:
		return read_view(req, fs, th, (uint32_t)n, v, size, off, stream_of(fi));
	default:
		if (v->kind < NF_VIEW_FAMILY)
			return (void)fuse_reply_err(req, EISDIR);
		if (fi->fh && !(fi->fh & NF_FH_STREAM))   /* a document the family made at open */
			return read_snapshot(req, th, (const char *)(uintptr_t)fi->fh,
					     (size_t)v->size, size, off);
		return read_view(req, fs, th, (uint32_t)n, v, size, off, stream_of(fi));
	}
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct nf_fs *fs = fs_of(req);
	struct statvfs sv;

	(void)ino;
	memset(&sv, 0, sizeof sv);
	sv.f_bsize = sv.f_frsize = 4096;
	sv.f_blocks = (fsblkcnt_t)((fs->set.bytes + 4095) / 4096);
	sv.f_files = fs->tree.nnodes;
	sv.f_namemax = 255;
	sv.f_flag = ST_RDONLY;
	fuse_reply_statfs(req, &sv);
}

/* The getxattr/listxattr size protocol: size 0 asks for the length. */
static void reply_sized(fuse_req_t req, char *val, size_t len, size_t size)
{
	if (size == 0)
		fuse_reply_xattr(req, len);
	else if (size < len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, val, len);
	free(val);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct nf_fs *fs = fs_of(req);
	int64_t n = node_of(fs, ino);
	char *val;
	size_t len;
	int rc;

	if (n < 0)
		return (void)fuse_reply_err(req, ENOENT);
	/* Only the user namespace exists here.  ENOTSUP for the others (no
	 * ACLs, no security labels) is what lets ls -l, cp -a and friends
	 * mark the whole device as unsupported after one probe instead of
	 * asking for security.selinux and system.posix_acl_* on every entry:
	 * each probe is a round trip to this daemon, as FUSE does not cache
	 * xattrs. */
	if (strncmp(name, "user.", 5) != 0)
		return (void)fuse_reply_err(req, EOPNOTSUPP);
	rc = fs->family->xattr_get ? fs->family->xattr_get(fs->fam, (uint32_t)n, name, &val, &len)
				   : -ENODATA;
	if (rc < 0)
		return (void)fuse_reply_err(req, -rc);
	if (len > NF_XATTR_VALUE_MAX) {   /* a family keeps within it (fs/attrs.h) */
		free(val);
		return (void)fuse_reply_err(req, E2BIG);
	}
	reply_sized(req, val, len, size);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct nf_fs *fs = fs_of(req);
	int64_t n = node_of(fs, ino);
	char *val;
	size_t len;
	int rc;

	if (n < 0)
		return (void)fuse_reply_err(req, ENOENT);
	if (fs->family->xattr_list == NULL)
		return (void)reply_sized(req, NULL, 0, size);
	rc = fs->family->xattr_list(fs->fam, (uint32_t)n, &val, &len);
	if (rc < 0)
		return (void)fuse_reply_err(req, -rc);
	reply_sized(req, val, len, size);
}

/* SEEK_DATA / SEEK_HOLE (the kernel does SEEK_SET, SEEK_CUR and SEEK_END
 * itself): PIECES views from their pieces, zero pieces being holes (a
 * calbin device image is mostly holes); other files are data throughout. */
static void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	struct nf_fs *fs = fs_of(req);
	int64_t n = node_of(fs, ino), at;
	struct nf_view v;

	(void)fi;
	if (n < 0)
		return (void)fuse_reply_err(req, ENOENT);
	if (fs->tree.nodes[n].is_dir)
		return (void)fuse_reply_err(req, EISDIR);
	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		return (void)fuse_reply_err(req, EINVAL);
	if (off < 0)
		return (void)fuse_reply_err(req, ENXIO);
	nf_tree_view(&fs->tree, (uint32_t)n, &v);
	at = nf_view_seek(&v, (uint64_t)off, whence == SEEK_DATA);
	if (at < 0)
		return (void)fuse_reply_err(req, (int)-at);
	fuse_reply_lseek(req, (off_t)at);
}

/* Everything that would change the tree. */
static void erofs(fuse_req_t req)
{
	fuse_reply_err(req, EROFS);
}
static void op_setattr(fuse_req_t req, fuse_ino_t i, struct stat *s, int t, struct fuse_file_info *f)
{
	(void)i, (void)s, (void)t, (void)f;
	erofs(req);
}
static void op_mknod(fuse_req_t req, fuse_ino_t p, const char *n, mode_t m, dev_t d)
{
	(void)p, (void)n, (void)m, (void)d;
	erofs(req);
}
static void op_mkdir(fuse_req_t req, fuse_ino_t p, const char *n, mode_t m)
{
	(void)p, (void)n, (void)m;
	erofs(req);
}
static void op_unlink(fuse_req_t req, fuse_ino_t p, const char *n)
{
	(void)p, (void)n;
	erofs(req);
}
static void op_symlink(fuse_req_t req, const char *l, fuse_ino_t p, const char *n)
{
	(void)l, (void)p, (void)n;
	erofs(req);
}
static void op_rename(fuse_req_t req, fuse_ino_t p, const char *n, fuse_ino_t np, const char *nn,
		      unsigned int f)
{
	(void)p, (void)n, (void)np, (void)nn, (void)f;
	erofs(req);
}
static void op_link(fuse_req_t req, fuse_ino_t i, fuse_ino_t np, const char *nn)
{
	(void)i, (void)np, (void)nn;
	erofs(req);
}
static void op_write(fuse_req_t req, fuse_ino_t i, const char *b, size_t s, off_t o,
		     struct fuse_file_info *f)
{
	(void)i, (void)b, (void)s, (void)o, (void)f;
	erofs(req);
}
static void op_create(fuse_req_t req, fuse_ino_t p, const char *n, mode_t m,
		      struct fuse_file_info *f)
{
	(void)p, (void)n, (void)m, (void)f;
	erofs(req);
}
static void op_setxattr(fuse_req_t req, fuse_ino_t i, const char *n, const char *v, size_t s, int f)
{
	(void)i, (void)n, (void)v, (void)s, (void)f;
	erofs(req);
}
static void op_removexattr(fuse_req_t req, fuse_ino_t i, const char *n)
{
	(void)i, (void)n;
	erofs(req);
}
static void op_fallocate(fuse_req_t req, fuse_ino_t i, int m, off_t o, off_t l,
			 struct fuse_file_info *f)
{
	(void)i, (void)m, (void)o, (void)l, (void)f;
	erofs(req);
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.open = op_open,
	.read = op_read,
	.release = op_release,
	.statfs = op_statfs,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.lseek = op_lseek,
	.setattr = op_setattr,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_unlink,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.write = op_write,
	.create = op_create,
	.setxattr = op_setxattr,
	.removexattr = op_removexattr,
	.fallocate = op_fallocate,
};

const struct fuse_lowlevel_ops *nf_ops(void)
{
	return &ops;
}
