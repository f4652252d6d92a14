/* fs/calbin/files.c — the package's files as the adapter's set (fs/set.h).
 *
 * A file is opened beneath the package root (cb_package_open_file:
 * openat2 RESOLVE_BENEATH, never a symlink out) when a read first needs
 * it, and must be the very file the check read: its device, inode, size
 * and mtime are those the walk recorded.  From then on it is compared,
 * on the open descriptor, every time it is acquired (and when the watch
 * hears of its name, verify): unlinked or renamed over (no link left),
 * truncated or grown, written (mtime), touched or chmod'ed (ctime) — the
 * change detection of the NInfer parts (contract §5) — and a file found
 * changed is bad for the rest of the mount: every read that needs it fails
 * with EIO, the others go on.  A closed file opened again must still be
 * the same inode.  Descriptors live in a small cache (half the fd limit;
 * a package has some seventy files, so all stay open and the rings
 * register them once); one mutex guards it all. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/calbin/cbmount.h"

bool cbm_hidden_in_public(const struct cb_package *p, size_t i)
{
	switch (p->files[i].kind) {
	case CB_KIND_MANIFEST:     /* model_path: an absolute source path */
	case CB_KIND_TOP_META:     /* reservations and map vaddrs */
	case CB_KIND_SUB_META:     /* ibuf/obuf ping/pong, CSR offsets */
	case CB_KIND_OP_IO_YAML:   /* every tensor's vaddr */
	case CB_KIND_CMD_TEXT:     /* srcAddr/dstAddr */
	case CB_KIND_CPU_CMD:      /* ... and their binary records */
	case CB_KIND_PLD_CMD:
		return true;
	default:
		return false;
	}
}

/* Half the descriptors the process may have (raised to the hard limit
 * first), at least 16. */
static uint32_t fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 16;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	rlim_t half = rl.rlim_cur / 2;
	return half < 16 ? 16 : half > UINT32_MAX ? UINT32_MAX : (uint32_t)half;
}

int cbm_files_init(struct cbm_files *f, const struct cb_package *p, const int *set_to_file,
		   uint32_t n)
{
	memset(f, 0, sizeof *f);
	f->p = p;
	f->n = n;
	f->v = calloc(n ? n : 1, sizeof *f->v);
	f->extents = calloc(n ? n : 1, sizeof *f->extents);
	if (!f->v || !f->extents || pthread_mutex_init(&f->lock, NULL) != 0)
		return -ENOMEM;
	f->lock_made = true;
	uint64_t at = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct cb_file *cf = &p->files[set_to_file[i]];
		f->v[i] = (struct cbm_file){.index = set_to_file[i], .fd = -1};
		f->extents[i] = (struct nf_extent){.logical = at, .bytes = cf->size, .data_offset = 0};
		if (__builtin_add_overflow(at, cf->size, &at))
			return -EOVERFLOW;
	}
	uint32_t budget = fd_budget();
	f->open_max = n < budget ? n : budget;
	return 0;
}

void cbm_files_free(struct cbm_files *f)
{
	for (uint32_t i = 0; f->v && i < f->n; i++) {
		if (f->v[i].fd >= 0)
			close(f->v[i].fd);
		free(f->v[i].reason);
	}
	free(f->v);
	free(f->extents);
	if (f->lock_made)
		pthread_mutex_destroy(&f->lock);
	memset(f, 0, sizeof *f);
}

/* ---- identity ---------------------------------------------------------------- */

static void set_bad(struct cbm_files *f, struct cbm_file *x, enum nf_fstatus s, const char *fmt,
		    ...) __attribute__((format(printf, 4, 5)));
static void set_bad(struct cbm_files *f, struct cbm_file *x, enum nf_fstatus s, const char *fmt,
		    ...)
{
	char *why = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&why, fmt, ap) < 0)
		why = NULL;
	va_end(ap);
	free(x->reason);
	x->reason = why;
	x->status = s;
	f->changes++;
}

static bool same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* Compare what fd is now with the file's identity (taken now when it is
 * the first open: then against what the package walk saw).  true when it
 * is still that file; else it is made bad. */
