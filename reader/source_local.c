/* reader/source_local.c — the files of a set in a local directory (seed
 * §2.1, §3.2, §3.3, §11.1): the local source of source.h.
 *
 * The entry is opened as given and kept open; its JSON is mapped, not
 * read (issue 11: a 16 GiB sparse entry claiming 8 GiB of JSON was read
 * whole, 40 s and 8.4 GB, to report a syntax error at byte 6): a private
 * read-only mapping whose pages are read only when the parser touches
 * them, so a directory that is bad early fails at once and memory follows
 * what was parsed, not what was claimed.  The parser wants a NUL after the
 * text: the mapping is laid over an anonymous reservation one byte longer,
 * and that byte (in a copied-on-write page) is set to 0.  A file system
 * that cannot map the entry gets malloc and pread.
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
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "reader/internal.h"
#include "reader/source.h"

#define NO_FILE UINT32_MAX

/* What the local source keeps per file. */
struct local_file {
	int fd;                   /* -1 when not open (not yet, closed by the cache, bad) */
	bool id_known;            /* id was taken at the first open */
	struct nf_file_fingerprint id;
	uint32_t pins;            /* acquirers holding fd now */
	bool in_lru;              /* open, unpinned, closable: in the LRU list */
	uint32_t lru_prev, lru_next;
};

struct local {
	int dirfd;                /* O_PATH of the entry's directory, -1 until needed */
	int entry_fd;             /* the entry, kept open (files[0]) */
	char *entry_dir;          /* directory of the entry, malloc'd */
	struct nf_file_fingerprint entry_id;   /* the entry at open */
	struct local_file *files; /* a->nfiles of them, from files_ready; NULL before */
	/* the open-file cache of the parts, under priv->lock */
	uint32_t nopen, open_max; /* part descriptors open; the cache's bound */
	uint32_t lru_head, lru_tail;
	uint64_t evictions, reopens;
};

static struct local *L_of(const struct nf_artifact *a)
{
	return a->priv->src_state;
}

int nf_pread_full(int fd, void *buf, uint64_t n, uint64_t off)
{
	uint64_t done = 0;

	while (done < n) {
		ssize_t k = pread(fd, (char *)buf + done, (size_t)(n - done), (off_t)(off + done));
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -ENODATA;
		done += (uint64_t)k;
	}
	return 0;
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

/* ---- the entry ----------------------------------------------------------- */

static int set_paths(struct nf_artifact *a, struct local *L, const char *entry_path)
{
	struct nf_artifact_private *p = a->priv;
	a->entry_path = nf_arena_strdup(&p->arena, entry_path);
	const char *slash = strrchr(entry_path, '/');
	a->entry_name = nf_arena_strdup(&p->arena, slash ? slash + 1 : entry_path);
	if (slash == entry_path)
		L->entry_dir = strdup("/");
	else if (slash)
		L->entry_dir = strndup(entry_path, (size_t)(slash - entry_path));
	else
		L->entry_dir = strdup(".");
	return a->entry_path && a->entry_name && L->entry_dir ? 0 : -ENOMEM;
}

/* Map [0, 32 + json_bytes) of the entry with a NUL after it; 0, or -errno
 * (nothing mapped).  The caller checked that the file holds those bytes, so
 * every file page of the mapping has bytes of the file (no SIGBUS unless
 * the file shrinks meanwhile: limits.c guards the tools against that). */
static int map_json(struct nf_artifact *a, int fd)
{
	struct nf_artifact_private *p = a->priv;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t text_end = NF_ENTRY_HEADER_BYTES + (size_t)a->json_bytes;
	size_t file_len = (text_end + page - 1) / page * page;
	size_t map_len = (text_end + 1 + page - 1) / page * page;
	char *base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	if (mmap(base, file_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
		int e = errno;
		munmap(base, map_len);
		return -e;
	}
	base[text_end] = '\0';   /* copies one page; the file is never written */
	mprotect(base, map_len, PROT_READ);
	p->json_map = base;
	p->json_map_len = map_len;
	a->json_text = base + NF_ENTRY_HEADER_BYTES;
	return 0;
}

/* The JSON text by pread where the entry cannot be mapped. */
static int read_json(struct nf_artifact *a, int fd, struct nf_report *r)
{
	char *text = malloc((size_t)a->json_bytes + 1);
	if (!text) {
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY", "header",
			      "cannot hold the %llu-byte JSON directory",
			      (unsigned long long)a->json_bytes);
		return -ENOMEM;
	}
	text[a->json_bytes] = '\0';
	a->priv->json_text = text;
	int rc = nf_pread_full(fd, text, (size_t)a->json_bytes, NF_ENTRY_HEADER_BYTES);
	if (rc < 0) {
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "ENTRY_UNREADABLE", "header",
			      "%s: reading the JSON failed: %s", a->entry_path,
			      rc == -ENODATA ? "file shrank" : strerror(-rc));
		return rc == -ENODATA ? -EIO : rc;
	}
	a->json_text = text;
	return 0;
}

