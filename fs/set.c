/* fs/set.c — the adapter's side of the backing files (set.h): per-file
 * flags, and the one place a segment read is counted and its failure
 * logged. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "fs/context.h"

int nf_set_init(struct nf_fs *fs)
{
	fs->files = calloc(fs->set.n ? fs->set.n : 1, sizeof *fs->files);
	return fs->files ? 0 : -ENOMEM;
}

void nf_set_free(struct nf_fs *fs)
{
	free(fs->files);
	fs->files = NULL;
}

const char *nf_fstatus_name(enum nf_fstatus s)
{
	switch (s) {
	case NF_FSTATUS_PRESENT: return "present";
	case NF_FSTATUS_MISSING: return "missing";
	case NF_FSTATUS_BAD: return "bad";
	default: return "unchecked";
	}
}

/* The first failure on file f, logged once a file (a descriptor limit
 * once a mount: it is a limit of this run, not of the file). */
static void log_failure(struct nf_fs *fs, uint32_t f, int result)
{
	const char *name = fs->set.names[f];

	if (result == -EMFILE || result == -ENFILE) {
		if (!atomic_exchange(&fs->limit_logged, true))
			nf_log(fs, LOG_ERR, "cannot open %s (files[%u]) now: %s, every descriptor "
			       "is held by reads in flight; that read fails with EIO (raise "
			       "ulimit -n)", name, f, strerror(-result));
		return;
	}
	if (atomic_exchange(&fs->files[f].logged, true))
		return;
	const char *reason = NULL;
	enum nf_fstatus st = fs->set.ops->status(fs->set.arg, f, &reason);
	/* the family's reason names the file and why (for a URL: its HTTP
	 * status, issue 14), for a missing file as for a bad one */
	if ((st == NF_FSTATUS_BAD || st == NF_FSTATUS_MISSING) && reason)
		nf_log(fs, LOG_ERR, "cannot read files[%u]: %s; reads touching it fail with EIO", f,
		       reason);
	else
		nf_log(fs, LOG_ERR, "cannot read %s (files[%u]): %s; reads touching it fail with "
		       "EIO", name, f, result == -EBADF || result == -ENOENT
					     ? "file missing or bad" : strerror(-result));
}

void nf_set_account(struct nf_fs *fs, struct nf_counts *counts, const struct nf_io *ios, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t f = ios[i].file;
		struct nf_fcount *c;

		if (f >= fs->set.n || ios[i].result == -ECANCELED)
			continue;
		c = &counts->files[f];
		nf_count(&c->reads, 1);
		if (ios[i].result == 0) {
			nf_count(&c->bytes, ios[i].length);
			continue;
		}
		nf_count(&c->errors, 1);
		log_failure(fs, f, ios[i].result);
	}
}
