/* fs/files_doc.c — files.json: the files table with each file's status now.
 *
 * The status of a file changes while mounted when it is found changed or
 * removed (contract §5, issue 11), so files.json is not made once at mount:
 * each open first compares every present file with the identity it had
 * when first opened (the family's verify: for NInfer one fstat, or a
 * reopen of a part the cache closed), and then gets the current document
 * (the family's files_json).  The document is rebuilt only when the
 * family's count of changed files (or, for remote files, the requests and
 * cache hits files.json counts) moved since it was made, and shared by
 * every open of that state (refcounted), so its memory does not grow with
 * the number of opens; a version no open holds any more is freed, and
 * unmount frees whatever is left (an open the kernel never released
 * included).  Served with direct I/O, st_size 0, like stats. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fs/context.h"

struct nf_files_doc {
	struct nf_files_doc *next;   /* every version alive */
	uint64_t changes;            /* the set's stats().changes it was made at */
	uint64_t activity;           /* ... and its stats().activity */
	unsigned refs;               /* opens holding it, +1 while current */
	size_t len;
	char *text;
};

struct nf_files_docs {
	pthread_mutex_t lock;
	struct nf_files_doc *current, *all;
};

int nf_files_doc_init(struct nf_fs *fs)
{
	fs->files_docs = calloc(1, sizeof *fs->files_docs);
	if (fs->files_docs == NULL)
		return -ENOMEM;
	pthread_mutex_init(&fs->files_docs->lock, NULL);
	return 0;
}

static void doc_free(struct nf_files_docs *ds, struct nf_files_doc *d)
{
	for (struct nf_files_doc **p = &ds->all; *p; p = &(*p)->next)
		if (*p == d) {
			*p = d->next;
			break;
		}
	free(d->text);
	free(d);
}

static void doc_unref(struct nf_files_docs *ds, struct nf_files_doc *d)
{
	if (--d->refs == 0)
		doc_free(ds, d);
}

/* The current version, made anew when the files' state moved (lock held). */
static struct nf_files_doc *current(struct nf_fs *fs, const struct nf_set_stats *st)
{
	struct nf_files_docs *ds = fs->files_docs;
	if (ds->current && ds->current->changes == st->changes &&
	    ds->current->activity == st->activity)
		return ds->current;
	struct nf_files_doc *d = calloc(1, sizeof *d);
	char *text = d ? fs->set.ops->files_json(fs->set.arg) : NULL;
	if (text == NULL) {
		free(d);
		return NULL;
	}
	d->text = text;
	d->len = strlen(text);
	d->changes = st->changes;
	d->activity = st->activity;
	d->refs = 1;
	d->next = ds->all;
	ds->all = d;
	if (ds->current)
		doc_unref(ds, ds->current);
	ds->current = d;
	return d;
}

struct nf_files_doc *nf_files_doc_open(struct nf_fs *fs, const char **text, size_t *len)
{
	struct nf_files_docs *ds = fs->files_docs;
	const struct nf_set *set = &fs->set;
	struct nf_set_stats st;

	if (ds == NULL)
		return NULL;
	for (uint32_t i = 0; i < set->n; i++)
		if (set->ops->status(set->arg, i, NULL) == NF_FSTATUS_PRESENT)
			set->ops->verify(set->arg, i);   /* a change marks it bad */
	set->ops->stats(set->arg, &st);
	pthread_mutex_lock(&ds->lock);
	struct nf_files_doc *d = current(fs, &st);
	if (d) {
		d->refs++;
		*text = d->text;
		*len = d->len;
	}
	pthread_mutex_unlock(&ds->lock);
	return d;
}

const char *nf_files_doc_text(const struct nf_files_doc *d, size_t *len)
{
	*len = d ? d->len : 0;
	return d ? d->text : "";
}

void nf_files_doc_close(struct nf_fs *fs, struct nf_files_doc *d)
{
	struct nf_files_docs *ds = fs->files_docs;

	if (ds == NULL || d == NULL)
		return;
	pthread_mutex_lock(&ds->lock);
	doc_unref(ds, d);
	pthread_mutex_unlock(&ds->lock);
}

void nf_files_doc_free_all(struct nf_fs *fs)
{
	struct nf_files_docs *ds = fs->files_docs;

	if (ds == NULL)
		return;
	while (ds->all)
		doc_free(ds, ds->all);
	pthread_mutex_destroy(&ds->lock);
	free(ds);
	fs->files_docs = NULL;
}