static int local_open(struct nf_artifact *a, const char *entry, const struct nf_open_opts *o,
		      struct nf_report *r, uint64_t *entry_size)
{
	(void)o;
	struct local *L = calloc(1, sizeof *L);
	if (L) {
		L->dirfd = -1;
		L->entry_fd = -1;
		L->lru_head = L->lru_tail = NO_FILE;
		L->open_max = nf_files_default_open_max();
		a->priv->src_state = L;
	}
	if (!L || set_paths(a, L, entry) < 0) {
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY", "header",
			      "cannot allocate the artifact");
		return -ENOMEM;
	}
	/* O_NONBLOCK: a FIFO or device given as the entry must not hang the
	 * open; only a regular file is accepted, for which the flag changes
	 * nothing. */
	L->entry_fd = open(entry, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	int fd = L->entry_fd;
	if (fd < 0) {
		int e = errno;
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "ENTRY_UNREADABLE", "header",
			      "%s: %s", entry, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "ENTRY_UNREADABLE", "header",
			      "%s: fstat failed: %s", a->entry_path, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "ENTRY_UNREADABLE", "header",
			      "%s: not a regular file", a->entry_path);
		return -EINVAL;
	}
	*entry_size = (uint64_t)st.st_size;
	nf_fingerprint_of(&st, &L->entry_id);

	uint8_t h[NF_ENTRY_HEADER_BYTES];
	if (*entry_size >= NF_ENTRY_HEADER_BYTES) {
		int rc = nf_pread_full(fd, h, sizeof h, 0);
		if (rc < 0) {
			nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "ENTRY_UNREADABLE", "header",
				      "%s: reading the header failed: %s", a->entry_path,
				      rc == -ENODATA ? "file shrank" : strerror(-rc));
			return rc == -ENODATA ? -EIO : rc;
		}
	}
	int rc = nf_entry_header(a, *entry_size >= NF_ENTRY_HEADER_BYTES ? h : NULL, *entry_size, r);
	if (rc < 0)
		return rc;
	if (map_json(a, fd) == 0)
		return 0;
	return read_json(a, fd, r);
}

static int local_files_ready(struct nf_artifact *a, struct nf_report *r)
{
	struct local *L = L_of(a);
	if (a->nfiles > 0 && a->priv->files) {
		L->files = calloc(a->nfiles, sizeof *L->files);
		if (!L->files) {
			nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY", "files",
				      "cannot allocate the file table of %s", a->entry_name);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < a->nfiles; i++)
			L->files[i].fd = -1;
		/* The entry is files[0]: already open, never closed by the cache. */
		L->files[0].fd = L->entry_fd;
		L->files[0].id = L->entry_id;
		L->files[0].id_known = true;
	}
	/* The directory of the entry, once: parts are opened beneath it. */
	L->dirfd = open(L->entry_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return 0;
}

static void local_close(struct nf_artifact *a)
{
	struct local *L = L_of(a);
	if (!L)
		return;
	if (L->files)
		for (uint32_t i = 1; i < a->nfiles; i++)
			if (L->files[i].fd >= 0)
				close(L->files[i].fd);
	free(L->files);
	if (L->entry_fd >= 0)
		close(L->entry_fd);
	if (L->dirfd >= 0)
		close(L->dirfd);
	free(L->entry_dir);
	free(L);
	a->priv->src_state = NULL;
}

/* ---- the open-file cache (lock held) ------------------------------------ */

static void lru_unlink(struct local *L, uint32_t i)
{
	struct local_file *lf = &L->files[i];
	if (!lf->in_lru)
		return;
	if (lf->lru_prev != NO_FILE)
		L->files[lf->lru_prev].lru_next = lf->lru_next;
	else
		L->lru_head = lf->lru_next;
	if (lf->lru_next != NO_FILE)
		L->files[lf->lru_next].lru_prev = lf->lru_prev;
	else
		L->lru_tail = lf->lru_prev;
	lf->in_lru = false;
}

/* The most recently released goes to the head. */
static void lru_push(struct local *L, uint32_t i)
{
	struct local_file *lf = &L->files[i];
	lf->lru_prev = NO_FILE;
	lf->lru_next = L->lru_head;
	if (L->lru_head != NO_FILE)
		L->files[L->lru_head].lru_prev = i;
	else
		L->lru_tail = i;
	L->lru_head = i;
	lf->in_lru = true;
}

