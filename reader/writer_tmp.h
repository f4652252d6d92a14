/* reader/writer_tmp.h — the writer's temporary directory (writer.c phase 3),
 * private to the writer.
 *
 * The writer validates the set it wrote with the reader before publishing,
 * and the reader opens parts by name beside the entry, so the files need
 * names until then: an O_TMPFILE linked at publish would not do.  They go
 * to a directory .NAME.tmp-XXXXXX beside the target instead, which a
 * SIGKILL leaves behind.  So the directory holds an owner file, .owner,
 * with the writer's pid, flock()ed by the writer for as long as the
 * directory exists: a later run for the same target that can take the lock
 * knows the owner is gone and removes the directory (issue 11); while its
 * writer lives the lock is held and the directory is never touched. */
#ifndef NF_READER_WRITER_TMP_H
#define NF_READER_WRITER_TMP_H

#include "report/report.h"

struct nf_write_tmp {
	char *path;   /* dirpath/.NAME.tmp-XXXXXX, malloc'd; NULL until made */
	int fd;       /* O_DIRECTORY of it */
	int lockfd;   /* its .owner, flock(LOCK_EX) held */
};

/* Remove every stale .NAME.tmp-XXXXXX in dirfd (dirpath for messages):
 * one whose .owner holds a pid and can be locked.  Each removal is an info
 * finding (WRITE_TMP_REMOVED), a failed one a warning (WRITE_TMP_LEFT). */
void nf_write_tmp_sweep(int dirfd, const char *dirpath, const char *name, struct nf_report *rep);
/* Make and lock a fresh temporary directory for NAME in dirpath.
 * 0, or -errno with a WRITE_IO finding. */
int nf_write_tmp_make(struct nf_write_tmp *t, const char *dirpath, const char *name,
		      struct nf_report *rep);
/* Remove it (it must hold nothing but .owner by now) and drop the lock.
 * 0 or -errno (the directory then stays, locked no more). */
int nf_write_tmp_remove(struct nf_write_tmp *t);

#define NF_WRITE_TMP_INIT {NULL, -1, -1}

#endif
