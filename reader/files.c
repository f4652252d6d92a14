/* reader/files.c — the part files of a set (seed §2.1, §3.2, §3.3, §11.1).
 *
 * Parts are opened lazily, relative to the entry's directory and never
 * outside it: the directory is opened once (O_PATH), and each part with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) so neither ".." nor a
 * symlink can lead out; where openat2 is missing, openat(O_NOFOLLOW) on
 * the single-component name gives the same guarantee.  A path that broke
 * the §3.3 rules is never opened at all.  The outcome (fd, or why not) is
 * remembered under the artifact's mutex, so each file is opened once. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Open and check part i (i >= 1); lock held. */
static void open_part(struct nf_artifact *a, uint32_t i)
{
	struct nf_artifact_private *p = a->priv;
	struct nf_file_state *st = &p->files[i];
	const struct nf_file *f = &a->files[i];
	if (p->dirfd < 0) {
		set_state(st, NF_FILE_MISSING, "FILE_MISSING", "the entry's directory cannot be opened");
		return;
	}
	int fd = open_beneath(p->dirfd, f->path);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			set_state(st, NF_FILE_MISSING, "FILE_MISSING", "%s: no such file beside the entry",
				  f->path);
		else if (e == EXDEV || e == ELOOP)
			set_state(st, NF_FILE_BAD, "FILE_UNREADABLE", "%s: a symlink that leads out of "
				  "the entry's directory (seed §3.3): not followed", f->path);
		else
			set_state(st, NF_FILE_BAD, "FILE_UNREADABLE", "%s: %s", f->path, strerror(e));
		return;
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
	st->status = NF_FILE_PRESENT;
	return;
bad:
	close(fd);
}

int nf_file_open(struct nf_artifact *a, uint32_t i)
{
	if (!a || i >= a->nfiles || !a->priv->files)
		return -EINVAL;
	struct nf_artifact_private *p = a->priv;
	pthread_mutex_lock(&p->lock);
	struct nf_file_state *st = &p->files[i];
	if (st->status == NF_FILE_UNCHECKED && i > 0 && st->path_ok)
		open_part(a, i);
	int rc;
	switch (st->status) {
	case NF_FILE_PRESENT: rc = st->fd; break;
	case NF_FILE_MISSING: rc = -ENOENT; break;
	default: rc = -EIO; break;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
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
	/* The reason is written once, before the status leaves UNCHECKED,
	 * and never changes afterwards: the pointer stays valid. */
	if (reason)
		*reason = p->files[i].reason;
	pthread_mutex_unlock(&p->lock);
	return s;
}

void nf_artifact_check_files(struct nf_artifact *a, struct nf_report *report)
{
	if (!a || !a->priv->files)
		return;
	for (uint32_t i = 1; i < a->nfiles; i++) {
		nf_file_open(a, i);
		const struct nf_file_state *st = &a->priv->files[i];
		if (st->status == NF_FILE_PRESENT || !st->path_ok)
			continue; /* a bad path is already a directory error */
		char *where = NULL;
		if (asprintf(&where, "files[%u] %s", i, a->files[i].path) < 0) {
			report->oom = true;
			continue;
		}
		bool missing = st->status == NF_FILE_MISSING;
		nf_report_add(report, missing ? NF_SEV_WARNING : NF_SEV_ERROR, NF_SCOPE_FILE,
			      st->code ? st->code : "FILE_UNREADABLE", where, "%s%s",
			      st->reason ? st->reason : "unreadable",
			      missing ? "; reads that need this part fail" : "");
		free(where);
	}
}
