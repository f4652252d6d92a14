/* fs/watch.c — files of the set that change while mounted (contract §5,
 * issue 11 item 3).
 *
 * The reader compares a file with the identity it had at its first open
 * (device, inode, size, mtime, ctime) whenever it is acquired, and marks it
 * bad when it differs; the reads that need it then fail with EIO.  Two
 * things are left to the daemon:
 *   - noticing without a read: an inotify watch on the entry's directory
 *     (one watch, one descriptor) hears of writes, attribute changes,
 *     renames and deletions of the set's file names and has the file
 *     compared at once; without inotify (or for changes it cannot see, e.g.
 *     from another host) the next read or open of files.json notices;
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
 * unpacked (nf_tree_view) and its payload ranges compared with the file's
 * [P_f, P_f + B_f): the pieces of objects, planes and raw bindings, the
 * objects of a decoded view's parts; model.safetensors always (it holds
 * every binding); artifact.json and uses.json when the file is the entry.
 * Cost: O(nodes + pieces + parts) compares and one notification (a write
 * to /dev/fuse, a few microseconds; -ENOENT at once for an inode the kernel
 * does not hold) per touching node, once per changed file: for a
 * 100,000-object set (~750,000 nodes) a few milliseconds of compares, and
 * for a part holding 1/16 of the payload some 35,000-45,000 notifications:
 * measured on bench/gen_large.py's 100,000-object, 16-part set, a touch of
 * part 8 to the log line "35001 files ... dropped" took 0.14 s (2 loaded
 * vCPUs), on this thread while the others keep serving. */
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
	const char *name;
	uint32_t file;
};

struct nf_watch {
	struct fuse_session *se;
	pthread_t thread;
	int inofd;                  /* -1: no inotify */
	int evfd;                   /* wakes the thread: a change, or stop */
	atomic_bool stop;
	bool started;               /* the thread runs (nf_watch_start) */
	struct watch_name *names;   /* the set's file names, sorted */
	size_t nnames;
};

static bool hits(uint64_t lo, uint64_t len, uint64_t flo, uint64_t fhi)
{
	return len > 0 && lo < fhi && flo < lo + len;
}

/* Does the view of file node idx show bytes of file f? */
static bool node_touches(const struct nf_fs *fs, uint32_t idx, uint32_t f)
{
	const struct nf_artifact *a = fs->a;
	uint64_t flo = a->files[f].logical_start, fhi = flo + a->files[f].payload_bytes;
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
	case NF_VIEW_DECODED:
		for (uint32_t k = 0; k < v.nparts; k++) {
			const struct nf_object *o = &a->objects[v.parts[k].object];
			if (hits(o->offset, o->bytes, flo, fhi))
				return true;
		}
		return false;
	case NF_VIEW_SAFETENSORS:
		return true;
	case NF_VIEW_ENTRY:
	case NF_VIEW_USES:
		return f == 0;
	default:
		return false;
	}
}

bool nf_node_touches_changed(struct nf_fs *fs, uint32_t idx)
{
	if (atomic_load(&fs->nchanged) == 0)
		return false;   /* the common case: one load */
	for (uint32_t f = 0; f < fs->a->nfiles; f++)
		if (atomic_load(&fs->files[f].changed) && node_touches(fs, idx, f))
			return true;
	return false;
}

/* The reader's hook: file f was just found changed (any thread). */
static void on_change(void *arg, uint32_t f)
{
	struct nf_fs *fs = arg;
	uint64_t one = 1;

	if (f >= fs->a->nfiles || atomic_exchange(&fs->files[f].changed, true))
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
	nf_file_status(fs->a, f, &reason);
	/* one line a file: the read that failed on it may have said it already */
	if (!atomic_exchange(&fs->files[f].logged, true))
		nf_log(fs, LOG_ERR, "files[%u]: %s; the kernel's cached pages of the %zu files "
		       "showing its bytes were dropped", f, reason ? reason : "changed", n);
}

static int cmp_name(const void *x, const void *y)
{
	return strcmp(((const struct watch_name *)x)->name, ((const struct watch_name *)y)->name);
}

static void verify_name(struct nf_fs *fs, const char *name)
{
	struct nf_watch *w = fs->watch;
	struct watch_name key = {name, 0};
	const struct watch_name *hit = bsearch(&key, w->names, w->nnames, sizeof key, cmp_name);

	if (hit && nf_file_status(fs->a, hit->file, NULL) == NF_FILE_PRESENT)
		nf_file_verify(fs->a, hit->file);   /* a change calls on_change */
}

static void read_events(struct nf_fs *fs)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len = read(fs->watch->inofd, buf, sizeof buf);

	for (ssize_t at = 0; len > 0 && at < len;) {
		const struct inotify_event *e = (const struct inotify_event *)(buf + at);
		if (e->mask & IN_Q_OVERFLOW) {
			for (uint32_t f = 0; f < fs->a->nfiles; f++)
				if (nf_file_status(fs->a, f, NULL) == NF_FILE_PRESENT)
					nf_file_verify(fs->a, f);
		} else if (e->len > 0) {
			verify_name(fs, e->name);
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
		for (uint32_t f = 0; f < fs->a->nfiles && !atomic_load(&w->stop); f++)
			if (atomic_exchange(&fs->files[f].inval_due, false))
				invalidate_file(fs, f);
	}
	return NULL;
}

/* The names inotify reports: the entry's and those of the parts. */
static int make_names(struct nf_fs *fs, struct nf_watch *w)
{
	const struct nf_artifact *a = fs->a;

	w->names = calloc(a->nfiles ? a->nfiles : 1, sizeof *w->names);
	if (w->names == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < a->nfiles; i++) {
		const char *n = i == 0 ? a->entry_name : a->files[i].path;
		if (n)
			w->names[w->nnames++] = (struct watch_name){n, i};
	}
	qsort(w->names, w->nnames, sizeof *w->names, cmp_name);
	return 0;
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

int nf_watch_init(struct nf_fs *fs)
{
	struct nf_watch *w = calloc(1, sizeof *w);

	if (w == NULL)
		return -ENOMEM;
	w->inofd = -1;
	w->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->evfd < 0 || make_names(fs, w) < 0) {
		int e = w->evfd < 0 ? errno : ENOMEM;
		watch_free(w);
		return -e;
	}
	/* the directory of the entry, as the reader resolves the parts: a
	 * relative path, so this runs before the daemon's chdir("/") */
	const char *entry = fs->a->entry_path, *slash = strrchr(entry, '/');
	char *dir = slash ? (slash == entry ? strdup("/") : strndup(entry, (size_t)(slash - entry)))
			  : strdup(".");
	w->inofd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (dir && w->inofd >= 0 &&
	    inotify_add_watch(w->inofd, dir, IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM |
				      IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ONLYDIR) < 0) {
		nf_log(fs, LOG_INFO, "cannot watch %s (%s): changed files are noticed by the reads "
		       "that need them", dir, strerror(errno));
		close(w->inofd);
		w->inofd = -1;
	} else if (w->inofd < 0) {
		nf_log(fs, LOG_INFO, "no inotify (%s): changed files are noticed by the reads that "
		       "need them", strerror(errno));
	}
	free(dir);
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
	nf_files_set_change_hook(fs->a, on_change, fs);
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
	nf_files_set_change_hook(fs->a, NULL, NULL);
	if (w->started) {
		atomic_store(&w->stop, true);
		if (write(w->evfd, &one, sizeof one) < 0)
			(void)errno;
		pthread_join(w->thread, NULL);
	}
	fs->watch = NULL;
	watch_free(w);
}
