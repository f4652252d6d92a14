/* reader/writer_tmp.c — the writer's temporary directory and its owner
 * lock (see writer_tmp.h). */
#include "reader/writer_tmp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define OWNER ".owner"
#define SUFFIX_LEN 6   /* mkdtemp's XXXXXX */

/* Is `n` ".NAME.tmp-XXXXXX"? */
static bool is_tmp_name(const char *n, const char *name)
{
	size_t k = strlen(name);
	return n[0] == '.' && strncmp(n + 1, name, k) == 0 && strncmp(n + 1 + k, ".tmp-", 5) == 0 &&
	       strlen(n + 1 + k + 5) == SUFFIX_LEN;
}

/* The pid written in a locked .owner, or 0 when it holds none yet. */
static long owner_pid(int lockfd)
{
	char buf[32];
	ssize_t n = pread(lockfd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *end;
	long pid = strtol(buf, &end, 10);
	return pid > 0 && (*end == '\n' || *end == '\0') ? pid : 0;
}

/* Unlink the files of a stale directory (never recursing: the writer makes
 * no subdirectory), .owner last, then the directory.  0 or -errno. */
static int remove_stale(int dirfd, const char *n, int sd, size_t *nfiles, uint64_t *bytes)
{
	int dup_fd = dup(sd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		int e = errno;
		if (dup_fd >= 0)
			close(dup_fd);
		return -e;
	}
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, OWNER))
			continue;
		struct stat st;
		if (fstatat(sd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
			rc = -ENOTEMPTY;   /* not ours: leave it */
			continue;
		}
		if (unlinkat(sd, e->d_name, 0) != 0) {
			rc = -errno;
			continue;
		}
		(*nfiles)++;
		*bytes += (uint64_t)st.st_blocks * 512;
	}
	closedir(d);
	if (rc)
		return rc;
	if (unlinkat(sd, OWNER, 0) != 0 && errno != ENOENT)
		return -errno;
	return unlinkat(dirfd, n, AT_REMOVEDIR) == 0 ? 0 : -errno;
}

/* One candidate: removed when its owner is gone. */
static void sweep_one(int dirfd, const char *dirpath, const char *n, struct nf_report *rep)
{
	int sd = openat(dirfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sd < 0)
		return;
	/* no .owner: not made by this writer (or it died before it could
	 * write one, and then the directory is empty): left alone */
	int lf = openat(sd, OWNER, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (lf < 0) {
		close(sd);
		return;
	}
	long pid;
	/* a live writer holds the lock; one that holds it but has not written
	 * its pid yet is in its first instant: both are left alone */
	if (flock(lf, LOCK_EX | LOCK_NB) != 0 || (pid = owner_pid(lf)) == 0) {
		close(lf);
		close(sd);
		return;
	}
	size_t nfiles = 0;
	uint64_t bytes = 0;
	int rc = remove_stale(dirfd, n, sd, &nfiles, &bytes);
	char where[4096];
	snprintf(where, sizeof where, "%s/%s", dirpath, n);
	if (rc == 0)
		nf_report_add(rep, NF_SEV_INFO, NF_SCOPE_OPERATIONAL, "WRITE_TMP_REMOVED", where,
			      "left by process %ld, which is gone (its lock on %s is free): removed "
			      "it and its %zu files (%" PRIu64 " bytes on disk)", pid, OWNER, nfiles,
			      bytes);
	else
		nf_report_add(rep, NF_SEV_WARNING, NF_SCOPE_OPERATIONAL, "WRITE_TMP_LEFT", where,
			      "left by process %ld, which is gone; cannot remove it: %s", pid,
			      strerror(-rc));
	close(lf);   /* the lock goes with the last descriptor */
	close(sd);
}

void nf_write_tmp_sweep(int dirfd, const char *dirpath, const char *name, struct nf_report *rep)
{
	int dup_fd = dup(dirfd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return;   /* the writer's own open of the directory will say why */
	}
	/* names first: removing while reading the directory would skip some */
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!is_tmp_name(e->d_name, name))
			continue;
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 4;
			char **nn = realloc(names, nc * sizeof *nn);
			if (!nn)
				break;
			names = nn;
			cap = nc;
		}
		if (!(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	for (size_t i = 0; i < n; i++) {
		sweep_one(dirfd, dirpath, names[i], rep);
		free(names[i]);
	}
	free(names);
}

static int tmp_fail(struct nf_report *rep, const char *where, int err, const char *what)
{
	nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_IO", where, "%s: %s", what,
		      strerror(err));
	return -err;
}

int nf_write_tmp_make(struct nf_write_tmp *t, const char *dirpath, const char *name,
		      struct nf_report *rep)
{
	*t = (struct nf_write_tmp)NF_WRITE_TMP_INIT;
	if (asprintf(&t->path, "%s/.%s.tmp-XXXXXX", dirpath, name) < 0) {
		t->path = NULL;
		return -ENOMEM;
	}
	if (!mkdtemp(t->path)) {
		int e = errno;
		free(t->path);
		t->path = NULL;
		return tmp_fail(rep, dirpath, e, "cannot create a temporary directory");
	}
	t->fd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->fd < 0)
		goto fail;
	/* the lock first, the pid second: a sweeper that sees a pid and gets
	 * the lock knows this process is gone */
	t->lockfd = openat(t->fd, OWNER, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (t->lockfd < 0 || flock(t->lockfd, LOCK_EX) != 0)
		goto fail;
	char pid[24];
	int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (pwrite(t->lockfd, pid, (size_t)len, 0) != len) {
		if (errno == 0)
			errno = EIO;
		goto fail;
	}
	return 0;
fail:;
	int e = errno;
	tmp_fail(rep, t->path, e, "cannot set up the temporary directory");
	nf_write_tmp_remove(t);
	return -e;
}

int nf_write_tmp_remove(struct nf_write_tmp *t)
{
	int rc = 0;
	if (!t->path)
		return 0;
	if (t->fd >= 0 && t->lockfd >= 0 && unlinkat(t->fd, OWNER, 0) != 0)
		rc = -errno;
	if (rmdir(t->path) != 0 && !rc)
		rc = -errno;
	/* closed only now: until the directory is gone the lock says "alive" */
	if (t->lockfd >= 0)
		close(t->lockfd);
	if (t->fd >= 0)
		close(t->fd);
	free(t->path);
	*t = (struct nf_write_tmp)NF_WRITE_TMP_INIT;
	return rc;
}
