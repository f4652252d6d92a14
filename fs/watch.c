/* fs/watch.c — files of the set that change while mounted (contract §5,
 * issue 11 item 3).
 *
 * The family compares a file with the identity it had at its first open
 * whenever it is acquired, and marks it bad when it differs; the reads that
 * need it then fail with EIO.  Two things are left to the adapter:
 *   - noticing without a read: an inotify watch on each directory that
 *     holds files of the set (NInfer: the entry's directory; one watch, one
 *     descriptor) hears of writes, attribute changes, renames and deletions
 *     of their names and has the file compared at once (the set's verify);
 *     without inotify (or for changes it cannot see, e.g. from another
 *     host, or files that are not local) the next read or open of
 *     files.json notices;
 *   - the kernel's page cache: a view whose pages were read before the
 *     change would keep serving the old bytes without asking the daemon, so
 *     the cached pages of every node whose view touches the changed file
 *     are dropped (fuse_lowlevel_notify_inval_inode).  That runs on this
 *     thread, never in a request handler: the kernel waits for locked
 *     pages, and a page locked for a read this daemon must answer would
 *     deadlock a handler (and any -s daemon).  op_open also gives such a
 *     node no keep_cache, so an open after the change starts afresh.
 *
 * Which nodes: every file node is looked at once per changed file, its view
 * unpacked (nf_tree_view): the pieces of a PIECES view are compared with
 * the file's extent [P_f, P_f + B_f), a FILE view with its file, and a
 * family kind is the family's to say (NInfer: the objects of a decoded
 * view's parts; model.safetensors always; uses.json when the file is the
 * entry).  Cost: O(nodes + pieces + parts) compares and one notification
 * (a write to /dev/fuse, a few microseconds; -ENOENT at once for an inode
 * the kernel does not hold) per touching node, once per changed file: for
 * a 100,000-object set (~750,000 nodes) a few milliseconds of compares,
 * and for a part holding 1/16 of the payload some 35,000-45,000
 * notifications: measured on bench/gen_large.py's 100,000-object, 16-part
 * set, a touch of part 8 to the log line "35001 files ... dropped" took
 * 0.14 s (2 loaded vCPUs), on this thread while the others keep serving. */
#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <syslog.h>
#include <unistd.h>

#include "fs/context.h"

struct watch_name {
	int wd;                     /* the watch of its directory */
	const char *name;           /* its last component */
	uint32_t file;
};

struct nf_watch {
	struct fuse_session *se;
	pthread_t thread;
	int inofd;                  /* -1: no inotify */
	int evfd;                   /* wakes the thread: a change, or stop */
	atomic_bool stop;
	bool started;               /* the thread runs (nf_watch_start) */
	struct watch_name *names;   /* the set's file names, sorted by (wd, name) */
	size_t nnames;
};

static bool hits(uint64_t lo, uint64_t len, uint64_t flo, uint64_t fhi)
{
	return len > 0 && lo < fhi && flo < lo + len;
}

/* Does the view of file node idx show bytes of file f? */
static bool node_touches(const struct nf_fs *fs, uint32_t idx, uint32_t f)
{
	const struct nf_extents *x = &fs->set.extents;
	uint64_t flo = nf_extent_logical(x, f), fhi = flo + nf_extent_bytes(x, f);
	struct nf_view v;

	if (fs->tree.nodes[idx].is_dir)
		return false;
	nf_tree_view(&fs->tree, idx, &v);
	switch (v.kind) {
	case NF_VIEW_PIECES:
		for (uint32_t k = 0; k < v.count; k++) {
			const struct nf_piece *p = &v.pieces[v.first + k];
			if (p->logical != NF_PIECE_ZERO && hits(p->logical, p->length, flo, fhi))
				return true;
		}
		return false;
	case NF_VIEW_FILE:
		return v.file == f;
	default:
		return v.kind >= NF_VIEW_FAMILY && fs->family->touches &&
		       fs->family->touches(fs->fam, idx, &v, f);
	}
}

bool nf_node_touches_changed(struct nf_fs *fs, uint32_t idx)
{
	if (atomic_load(&fs->nchanged) == 0)
		return false;   /* the common case: one load */
	for (uint32_t f = 0; f < fs->set.n; f++)
		if (atomic_load(&fs->files[f].changed) && node_touches(fs, idx, f))
			return true;
	return false;
}

/* The family's hook: file f was just found changed (any thread). */
static void on_change(void *arg, uint32_t f)
{
	struct nf_fs *fs = arg;
	uint64_t one = 1;

	if (f >= fs->set.n || atomic_exchange(&fs->files[f].changed, true))
		return;
	atomic_fetch_add(&fs->nchanged, 1);
	atomic_store(&fs->files[f].inval_due, true);
	if (fs->watch && write(fs->watch->evfd, &one, sizeof one) < 0)
		(void)errno;   /* the counter saturates only after 2^64 - 1 */
}

static void invalidate_file(struct nf_fs *fs, uint32_t f)
{
	size_t n = 0;
	const char *reason = NULL;

	for (uint32_t i = 0; i < fs->tree.nnodes; i++)
		if (node_touches(fs, i, f)) {
			fuse_lowlevel_notify_inval_inode(fs->watch->se, (fuse_ino_t)i + 1, 0, 0);
			n++;
		}
	fs->set.ops->status(fs->set.arg, f, &reason);
	/* one line a file: the read that failed on it may have said it already */
	if (!atomic_exchange(&fs->files[f].logged, true))
		nf_log(fs, LOG_ERR, "files[%u]: %s; the kernel's cached pages of the %zu files "
		       "showing its bytes were dropped", f, reason ? reason : "changed", n);
}

