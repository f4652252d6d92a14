/* reader/files.c — the files of a set behind one interface (seed §2.1,
 * §3.2, §3.3, §11.1), whatever their source.
 *
 * What a file is known to be (unchecked, present, missing, bad: its
 * finding code and reason) is kept here, under the artifact's mutex, and
 * set by the sources (source.h): the local one opens files beneath the
 * entry's directory, the remote one fetches them from URLs beside the
 * entry's.  Both check a part's first 32 bytes and its length by the same
 * rules (nf_part_check_header), mark a file that changed since it was
 * first seen the same way (nf_file_mark_changed: contract §5), and leave
 * the findings to nf_artifact_check_files.  The public calls of
 * artifact.h check the index and hand over to the set's source. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "reader/internal.h"
#include "reader/source.h"

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

const char *nf_file_name(const struct nf_artifact *a, uint32_t i)
{
	return i < a->nfiles && a->files[i].path ? a->files[i].path : a->entry_name;
}

void nf_file_set(struct nf_artifact *a, uint32_t i, enum nf_file_status s, const char *code,
		 const char *fmt, ...)
{
	struct nf_file_state *st = &a->priv->files[i];
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

bool nf_part_check_header(struct nf_artifact *a, uint32_t i, const uint8_t *h, uint64_t size)
{
	const struct nf_file *f = &a->files[i];
	if (!h || size < 32) {
		nf_file_set(a, i, NF_FILE_BAD, "FILE_BAD_LENGTH", "seed §3.2: a part is 4096 + "
			    "payload_bytes = %" PRIu64 " bytes; %s has %" PRIu64 ", not even its "
			    "32-byte header", f->file_bytes, f->path, size);
		return false;
	}
	if (memcmp(h, part_magic, 8) != 0) {
		nf_file_set(a, i, NF_FILE_BAD, "FILE_BAD_MAGIC", "seed §3.2: a part starts with 4e 49 "
			    "4e 50 52 54 00 03; %s starts with %02x %02x %02x %02x %02x %02x %02x "
			    "%02x", f->path, h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]);
		return false;
	}
	uint64_t index = le64(h + 8);
	if (index != i) {
		nf_file_set(a, i, NF_FILE_BAD, "FILE_BAD_INDEX", "seed §3.2: part_index must be its "
			    "files index %u; %s says %" PRIu64, i, f->path, index);
		return false;
	}
	if (memcmp(h + 16, a->artifact_id, NF_ID_BYTES) != 0) {
		char hex[33];
		for (int k = 0; k < 16; k++)
			sprintf(hex + 2 * k, "%02x", h[16 + k]);
		nf_file_set(a, i, NF_FILE_BAD, "FILE_ARTIFACT_ID_MISMATCH", "seed §3.2: a part carries "
			    "the entry's artifact_id %s; %s carries %s (another artifact's part)",
			    a->artifact_id_hex, f->path, hex);
		return false;
	}
	if (size != f->file_bytes) {
		nf_file_set(a, i, NF_FILE_BAD, "FILE_BAD_LENGTH", "seed §3.2: a part is 4096 + "
			    "payload_bytes %" PRIu64 " = %" PRIu64 " bytes; %s has %" PRIu64,
			    f->payload_bytes, f->file_bytes, f->path, size);
		return false;
	}
	a->priv->files[i].status = NF_FILE_PRESENT;
	return true;
}

bool nf_file_mark_changed(struct nf_artifact *a, uint32_t i, const char *what)
{
	struct nf_artifact_private *p = a->priv;
	if (p->files[i].status != NF_FILE_PRESENT)
		return false;
	nf_file_set(a, i, NF_FILE_BAD, "FILE_CHANGED", "%s: %s since it was first opened: "
		    "contract §5, it is treated like a replaced file and reads that need it fail",
		    nf_file_name(a, i), what ? what : "changed");
	p->changes++;
	return true;
}

void nf_file_tell_hook(struct nf_artifact *a, uint32_t i)
{
	struct nf_artifact_private *p = a->priv;
	pthread_mutex_lock(&p->lock);
	void (*hook)(void *, uint32_t) = p->change_hook;
	void *arg = p->change_arg;
	pthread_mutex_unlock(&p->lock);
	if (hook)
		hook(arg, i);
}

/* ---- the interface ------------------------------------------------------- */

static bool valid(const struct nf_artifact *a, uint32_t i)
{
	return a && i < a->nfiles && a->priv->files;
}

int nf_file_acquire(struct nf_artifact *a, uint32_t i)
{
	return valid(a, i) ? a->priv->src->acquire(a, i) : -EINVAL;
}

void nf_file_release(struct nf_artifact *a, uint32_t i)
{
	if (valid(a, i))
		a->priv->src->release(a, i);
}

int nf_file_verify(struct nf_artifact *a, uint32_t i)
{
	return valid(a, i) ? a->priv->src->verify(a, i) : -EINVAL;
}

int nf_file_pread(struct nf_artifact *a, uint32_t i, void *buf, uint64_t len, uint64_t off)
{
	uint64_t end;
	if (!a || (!valid(a, i) && !(i == 0 && !a->priv->files)))
		return -EINVAL;
	if ((len && !buf) || __builtin_add_overflow(off, len, &end) || end > (uint64_t)INT64_MAX)
		return -EINVAL;
	if (len == 0)
		return 0;
	return a->priv->src->pread(a, i, buf, len, off);
}

int nf_file_fingerprint(const struct nf_artifact *a, uint32_t i, struct nf_file_fingerprint *out)
{
	return valid(a, i) ? a->priv->src->fingerprint(a, i, out) : -EINVAL;
}

const char *nf_file_url(const struct nf_artifact *a, uint32_t i)
{
	return valid(a, i) ? a->priv->src->url(a, i) : NULL;
}

struct nf_remote *nf_artifact_remote(const struct nf_artifact *a)
{
	return a && a->priv->src == &nf_source_remote ? nf_source_remote_set(a) : NULL;
}

enum nf_file_status nf_file_status(const struct nf_artifact *a, uint32_t i, const char **reason)
{
	if (reason)
		*reason = NULL;
	if (!valid(a, i))
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
	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&p->lock);
	p->src->stats(a, out);
	out->changes = p->changes;
	pthread_mutex_unlock(&p->lock);
}

void nf_files_set_open_max(struct nf_artifact *a, uint32_t n)
{
	struct nf_artifact_private *p = a->priv;
	pthread_mutex_lock(&p->lock);
	p->src->set_open_max(a, n);
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

static bool fd_limit_error(int e)
{
	return e == EMFILE || e == ENFILE;
}

void nf_artifact_check_files(struct nf_artifact *a, struct nf_report *report)
{
	if (!a || !a->priv->files)
		return;
	if (a->priv->src->check_all)
		a->priv->src->check_all(a);
	uint32_t limited = 0, last_limited = 0;
	for (uint32_t i = 1; i < a->nfiles; i++) {
		int rc = nf_file_verify(a, i);
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
			struct nf_files_stats fst;
			getrlimit(RLIMIT_NOFILE, &rl);
			nf_files_stats(a, &fst);
			nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "FILE_OPEN_LIMIT", where,
				      "%s: cannot be opened now: %s (descriptor limit %llu, %u parts "
				      "open): a limit of this run, not a problem of the file",
				      a->files[i].path, strerror(-rc), (unsigned long long)rl.rlim_cur,
				      fst.open);
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