static void close_part(struct local *L, uint32_t i)
{
	struct local_file *lf = &L->files[i];
	lru_unlink(L, i);
	if (lf->fd >= 0) {
		close(lf->fd);
		lf->fd = -1;
		L->nopen--;
	}
}

/* Close the least recently used unpinned part; false when there is none. */
static bool evict_one(struct local *L)
{
	if (L->lru_tail == NO_FILE)
		return false;
	close_part(L, L->lru_tail);
	L->evictions++;
	return true;
}

/* Open part i beneath the entry's directory, making room in the cache
 * first and again on EMFILE/ENFILE.  fd, or -1 with errno. */
static int open_cached(struct nf_artifact *a, uint32_t i)
{
	struct local *L = L_of(a);
	while (L->nopen >= L->open_max && evict_one(L))
		;
	for (;;) {
		int fd = open_beneath(L->dirfd, a->files[i].path);
		if (fd >= 0) {
			L->nopen++;
			return fd;
		}
		if (errno == EINTR)
			continue;
		if (!fd_limit_error(errno) || !evict_one(L))
			return -1;
	}
}

/* ---- first open and reopen (lock held) ---------------------------------- */

/* Open and check part i (i >= 1) the first time.  0, or -EMFILE/-ENFILE
 * when no descriptor could be had (the file stays unchecked). */
static int open_part(struct nf_artifact *a, uint32_t i)
{
	struct local *L = L_of(a);
	struct local_file *lf = &L->files[i];
	const struct nf_file *f = &a->files[i];
	if (L->dirfd < 0) {
		nf_file_set(a, i, NF_FILE_MISSING, "FILE_MISSING", "the entry's directory cannot be opened");
		return 0;
	}
	int fd = open_cached(a, i);
	if (fd < 0) {
		int e = errno;
		if (fd_limit_error(e))
			return -e;
		if (e == ENOENT)
			nf_file_set(a, i, NF_FILE_MISSING, "FILE_MISSING", "%s: no such file beside the entry",
				    f->path);
		else if (e == EXDEV || e == ELOOP)
			nf_file_set(a, i, NF_FILE_BAD, "FILE_UNREADABLE", "%s: a symlink that leads out of "
				    "the entry's directory (seed §3.3): not followed", f->path);
		else
			nf_file_set(a, i, NF_FILE_BAD, "FILE_UNREADABLE", "%s: %s", f->path, strerror(e));
		return 0;
	}
	struct stat sb;
	uint8_t h[32];
	ssize_t got = -1;
	if (fstat(fd, &sb) < 0) {
		nf_file_set(a, i, NF_FILE_BAD, "FILE_UNREADABLE", "%s: fstat: %s", f->path,
			    strerror(errno));
		goto bad;
	}
	if (!S_ISREG(sb.st_mode)) {
		nf_file_set(a, i, NF_FILE_BAD, "FILE_UNREADABLE", "%s: not a regular file", f->path);
		goto bad;
	}
	if ((uint64_t)sb.st_size < sizeof h) {
		nf_part_check_header(a, i, NULL, (uint64_t)sb.st_size);
		goto bad;
	}
	do
		got = pread(fd, h, sizeof h, 0);
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)sizeof h) {
		nf_file_set(a, i, NF_FILE_BAD, "FILE_UNREADABLE", "%s: reading the header failed: %s",
			    f->path, got < 0 ? strerror(errno) : "short read");
		goto bad;
	}
	if (!nf_part_check_header(a, i, h, (uint64_t)sb.st_size))
		goto bad;
	lf->fd = fd;
	nf_fingerprint_of(&sb, &lf->id);
	lf->id_known = true;
	return 0;
bad:
	close(fd);
	L->nopen--;
	return 0;
}

/* A closed present part opened again: it must be the file first opened.
 * fd, or -EIO (changed: *changed set), -EMFILE/-ENFILE. */
static int reopen_part(struct nf_artifact *a, uint32_t i, bool *changed)
{
	struct local *L = L_of(a);
	struct local_file *lf = &L->files[i];
	int fd = open_cached(a, i);
	if (fd < 0) {
		int e = errno;
		if (fd_limit_error(e))
			return -e;
		*changed = nf_file_mark_changed(a, i, e == ENOENT ? "removed (no such file beside the "
						"entry)" : strerror(e));
		return -EIO;
	}
	struct stat sb;
	char *why = NULL;
	if (fstat(fd, &sb) != 0)
		why = strdup(strerror(errno));
	else
		why = identity_change(&lf->id, &sb);
	if (why) {
		close(fd);
		L->nopen--;
		*changed = nf_file_mark_changed(a, i, why);
		free(why);
		return -EIO;
	}
	lf->fd = fd;
	L->reopens++;
	return fd;
}