static bool still_same(struct cbm_files *f, struct cbm_file *x)
{
	const struct cb_file *cf = &f->p->files[x->index];
	struct stat st;

	if (fstat(x->fd, &st) != 0) {
		set_bad(f, x, NF_FSTATUS_BAD, "%s: fstat: %s", cf->path, strerror(errno));
		return false;
	}
	if (!x->opened) {
		int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		if ((uint64_t)st.st_dev != (uint64_t)cf->dev || (uint64_t)st.st_ino != (uint64_t)cf->ino ||
		    (uint64_t)st.st_size != cf->size || mt != cf->mtime_ns) {
			set_bad(f, x, NF_FSTATUS_BAD, "%s changed between the check and its first open "
				"(%" PRIu64 " bytes then, %" PRIu64 " now)", cf->path, cf->size,
				(uint64_t)st.st_size);
			return false;
		}
		x->opened = true;
		x->dev = (uint64_t)st.st_dev;
		x->ino = (uint64_t)st.st_ino;
		x->size = (uint64_t)st.st_size;
		x->mtime = st.st_mtim;
		x->ctime = st.st_ctim;
		x->status = NF_FSTATUS_PRESENT;
		return true;
	}
	if (st.st_nlink == 0)
		set_bad(f, x, NF_FSTATUS_BAD, "%s removed (unlinked, or replaced by a rename over its "
			"name) while mounted", cf->path);
	else if ((uint64_t)st.st_dev != x->dev || (uint64_t)st.st_ino != x->ino)
		set_bad(f, x, NF_FSTATUS_BAD, "%s replaced by another file while mounted", cf->path);
	else if ((uint64_t)st.st_size != x->size)
		set_bad(f, x, NF_FSTATUS_BAD, "%s %s while mounted (%" PRIu64 " bytes, now %" PRIu64 ")",
			cf->path, (uint64_t)st.st_size < x->size ? "truncated" : "grown", x->size,
			(uint64_t)st.st_size);
	else if (!same_time(st.st_mtim, x->mtime))
		set_bad(f, x, NF_FSTATUS_BAD, "%s written while mounted (its mtime changed)", cf->path);
	else if (!same_time(st.st_ctim, x->ctime))
		set_bad(f, x, NF_FSTATUS_BAD, "%s touched while mounted (its ctime changed)", cf->path);
	else
		return true;
	return false;
}

/* Close the least recently released descriptor nobody holds. */
static void evict(struct cbm_files *f)
{
	struct cbm_file *old = NULL;

	for (uint32_t i = 0; i < f->n; i++) {
		struct cbm_file *x = &f->v[i];
		if (x->fd >= 0 && x->refs == 0 && (!old || x->lru < old->lru))
			old = x;
	}
	if (old) {
		close(old->fd);
		old->fd = -1;
		f->open--;
		f->evictions++;
	}
}

/* Open x when it is not (beneath the root, by the same rules as the
 * check): 0 or -errno. */
static int ensure_open(struct cbm_files *f, struct cbm_file *x)
{
	if (x->fd >= 0)
		return 0;
	if (f->open >= f->open_max)
		evict(f);
	int fd = cb_package_open_file(f->p, (size_t)x->index);
	if (fd == -EMFILE || fd == -ENFILE) {
		evict(f);
		fd = cb_package_open_file(f->p, (size_t)x->index);
	}
	if (fd == -EMFILE || fd == -ENFILE)
		return fd;   /* a limit of this run, not a fact about the file */
	if (fd < 0) {
		const char *path = f->p->files[x->index].path;
		if (x->opened)
			set_bad(f, x, NF_FSTATUS_BAD, "%s removed while mounted (%s)", path,
				strerror(-fd));
		else
			set_bad(f, x, fd == -ENOENT ? NF_FSTATUS_MISSING : NF_FSTATUS_BAD,
				"%s cannot be opened: %s", path, strerror(-fd));
		return x->status == NF_FSTATUS_MISSING ? -ENOENT : -EIO;
	}
	if (x->opened)
		f->reopens++;
	x->fd = fd;
	f->open++;
	return 0;
}

static int status_errno(const struct cbm_file *x)
{
	return x->status == NF_FSTATUS_MISSING ? -ENOENT : -EIO;
}

/* Acquire under the lock; *changed when it went bad now (the hook is
 * called once the lock is let go). */
static int acquire_locked(struct cbm_files *f, uint32_t i, bool *changed)
{
	struct cbm_file *x = &f->v[i];

	if (x->status == NF_FSTATUS_BAD || x->status == NF_FSTATUS_MISSING)
		return status_errno(x);
	bool was = x->opened;
	int rc = ensure_open(f, x);
	if (rc < 0) {
		*changed = was && x->status == NF_FSTATUS_BAD;
		return rc;
	}
	if (!still_same(f, x)) {
		*changed = was;
		return -EIO;
	}
	x->refs++;
	return x->fd;
}

static int set_acquire(void *arg, uint32_t i)
{
	struct cbm_files *f = &((struct nf_calbin *)arg)->files;
	bool changed = false;
	int rc;

	if (i >= f->n)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	rc = acquire_locked(f, i, &changed);
	pthread_mutex_unlock(&f->lock);
	if (changed && f->hook)
		f->hook(f->hook_arg, i);
	return rc;
}

