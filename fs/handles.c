/* fs/handles.c — the open state of generated files (issue 11, items 4, 8).
 *
 * stats is made when opened rather than at mount: one snapshot per open
 * (it is a snapshot by definition), a few hundred bytes plus ~150 per file
 * of the set; all the snapshots held at once are capped at
 * NF_SNAP_BYTES_MAX, beyond which an open fails with EMFILE.  They are
 * listed here, so that what the kernel never releases (a signal ends the
 * session while a client holds the file: no RELEASE comes) is freed at
 * exit.  files.json's shared versions are fs/files_doc.c's; a family's
 * documents made on open are the family's (NInfer: uses.json,
 * fs/ninfer/uses.c); the other generated files cost nothing per open. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/context.h"

int nf_handles_init(struct nf_fs *fs)
{
	if (pthread_mutex_init(&fs->snap_lock, NULL) != 0)
		return -ENOMEM;
	fs->handles_made = true;
	return 0;
}

int nf_snap_open(struct nf_fs *fs, struct nf_snap **out)
{
	char *text = nf_stats_json(fs);
	size_t len;
	struct nf_snap *s;
	int rc = 0;

	if (text == NULL)
		return -ENOMEM;
	len = strlen(text);
	s = malloc(sizeof *s + len + 1);
	if (s == NULL) {
		free(text);
		return -ENOMEM;
	}
	memcpy(s->text, text, len + 1);
	free(text);
	s->len = len;
	s->prev = NULL;
	pthread_mutex_lock(&fs->snap_lock);
	if (fs->snap_bytes + len > NF_SNAP_BYTES_MAX) {
		rc = -EMFILE;
	} else {
		fs->snap_bytes += len;
		s->next = fs->snaps;
		if (fs->snaps)
			fs->snaps->prev = s;
		fs->snaps = s;
	}
	pthread_mutex_unlock(&fs->snap_lock);
	if (rc < 0) {
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void nf_snap_close(struct nf_fs *fs, struct nf_snap *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&fs->snap_lock);
	if (s->prev)
		s->prev->next = s->next;
	else
		fs->snaps = s->next;
	if (s->next)
		s->next->prev = s->prev;
	fs->snap_bytes -= s->len;
	pthread_mutex_unlock(&fs->snap_lock);
	free(s);
}

void nf_handles_free(struct nf_fs *fs)
{
	if (!fs->handles_made)
		return;
	/* the session is over: no other thread runs */
	while (fs->snaps)
		nf_snap_close(fs, fs->snaps);
	pthread_mutex_destroy(&fs->snap_lock);
	fs->handles_made = false;
}
