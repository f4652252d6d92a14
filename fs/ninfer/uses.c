/* fs/ninfer/uses.c — uses.json made on open (issue 11, item 4).
 *
 * When the reader left uses.json to nf_uses_json() (every set whose
 * directory was read record by record), it is made at the first open,
 * shared by every open and freed at the last close: memory is one copy
 * however many clients hold it (it was one copy per open: 40 opens of a
 * 1M-use set took the daemon to 2.5 GB).  What the kernel never released
 * (a signal ended the session) is freed with the family's state. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "fs/ninfer/ninfer.h"

int nf_uses_acquire(struct nf_ninfer *n, uint64_t size, const char **doc)
{
	int rc = 0;

	pthread_mutex_lock(&n->uses_lock);
	if (n->uses_refs == 0) {
		errno = 0;
		char *text = nf_uses_json(n->a);
		if (text == NULL) {
			rc = errno == EIO ? -EIO : -ENOMEM; /* EIO: the entry was cut */
		} else if (strlen(text) != size) {
			/* cannot happen: the text and the model never change */
			nf_log(n->fs, LOG_ERR, "uses.json: %zu bytes, not %" PRIu64, strlen(text),
			       size);
			free(text);
			rc = -EIO;
		} else {
			n->uses_doc = text;
		}
	}
	if (rc == 0) {
		n->uses_refs++;
		*doc = n->uses_doc;
	}
	pthread_mutex_unlock(&n->uses_lock);
	return rc;
}

void nf_uses_release(struct nf_ninfer *n)
{
	pthread_mutex_lock(&n->uses_lock);
	if (n->uses_refs > 0 && --n->uses_refs == 0) {
		free(n->uses_doc);
		n->uses_doc = NULL;
	}
	pthread_mutex_unlock(&n->uses_lock);
}