/* ---- the interface ------------------------------------------------------- */

static void local_release(struct nf_artifact *a, uint32_t i);

static int local_acquire(struct nf_artifact *a, uint32_t i)
{
	struct nf_artifact_private *p = a->priv;
	struct local *L = L_of(a);
	bool changed = false, fresh = false;
	int rc;
	pthread_mutex_lock(&p->lock);
	struct nf_file_state *st = &p->files[i];
	struct local_file *lf = &L->files[i];
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
		if (lf->fd >= 0) {
			rc = lf->fd;
		} else {
			rc = reopen_part(a, i, &changed);   /* compared just now */
			fresh = true;
		}
		break;
	case NF_FILE_MISSING: rc = -ENOENT; break;
	default: rc = -EIO; break;
	}
	if (rc >= 0) {
		lf->pins++;
		lru_unlink(L, i);
	}
	pthread_mutex_unlock(&p->lock);
	if (changed)
		nf_file_tell_hook(a, i);
	if (rc < 0 || fresh)
		return rc;
	/* The descriptor is pinned: look at the file it holds, unlocked (one
	 * fstat, the cost of every acquire). */
	struct stat sb;
	char *why = fstat(rc, &sb) != 0 ? strdup(strerror(errno)) : identity_change(&lf->id, &sb);
	if (!why)
		return rc;
	pthread_mutex_lock(&p->lock);
	changed = nf_file_mark_changed(a, i, why);
	pthread_mutex_unlock(&p->lock);
	free(why);
	local_release(a, i);
	if (changed)
		nf_file_tell_hook(a, i);
	return -EIO;
}

static void local_release(struct nf_artifact *a, uint32_t i)
{
	struct nf_artifact_private *p = a->priv;
	struct local *L = L_of(a);
	pthread_mutex_lock(&p->lock);
	struct local_file *lf = &L->files[i];
	if (lf->pins > 0 && --lf->pins == 0 && i > 0 && lf->fd >= 0) {
		if (p->files[i].status != NF_FILE_PRESENT)
			close_part(L, i);   /* changed: never read again */
		else
			lru_push(L, i);
		while (L->nopen > L->open_max && evict_one(L))
			;
	}
	pthread_mutex_unlock(&p->lock);
}

static int local_verify(struct nf_artifact *a, uint32_t i)
{
	int fd = local_acquire(a, i);
	if (fd < 0)
		return fd;
	local_release(a, i);
	return 0;
}

static int local_pread(struct nf_artifact *a, uint32_t i, void *buf, uint64_t len, uint64_t off)
{
	struct local *L = L_of(a);
	if (!L->files)   /* no files table: the entry itself (nf_uses_json) */
		return nf_pread_full(L->entry_fd, buf, len, off);
	int fd = local_acquire(a, i);
	if (fd < 0)
		return fd;
	int rc = nf_pread_full(fd, buf, len, off);
	local_release(a, i);
	return rc;
}

static int local_fingerprint(const struct nf_artifact *a, uint32_t i,
			     struct nf_file_fingerprint *out)
{
	struct nf_artifact_private *p = a->priv;
	const struct local *L = L_of(a);
	pthread_mutex_lock(&p->lock);
	const struct local_file *lf = &L->files[i];
	/* recorded at the first open, and never changed */
	bool known = lf->id_known;
	if (known)
		*out = lf->id;
	pthread_mutex_unlock(&p->lock);
	return known ? 0 : -ENOENT;
}

static void local_stats(const struct nf_artifact *a, struct nf_files_stats *out)
{
	const struct local *L = L_of(a);
	out->open = L->nopen;
	out->open_max = L->open_max;
	out->evictions = L->evictions;
	out->reopens = L->reopens;
}

static void local_set_open_max(struct nf_artifact *a, uint32_t n)
{
	struct local *L = L_of(a);
	L->open_max = n ? n : 1;
	while (L->nopen > L->open_max && evict_one(L))
		;
}

static const char *local_url(const struct nf_artifact *a, uint32_t i)
{
	(void)a;
	(void)i;
	return NULL;
}

const struct nf_source_ops nf_source_local = {
	.kind = "local",
	.open = local_open,
	.files_ready = local_files_ready,
	.check_all = NULL,
	.acquire = local_acquire,
	.release = local_release,
	.verify = local_verify,
	.fingerprint = local_fingerprint,
	.pread = local_pread,
	.stats = local_stats,
	.set_open_max = local_set_open_max,
	.url = local_url,
	.close = local_close,
};
