/* fs/ninfer/ninfer.h — the NInfer family's state and its parts (family.c,
 * uses.c, xattr.c, read.c), shared within fs/ninfer/ only.
 *
 * The state is made by the family's open (from the artifact the reader
 * opened and validated) and is immutable once the tree is built, except
 * the open state of uses.json (uses_lock) and the reader's files, which
 * guard themselves. */
#ifndef NF_FS_NINFER_NINFER_H
#define NF_FS_NINFER_NINFER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "codecs/codec.h"
#include "fs/family.h"
#include "fs/ninfer/safetensors.h"
#include "fs/ninfer/views.h"
#include "fs/tree.h"
#include "reader/artifact.h"
#include "report/report.h"

/* -o decoded_dtype=, -o max_json= */
struct nf_ninfer_opts {
	char *decoded_dtype;
	enum nf_dtype dtype;
	char *max_json;
	uint64_t max_json_bytes;
};

struct nf_ninfer {
	struct nf_fs *fs;                 /* the daemon, for nf_log */
	const struct nf_ninfer_opts *opt;
	const char *entry;                /* the source, as given */
	struct nf_artifact *a;
	struct nf_report report;
	char *validation_json;
	const char **names, **paths;      /* per file: display name, local path */
	char **owned_paths;               /* the paths made here (parts) */
	struct nf_extent *empty;          /* the extent table of an undefined
					     address space (lenient), or NULL */
	const struct nf_tree *tree;       /* the tree it built (the adapter's) */
	struct nf_safetensors st;         /* decoded/model.safetensors */
	bool has_st;
	uint64_t uses_bytes;              /* uses.json's size, when a->uses_json is NULL */
	/* uses.json made on open (uses.c) */
	pthread_mutex_t uses_lock;
	bool uses_lock_made;
	char *uses_doc;                   /* shared while uses_refs > 0 */
	size_t uses_refs;
};

/* uses.c: uses.json, one copy shared by every open (made at the first,
 * freed at the last release; `size` is its size counted at mount).  0 or
 * -errno (-EIO: the entry was cut or changed since the mount). */
int nf_uses_acquire(struct nf_ninfer *n, uint64_t size, const char **doc);
void nf_uses_release(struct nf_ninfer *n);

/* xattr.c: user.ninfer.* of contract §3. */
int nf_ninfer_xattr_get(void *state, uint32_t node, const char *name, char **value, size_t *len);
int nf_ninfer_xattr_list(void *state, uint32_t node, char **list, size_t *len);

/* read.c: reads of DECODED and SAFETENSORS views, and which files the
 * family kinds show. */
int nf_ninfer_read(void *state, struct nf_rd *rd, uint32_t node, const struct nf_view *v,
		   uint64_t off, size_t len, char *out);
bool nf_ninfer_touches(void *state, uint32_t node, const struct nf_view *v, uint32_t file);
size_t nf_ninfer_view_spans(void *state, uint32_t node, const struct nf_view *v,
			    struct nf_piece *spans, size_t cap);

#endif
