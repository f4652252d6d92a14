/* reader/source_local.c — the part files of a set (seed §2.1, §3.2, §3.3, §11.1).
 *
 * Parts are opened lazily, relative to the entry's directory and never
 * outside it: the directory is opened once (O_PATH), and each part with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) so neither ".." nor a
 * symlink can lead out; where openat2 is missing, openat(O_NOFOLLOW) on
 * the single-component name gives the same guarantee.  A path that broke
 * the §3.3 rules is never opened at all.  The outcome (or why not) is
 * remembered under the artifact's mutex, so each file is checked once.
 *
 * A set may have more parts than the process may hold descriptors (issue
 * 11: 1,145 parts under `ulimit -n 1024`), so open parts live in a bounded
 * cache: a descriptor is held while a caller has the file acquired
 * (nf_file_acquire .. nf_file_release), and the least recently released
 * ones are closed when the cache is full or an open fails with EMFILE or
 * ENFILE.  A closed part is opened again on demand beneath the same
 * directory by the same rules, and must be the very file first opened: its
 * identity (device, inode) and its size, mtime and ctime are recorded at
 * the first open and compared at every reopen, so a reopen can never serve
 * another file.  The same comparison runs, on the open descriptor, every
 * time a file is acquired: a part (or the entry) overwritten in place,
 * truncated, touched, or removed is treated like a replaced one (contract
 * §5): it becomes bad, FILE_CHANGED, and every read that needs it fails.
 * A descriptor limit is a limit of this run, not a fact about the file: it
 * never makes a file bad (FILE_OPEN_LIMIT, operational). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "reader/internal.h"

static const uint8_t part_magic[8] = {0x4e, 0x49, 0x4e, 0x50, 0x52, 0x54, 0x00, 0x03};

const char *nf_part_path_problem(const char *p, size_t len, const char *entry_name,
				 const char **code)
{
	*code = "FILES_PATH_INVALID";
	if (len == 0)
		return "is empty";
	if (memchr(p, '\0', len))
		return "contains U+0000";
	if (p[0] == '/')
		return "is absolute";
	if (memchr(p, '/', len))
		return "contains '/'";
	if (memchr(p, '\\', len))
		return "contains '\\'";
	if (strcmp(p, ".") == 0 || strcmp(p, "..") == 0)
		return "is a dot entry";
	if (entry_name && strcmp(p, entry_name) == 0) {
		*code = "FILES_PATH_IS_ENTRY";
		return "is the entry's own file name";
	}
	return NULL;
}

static uint64_t le64(const uint8_t *b)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | b[i];
	return v;
}

static int open_beneath(int dirfd, const char *name)
{
	struct open_how how = {
		/* O_NONBLOCK: a FIFO beside the entry must not hang the open;
		 * only regular files are accepted afterwards. */
		.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof how);
	if (fd >= 0 || errno != ENOSYS)
		return (int)fd;
	return openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
}

static bool fd_limit_error(int e)
{
	return e == EMFILE || e == ENFILE;
}

static void set_state(struct nf_file_state *st, enum nf_file_status s, const char *code,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void set_state(struct nf_file_state *st, enum nf_file_status s, const char *code,
		      const char *fmt, ...)
{
	st->status = s;
	st->code = code;
	free(st->reason);
	st->reason = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&st->reason, fmt, ap) < 0)
		st->reason = NULL;
	va_end(ap);
}

/* ---- identity ----------------------------------------------------------- */

void nf_fingerprint_of(const struct stat *sb, struct nf_file_fingerprint *id)
{
	id->dev = (uint64_t)sb->st_dev;
	id->ino = (uint64_t)sb->st_ino;
	id->size = (uint64_t)sb->st_size;
	id->mtime = sb->st_mtim;
	id->ctime = sb->st_ctim;
}

static bool same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* What differs between the first open (was) and now, or NULL: one clause
 * per change, for the file's reason. */
