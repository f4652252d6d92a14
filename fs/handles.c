/* fs/handles.c — the open state of generated files (issue 11, items 4, 8).
 *
 * Two files are made when opened rather than at mount:
 *   uses.json (when the reader left it to nf_uses_json(): every set whose
 *     directory was read record by record): one copy, made at the first
 *     open, shared by every open and freed at the last close.  Memory is
 *     one copy however many clients hold it (it was one copy per open: 40
 *     opens of a 1M-use set took the daemon to 2.5 GB).
 *   stats: one snapshot per open (it is a snapshot by definition), a few
 *     hundred bytes plus ~150 per file of the set; all the snapshots held
 *     at once are capped at NF_SNAP_BYTES_MAX, beyond which an open fails
 *     with EMFILE.
 * Both are listed here, so that what the kernel never releases (a signal
 * ends the session while a client holds the file: no RELEASE comes) is
 * freed at exit.  The other generated files cost nothing per open:
 * validation.json, files.json and the config documents are one copy made
 * at mount; decoded/model.safetensors's header is built at mount; and
 * artifact.json is read from the entry at every read. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "fs/context.h"

int nf_handles_init(struct nf_fs *fs)
{
	if (pthread_mutex_init(&fs->uses_lock, NULL) != 0)
		return -ENOMEM;
	if (pthread_mutex_init(&fs->snap_lock, NULL) != 0) {
		pthread_mutex_destroy(&fs->uses_lock);
		return -ENOMEM;
	}
	fs->handles_made = true;
	return 0;
}

int nf_uses_acquire(struct nf_fs *fs, uint64_t size, const char **doc)
{
	int rc = 0;

	pthread_mutex_lock(&fs->uses_lock);
	if (fs->uses_refs == 0) {
		errno = 0;
		char *text = nf_uses_json(fs->a);
		if (text == NULL) {
			rc = errno == EIO ? -EIO : -ENOMEM; /* EIO: the entry was cut */
		} else if (strlen(text) != size) {
			/* cannot happen: the text and the model never change */
			nf_log(fs, LOG_ERR, "uses.json: %zu bytes, not %" PRIu64, strlen(text),
			       size);
			free(text);
			rc = -EIO;
		} else {
			fs->uses_doc = text;
		}
	}
	if (rc == 0) {
		fs->uses_refs++;
		*doc = fs->uses_doc;
	}
	pthread_mutex_unlock(&fs->uses_lock);
	return rc;
}

void nf_uses_release(struct nf_fs *fs)
{
	pthread_mutex_lock(&fs->uses_lock);
	if (fs->uses_refs > 0 && --fs->uses_refs == 0) {
		free(fs->uses_doc);
		fs->uses_doc = NULL;
	}
	pthread_mutex_unlock(&fs->uses_lock);
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
	free(fs->uses_doc);
	fs->uses_doc = NULL;
	fs->uses_refs = 0;
	pthread_mutex_destroy(&fs->snap_lock);
	pthread_mutex_destroy(&fs->uses_lock);
	fs->handles_made = false;
}