static void set_release(void *arg, uint32_t i)
{
	struct cbm_files *f = &((struct nf_calbin *)arg)->files;

	if (i >= f->n)
		return;
	pthread_mutex_lock(&f->lock);
	struct cbm_file *x = &f->v[i];
	if (x->refs > 0)
		x->refs--;
	x->lru = ++f->tick;
	if (x->refs == 0 && x->fd >= 0 && f->open > f->open_max) {
		close(x->fd);
		x->fd = -1;
		f->open--;
		f->evictions++;
	}
	pthread_mutex_unlock(&f->lock);
}

static enum nf_fstatus set_status(void *arg, uint32_t i, const char **reason)
{
	struct cbm_files *f = &((struct nf_calbin *)arg)->files;
	enum nf_fstatus s;

	if (i >= f->n)
		return NF_FSTATUS_UNCHECKED;
	pthread_mutex_lock(&f->lock);
	s = f->v[i].status;
	if (reason)
		*reason = f->v[i].reason;   /* set once: a bad file stays bad */
	pthread_mutex_unlock(&f->lock);
	return s;
}

static int set_verify(void *arg, uint32_t i)
{
	struct cbm_files *f = &((struct nf_calbin *)arg)->files;
	bool changed = false;
	int rc = 0;

	if (i >= f->n)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	struct cbm_file *x = &f->v[i];
	if (x->status == NF_FSTATUS_BAD || x->status == NF_FSTATUS_MISSING) {
		rc = status_errno(x);
	} else if (x->opened) {
		bool was = x->fd >= 0;
		rc = ensure_open(f, x);
		if (rc == 0 && !still_same(f, x)) {
			rc = -EIO;
			changed = true;
		} else if (rc < 0) {
			changed = x->status == NF_FSTATUS_BAD;
		}
		/* a descriptor opened only to look is let go again */
		if (!was && x->fd >= 0 && x->refs == 0 && f->open > f->open_max) {
			close(x->fd);
			x->fd = -1;
			f->open--;
		}
	}
	pthread_mutex_unlock(&f->lock);
	if (changed && f->hook)
		f->hook(f->hook_arg, i);
	return rc;
}

static void set_change_hook(void *arg, void (*hook)(void *, uint32_t), void *hook_arg)
{
	struct cbm_files *f = &((struct nf_calbin *)arg)->files;

	pthread_mutex_lock(&f->lock);
	f->hook = hook;
	f->hook_arg = hook_arg;
	pthread_mutex_unlock(&f->lock);
}

static void set_stats(void *arg, struct nf_set_stats *out)
{
	struct cbm_files *f = &((struct nf_calbin *)arg)->files;

	pthread_mutex_lock(&f->lock);
	*out = (struct nf_set_stats){.open = f->open, .open_max = f->open_max,
				     .evictions = f->evictions, .reopens = f->reopens,
				     .changes = f->changes};
	pthread_mutex_unlock(&f->lock);
}

static const char *status_name(enum nf_fstatus s)
{
	switch (s) {
	case NF_FSTATUS_PRESENT: return "present";
	case NF_FSTATUS_MISSING: return "missing";
	case NF_FSTATUS_BAD: return "bad";
	default: return "unchecked";
	}
}

/* files.json (man ninferfs.5): the NInfer document's shape over the
 * package's files. */
static char *set_files_json(void *arg)
{
	struct cbm_files *f = &((struct nf_calbin *)arg)->files;
	json_t *a = json_array();

	if (!a)
		return NULL;
	pthread_mutex_lock(&f->lock);
	for (uint32_t i = 0; i < f->n; i++) {
		const struct cbm_file *x = &f->v[i];
		const struct nf_extent *e = &f->extents[i];
		json_t *o = json_object();
		if (!o)
			break;
		json_object_set_new(o, "index", json_integer(i));
		json_object_set_new(o, "path", nf_json_text(f->p->files[x->index].path));
		json_object_set_new(o, "payload_begin", nf_json_u64(e->logical));
		json_object_set_new(o, "payload_end", nf_json_u64(e->logical + e->bytes));
		json_object_set_new(o, "data_offset", json_integer(0));
		json_object_set_new(o, "file_bytes", nf_json_u64(e->bytes));
		json_object_set_new(o, "status", json_string(status_name(x->status)));
		if ((x->status == NF_FSTATUS_BAD || x->status == NF_FSTATUS_MISSING) && x->reason)
			json_object_set_new(o, "reason", nf_json_text(x->reason));
		json_array_append_new(a, o);
	}
	pthread_mutex_unlock(&f->lock);
	return nf_json_document(a, JSON_INDENT(2));
}

const struct nf_set_ops cbm_set_ops = {
	.acquire = set_acquire,
	.release = set_release,
	.status = set_status,
	.verify = set_verify,
	.set_change_hook = set_change_hook,
	.stats = set_stats,
	.files_json = set_files_json,
};