static char *identity_change(const struct nf_file_fingerprint *was, const struct stat *sb)
{
	struct nf_file_fingerprint now;
	char *out = NULL;
	nf_fingerprint_of(sb, &now);
	if (sb->st_nlink == 0) {
		if (asprintf(&out, "removed (unlinked, or replaced by a rename over its name)") < 0)
			out = NULL;
		return out ? out : strdup("removed");
	}
	if (now.dev != was->dev || now.ino != was->ino) {
		if (asprintf(&out, "replaced by another file (device:inode %" PRIu64 ":%" PRIu64
			     " -> %" PRIu64 ":%" PRIu64 ")", was->dev, was->ino, now.dev, now.ino) < 0)
			out = NULL;
		return out ? out : strdup("replaced");
	}
	char sz[64] = "", mt[96] = "", ct[96] = "";
	if (now.size != was->size)
		snprintf(sz, sizeof sz, ", size %" PRIu64 " -> %" PRIu64, was->size, now.size);
	if (!same_time(now.mtime, was->mtime))
		snprintf(mt, sizeof mt, ", mtime %lld.%09ld -> %lld.%09ld",
			 (long long)was->mtime.tv_sec, was->mtime.tv_nsec,
			 (long long)now.mtime.tv_sec, now.mtime.tv_nsec);
	if (!same_time(now.ctime, was->ctime))
		snprintf(ct, sizeof ct, ", ctime %lld.%09ld -> %lld.%09ld",
			 (long long)was->ctime.tv_sec, was->ctime.tv_nsec,
			 (long long)now.ctime.tv_sec, now.ctime.tv_nsec);
	if (!*sz && !*mt && !*ct)
		return NULL;
	if (asprintf(&out, "changed in place%s%s%s", sz, mt, ct) < 0)
		out = NULL;
	return out ? out : strdup("changed");
}

/* ---- the open-file cache (lock held) ------------------------------------ */

#define NO_FILE UINT32_MAX

static void lru_unlink(struct nf_artifact_private *p, uint32_t i)
{
	struct nf_file_state *st = &p->files[i];
	if (!st->in_lru)
		return;
	if (st->lru_prev != NO_FILE)
		p->files[st->lru_prev].lru_next = st->lru_next;
	else
		p->lru_head = st->lru_next;
	if (st->lru_next != NO_FILE)
		p->files[st->lru_next].lru_prev = st->lru_prev;
	else
		p->lru_tail = st->lru_prev;
	st->in_lru = false;
}

/* The most recently released goes to the head. */
static void lru_push(struct nf_artifact_private *p, uint32_t i)
{
	struct nf_file_state *st = &p->files[i];
	st->lru_prev = NO_FILE;
	st->lru_next = p->lru_head;
	if (p->lru_head != NO_FILE)
		p->files[p->lru_head].lru_prev = i;
	else
		p->lru_tail = i;
	p->lru_head = i;
	st->in_lru = true;
}

static void close_part(struct nf_artifact_private *p, uint32_t i)
{
	struct nf_file_state *st = &p->files[i];
	lru_unlink(p, i);
	if (st->fd >= 0) {
		close(st->fd);
		st->fd = -1;
		p->nopen--;
	}
}

/* Close the least recently used unpinned part; false when there is none. */
static bool evict_one(struct nf_artifact_private *p)
{
	if (p->lru_tail == NO_FILE)
		return false;
	close_part(p, p->lru_tail);
	p->evictions++;
	return true;
}

/* Open part i beneath the entry's directory, making room in the cache
 * first and again on EMFILE/ENFILE.  fd, or -1 with errno. */
static int open_cached(struct nf_artifact *a, uint32_t i)
{
	struct nf_artifact_private *p = a->priv;
	while (p->nopen >= p->open_max && evict_one(p))
		;
	for (;;) {
		int fd = open_beneath(p->dirfd, a->files[i].path);
		if (fd >= 0) {
			p->nopen++;
			return fd;
		}
		if (errno == EINTR)
			continue;
		if (!fd_limit_error(errno) || !evict_one(p))
			return -1;
	}
}

/* ---- first open and reopen (lock held) ---------------------------------- */

/* Open and check part i (i >= 1) the first time.  0, or -EMFILE/-ENFILE
 * when no descriptor could be had (the file stays unchecked). */