static int cmp_name(const void *x, const void *y)
{
	const struct watch_name *a = x, *b = y;

	return a->wd != b->wd ? (a->wd > b->wd) - (a->wd < b->wd) : strcmp(a->name, b->name);
}

static void verify_file(struct nf_fs *fs, uint32_t f)
{
	const struct nf_set *set = &fs->set;

	if (set->ops->status(set->arg, f, NULL) == NF_FSTATUS_PRESENT)
		set->ops->verify(set->arg, f);   /* a change calls on_change */
}

static void verify_name(struct nf_fs *fs, int wd, const char *name)
{
	struct nf_watch *w = fs->watch;
	struct watch_name key = {wd, name, 0};
	const struct watch_name *hit = bsearch(&key, w->names, w->nnames, sizeof key, cmp_name);

	if (hit)
		verify_file(fs, hit->file);
}

static void read_events(struct nf_fs *fs)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len = read(fs->watch->inofd, buf, sizeof buf);

	for (ssize_t at = 0; len > 0 && at < len;) {
		const struct inotify_event *e = (const struct inotify_event *)(buf + at);
		if (e->mask & IN_Q_OVERFLOW) {
			for (uint32_t f = 0; f < fs->set.n; f++)
				verify_file(fs, f);
		} else if (e->len > 0) {
			verify_name(fs, e->wd, e->name);
		}
		at += (ssize_t)(sizeof *e + e->len);
	}
}

static void *watch_run(void *arg)
{
	struct nf_fs *fs = arg;
	struct nf_watch *w = fs->watch;

	while (!atomic_load(&w->stop)) {
		struct pollfd p[2] = {{.fd = w->evfd, .events = POLLIN}, {.fd = w->inofd, .events = POLLIN}};
		if (poll(p, w->inofd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents & POLLIN)
			read_events(fs);
		if (p[0].revents & POLLIN) {
			uint64_t count;
			if (read(w->evfd, &count, sizeof count) < 0)
				(void)errno;
		}
		for (uint32_t f = 0; f < fs->set.n && !atomic_load(&w->stop); f++)
			if (atomic_exchange(&fs->files[f].inval_due, false))
				invalidate_file(fs, f);
	}
	return NULL;
}

static void watch_free(struct nf_watch *w)
{
	if (w->inofd >= 0)
		close(w->inofd);
	if (w->evfd >= 0)
		close(w->evfd);
	free(w->names);
	free(w);
}

/* The directory of `path` ("." when it has none), malloc'd. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return strdup(".");
	return slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
}

static void cannot_watch(struct nf_fs *fs, const char *dir)
{
	nf_log(fs, LOG_INFO, "cannot watch %s (%s): changed files are noticed by the reads that "
	       "need them", dir, strerror(errno));
}

/* A watch on the directory of each local file, and the names inotify
 * reports, sorted.  Files of one directory mostly follow each other (all
 * of an NInfer set's do): one watch, and one message when it cannot be
 * had; inotify gives a directory watched already its descriptor again.
 * The paths are the family's, relative to the working directory: this
 * runs before the daemon's chdir("/"). */
static int watch_files(struct nf_fs *fs, struct nf_watch *w)
{
	const struct nf_set *set = &fs->set;
	char *prev = NULL;
	int wd = -1;

	w->names = calloc(set->n ? set->n : 1, sizeof *w->names);
	if (w->names == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; set->paths && i < set->n; i++) {
		const char *p = set->paths[i], *slash;
		char *dir;

		if (p == NULL || (dir = dir_of(p)) == NULL)
			continue;
		if (prev == NULL || strcmp(prev, dir) != 0) {
			wd = inotify_add_watch(w->inofd, dir, IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE |
						       IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE |
						       IN_DELETE | IN_ONLYDIR);
			if (wd < 0)
				cannot_watch(fs, dir);
			free(prev);
			prev = dir;
		} else {
			free(dir);
		}
		slash = strrchr(p, '/');
		if (wd >= 0)
			w->names[w->nnames++] = (struct watch_name){wd, slash ? slash + 1 : p, i};
	}
	free(prev);
	qsort(w->names, w->nnames, sizeof *w->names, cmp_name);
	return 0;
}

int nf_watch_init(struct nf_fs *fs)
{
	struct nf_watch *w = calloc(1, sizeof *w);

	if (w == NULL)
		return -ENOMEM;
	w->inofd = -1;
	w->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->evfd < 0) {
		int e = errno;
		watch_free(w);
		return -e;
	}
	w->inofd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (w->inofd < 0) {
		nf_log(fs, LOG_INFO, "no inotify (%s): changed files are noticed by the reads that "
		       "need them", strerror(errno));
	} else if (watch_files(fs, w) < 0) {
		watch_free(w);
		return -ENOMEM;
	}
	fs->watch = w;
	return 0;
}

int nf_watch_start(struct nf_fs *fs, struct fuse_session *se)
{
	struct nf_watch *w = fs->watch;

	if (w == NULL)
		return -EINVAL;
	w->se = se;
	if (pthread_create(&w->thread, NULL, watch_run, fs) != 0)
		return -EAGAIN;
	w->started = true;
	fs->set.ops->set_change_hook(fs->set.arg, on_change, fs);
	/* a change noticed before the hook was set (e.g. by the checks at
	 * mount) has no pages cached yet: nothing to drop */
	return 0;
}

void nf_watch_stop(struct nf_fs *fs)
{
	struct nf_watch *w = fs->watch;
	uint64_t one = 1;

	if (w == NULL)
		return;
	fs->set.ops->set_change_hook(fs->set.arg, NULL, NULL);
	if (w->started) {
		atomic_store(&w->stop, true);
		if (write(w->evfd, &one, sizeof one) < 0)
			(void)errno;
		pthread_join(w->thread, NULL);
	}
	fs->watch = NULL;
	watch_free(w);
}