static int open_part(struct nf_artifact *a, uint32_t i)
{
	struct nf_artifact_private *p = a->priv;
	struct nf_file_state *st = &p->files[i];
	const struct nf_file *f = &a->files[i];
	if (p->dirfd < 0) {
		set_state(st, NF_FILE_MISSING, "FILE_MISSING", "the entry's directory cannot be opened");
		return 0;
	}
	int fd = open_cached(a, i);
	if (fd < 0) {
		int e = errno;
		if (fd_limit_error(e))
			return -e;
		if (e == ENOENT)
			set_state(st, NF_FILE_MISSING, "FILE_MISSING", "%s: no such file beside the entry",
				  f->path);
		else if (e == EXDEV || e == ELOOP)
			set_state(st, NF_FILE_BAD, "FILE_UNREADABLE", "%s: a symlink that leads out of "
				  "the entry's directory (seed §3.3): not followed", f->path);
		else
			set_state(st, NF_FILE_BAD, "FILE_UNREADABLE", "%s: %s", f->path, strerror(e));
		return 0;
	}
	struct stat sb;
	uint8_t h[32];
	ssize_t got = -1;
	if (fstat(fd, &sb) < 0) {
		set_state(st, NF_FILE_BAD, "FILE_UNREADABLE", "%s: fstat: %s", f->path, strerror(errno));
		goto bad;
	}
	if (!S_ISREG(sb.st_mode)) {
		set_state(st, NF_FILE_BAD, "FILE_UNREADABLE", "%s: not a regular file", f->path);
		goto bad;
	}
	if ((uint64_t)sb.st_size < sizeof h) {
		set_state(st, NF_FILE_BAD, "FILE_BAD_LENGTH", "seed §3.2: a part is 4096 + payload_bytes "
			  "= %" PRIu64 " bytes; %s has %" PRIu64 ", not even its 32-byte header",
			  f->file_bytes, f->path, (uint64_t)sb.st_size);
		goto bad;
	}
	do
		got = pread(fd, h, sizeof h, 0);
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)sizeof h) {
		set_state(st, NF_FILE_BAD, "FILE_UNREADABLE", "%s: reading the header failed: %s",
			  f->path, got < 0 ? strerror(errno) : "short read");
		goto bad;
	}
	if (memcmp(h, part_magic, 8) != 0) {
		set_state(st, NF_FILE_BAD, "FILE_BAD_MAGIC", "seed §3.2: a part starts with 4e 49 4e 50 "
			  "52 54 00 03; %s starts with %02x %02x %02x %02x %02x %02x %02x %02x", f->path,
			  h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]);
		goto bad;
	}
	uint64_t index = le64(h + 8);
	if (index != i) {
		set_state(st, NF_FILE_BAD, "FILE_BAD_INDEX", "seed §3.2: part_index must be its files "
			  "index %u; %s says %" PRIu64, i, f->path, index);
		goto bad;
	}
	if (memcmp(h + 16, a->artifact_id, NF_ID_BYTES) != 0) {
		char hex[33];
		for (int k = 0; k < 16; k++)
			sprintf(hex + 2 * k, "%02x", h[16 + k]);
		set_state(st, NF_FILE_BAD, "FILE_ARTIFACT_ID_MISMATCH", "seed §3.2: a part carries the "
			  "entry's artifact_id %s; %s carries %s (another artifact's part)",
			  a->artifact_id_hex, f->path, hex);
		goto bad;
	}
	if ((uint64_t)sb.st_size != f->file_bytes) {
		set_state(st, NF_FILE_BAD, "FILE_BAD_LENGTH", "seed §3.2: a part is 4096 + payload_bytes "
			  "%" PRIu64 " = %" PRIu64 " bytes; %s has %" PRIu64, f->payload_bytes,
			  f->file_bytes, f->path, (uint64_t)sb.st_size);
		goto bad;
	}
	st->fd = fd;
	nf_fingerprint_of(&sb, &st->id);
	st->id_known = true;
	st->status = NF_FILE_PRESENT;
	return 0;
bad:
	close(fd);
	p->nopen--;
	return 0;
}

/* Mark a present file changed (contract §5); returns true when this call
 * made the change (the caller then tells the hook, unlocked). */
static bool mark_changed(struct nf_artifact_private *p, uint32_t i, const char *path,
			 const char *what)
{
	struct nf_file_state *st = &p->files[i];
	if (st->status != NF_FILE_PRESENT)
		return false;
	set_state(st, NF_FILE_BAD, "FILE_CHANGED", "%s: %s since it was first opened: contract §5, "
		  "it is treated like a replaced file and reads that need it fail", path,
		  what ? what : "changed");
	p->changes++;
	return true;
}

/* A closed present part opened again: it must be the file first opened.
 * fd, or -EIO (changed: *changed set), -EMFILE/-ENFILE. */
static int reopen_part(struct nf_artifact *a, uint32_t i, bool *changed)
{
	struct nf_artifact_private *p = a->priv;
	struct nf_file_state *st = &p->files[i];
	int fd = open_cached(a, i);
	if (fd < 0) {
		int e = errno;
		if (fd_limit_error(e))
			return -e;
		*changed = mark_changed(p, i, a->files[i].path,
					e == ENOENT ? "removed (no such file beside the entry)"
						    : strerror(e));
		return -EIO;
	}
	struct stat sb;
	char *why = NULL;
	if (fstat(fd, &sb) != 0)
		why = strdup(strerror(errno));
	else
		why = identity_change(&st->id, &sb);
	if (why) {
		close(fd);
		p->nopen--;
		*changed = mark_changed(p, i, a->files[i].path, why);
		free(why);
		return -EIO;
	}
	st->fd = fd;
	p->reopens++;
	return fd;
}

/* ---- the interface ------------------------------------------------------- */

static void tell_hook(struct nf_artifact *a, uint32_t i)
{
	struct nf_artifact_private *p = a->priv;
	pthread_mutex_lock(&p->lock);
	void (*hook)(void *, uint32_t) = p->change_hook;
	void *arg = p->change_arg;
	pthread_mutex_unlock(&p->lock);
	if (hook)
		hook(arg, i);
}

static const char *file_path(const struct nf_artifact *a, uint32_t i)
{
	return a->files[i].path ? a->files[i].path : a->entry_name;
}

int nf_file_acquire(struct nf_artifact *a, uint32_t i)
{
	if (!a || i >= a->nfiles || !a->priv->files)
		return -EINVAL;
	struct nf_artifact_private *p = a->priv;
	bool changed = false, fresh = false;
	int rc;
	pthread_mutex_lock(&p->lock);
	struct nf_file_state *st = &p->files[i];
	if (st->status == NF_FILE_UNCHECKED && i > 0 && st->path_ok) {
		rc = open_part(a, i);
		if (rc < 0) {
			pthread_mutex_unlock(&p->lock);
			return rc;
		}
		fresh = true;   /* its identity was taken just now */
	}
	switch (st->status) {
	case NF_FILE_PRESENT:
		if (st->fd >= 0) {
			rc = st->fd;
		} else {
			rc = reopen_part(a, i, &changed);   /* compared just now */
			fresh = true;
		}
		break;
	case NF_FILE_MISSING: rc = -ENOENT; break;
	default: rc = -EIO; break;
	}
	if (rc >= 0) {
		st->pins++;
		lru_unlink(p, i);
	}
	pthread_mutex_unlock(&p->lock);
	if (changed)
		tell_hook(a, i);
	if (rc < 0 || fresh)
		return rc;
	/* The descriptor is pinned: look at the file it holds, unlocked (one
	 * fstat, the cost of every acquire). */
	struct stat sb;
	char *why = fstat(rc, &sb) != 0 ? strdup(strerror(errno)) : identity_change(&st->id, &sb);
	if (!why)
		return rc;
	pthread_mutex_lock(&p->lock);
	changed = mark_changed(p, i, file_path(a, i), why);
	pthread_mutex_unlock(&p->lock);
	free(why);
	nf_file_release(a, i);
	if (changed)
		tell_hook(a, i);
	return -EIO;
}

void nf_file_release(struct nf_artifact *a, uint32_t i)
{
	if (!a || i >= a->nfiles || !a->priv->files)
		return;
	struct nf_artifact_private *p = a->priv;
	pthread_mutex_lock(&p->lock);
	struct nf_file_state *st = &p->files[i];
	if (st->pins > 0 && --st->pins == 0 && i > 0 && st->fd >= 0) {
		if (st->status != NF_FILE_PRESENT)
			close_part(p, i);   /* changed: never read again */
		else
			lru_push(p, i);
		while (p->nopen > p->open_max && evict_one(p))
			;
	}
	pthread_mutex_unlock(&p->lock);
}

int nf_file_verify(struct nf_artifact *a, uint32_t i)
{
	int fd = nf_file_acquire(a, i);
	if (fd < 0)
		return fd;
	nf_file_release(a, i);
	return 0;
}

int nf_file_fingerprint(const struct nf_artifact *a, uint32_t i, struct nf_file_fingerprint *out)
{
	if (!a || i >= a->nfiles || !a->priv->files)
		return -EINVAL;
	struct nf_artifact_private *p = a->priv;
	pthread_mutex_lock(&p->lock);
	const struct nf_file_state *st = &p->files[i];
	/* recorded at the first open, and never changed */
	bool known = st->id_known;
	if (known)
		*out = st->id;
	pthread_mutex_unlock(&p->lock);
	return known ? 0 : -ENOENT;
}

enum nf_file_status nf_file_status(const struct nf_artifact *a, uint32_t i, const char **reason)
{
	if (reason)
		*reason = NULL;
	if (!a || i >= a->nfiles || !a->priv->files)
		return NF_FILE_MISSING;
	struct nf_artifact_private *p = a->priv;
	pthread_mutex_lock(&p->lock);
	enum nf_file_status s = p->files[i].status;
	/* The reason is written once, when the status becomes missing or bad
	 * (a present file has none), and never changes afterwards: the
	 * pointer stays valid until nf_artifact_close(). */
	if (reason)
		*reason = p->files[i].reason;
	pthread_mutex_unlock(&p->lock);
	return s;
}

void nf_files_stats(const struct nf_artifact *a, struct nf_files_stats *out)
{
	struct nf_artifact_private *p = a->priv;
	pthread_mutex_lock(&p->lock);
	out->open = p->nopen;
	out->open_max = p->open_max;
	out->evictions = p->evictions;
	out->reopens = p->reopens;
	out->changes = p->changes;
	pthread_mutex_unlock(&p->lock);
}

void nf_files_set_open_max(struct nf_artifact *a, uint32_t n)
{
	struct nf_artifact_private *p = a->priv;
	pthread_mutex_lock(&p->lock);
	p->open_max = n ? n : 1;
	while (p->nopen > p->open_max && evict_one(p))
		;
	pthread_mutex_unlock(&p->lock);
}

void nf_files_set_change_hook(struct nf_artifact *a, void (*hook)(void *arg, uint32_t file),
			      void *arg)
{
	struct nf_artifact_private *p = a->priv;
	pthread_mutex_lock(&p->lock);
	p->change_hook = hook;
	p->change_arg = arg;
	pthread_mutex_unlock(&p->lock);
}

/* Half the soft descriptor limit (the rest is the caller's: stdio, the
 * entry, rings, sockets), at least 4. */
uint32_t nf_files_default_open_max(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 1u << 20;
	rlim_t half = rl.rlim_cur / 2;
	return half < 4 ? 4 : half > UINT32_MAX ? UINT32_MAX : (uint32_t)half;
}

void nf_artifact_check_files(struct nf_artifact *a, struct nf_report *report)
{
	if (!a || !a->priv->files)
		return;
	uint32_t limited = 0, last_limited = 0;
	for (uint32_t i = 1; i < a->nfiles; i++) {
		int rc = nf_file_acquire(a, i);
		if (rc >= 0)
			nf_file_release(a, i);
		const struct nf_file_state *st = &a->priv->files[i];
		if (fd_limit_error(-rc) && limited++ > 0) {
			last_limited = i;   /* one finding for the first, one for the rest */
			continue;
		}
		char *where = NULL;
		if (asprintf(&where, "files[%u] %s", i, a->files[i].path ? a->files[i].path : "") < 0) {
			report->oom = true;
			continue;
		}
		if (fd_limit_error(-rc)) {
			/* a limit of this run: the file is neither missing nor bad */
			struct rlimit rl = {0, 0};
			getrlimit(RLIMIT_NOFILE, &rl);
			nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "FILE_OPEN_LIMIT", where,
				      "%s: cannot be opened now: %s (descriptor limit %llu, %u parts "
				      "open): a limit of this run, not a problem of the file",
				      a->files[i].path, strerror(-rc), (unsigned long long)rl.rlim_cur,
				      a->priv->nopen);
			free(where);
			continue;
		}
		if (st->status == NF_FILE_PRESENT || !st->path_ok) {
			free(where);
			continue; /* a bad path is already a directory error */
		}
		bool missing = st->status == NF_FILE_MISSING;
		nf_report_add(report, missing ? NF_SEV_WARNING : NF_SEV_ERROR, NF_SCOPE_FILE,
			      st->code ? st->code : "FILE_UNREADABLE", where, "%s%s",
			      st->reason ? st->reason : "unreadable",
			      missing ? "; reads that need this part fail" : "");
		free(where);
	}
	if (limited > 1)
		nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "FILE_OPEN_LIMIT", "files",
			      "%u more parts, up to files[%u], could not be opened either (unchecked)",
			      limited - 1, last_limited);
}
