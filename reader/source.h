/* reader/source.h — where the files of a set come from (never installed).
 *
 * A set's files are read through one narrow interface with two
 * implementations, chosen once at open:
 *
 *   source_local.c   a local directory: the entry opened as given, parts
 *                    with openat2(RESOLVE_BENEATH) under its directory, a
 *                    bounded cache of descriptors and a fingerprint per
 *                    file (issue 11);
 *   source_remote.c  a remote set (remote/remote.h): the entry's URL and
 *                    the parts' URLs beside it, HTTP range GETs, the
 *                    ETag of each file recorded by the engine (issue 14).
 *
 * What both share lives outside them and reaches them only through these
 * ops: the file states, codes and reasons and the part-header rules of seed
 * §3.2 (files.c), the entry-header rules of seed §3.1 (header.c), the
 * findings of nf_artifact_check_files (files.c), the payload and deep reads
 * (payload.c, deep.c, which read with nf_file_pread).
 *
 * Locking: priv->lock guards the generic file states (struct
 * nf_file_state); the local source also guards its descriptor cache with
 * it, the remote source never holds it across a request. */
#ifndef NF_READER_SOURCE_H
#define NF_READER_SOURCE_H

#include <stdint.h>

#include "reader/artifact.h"
#include "report/report.h"

struct nf_source_ops {
	const char *kind;   /* "local", "remote" */
	/* Open the entry `entry` (as the caller gave it): set entry_path and
	 * entry_name, read its header and check it (nf_entry_header), and make
	 * a->json_text; *size is the entry's length.  On failure: a finding
	 * and -errno (the caller frees the artifact, calling close). */
	int (*open)(struct nf_artifact *a, const char *entry, const struct nf_open_opts *o,
		    struct nf_report *r, uint64_t *size);
	/* The model is built and the files table final (priv->files may be
	 * NULL when there is none): get ready to serve its files.  0, or
	 * -errno with a finding. */
	int (*files_ready)(struct nf_artifact *a, struct nf_report *r);
	/* Check every part not checked yet, where doing them together is
	 * cheaper (remote: the part headers fetched in parallel).  May be
	 * NULL. */
	void (*check_all)(struct nf_artifact *a);
	/* The public calls of artifact.h, for a valid index (files.c checks
	 * it): nf_file_acquire, release, verify, fingerprint, pread. */
	int (*acquire)(struct nf_artifact *a, uint32_t i);
	void (*release)(struct nf_artifact *a, uint32_t i);
	int (*verify)(struct nf_artifact *a, uint32_t i);
	int (*fingerprint)(const struct nf_artifact *a, uint32_t i, struct nf_file_fingerprint *out);
	/* All of [off, off+len) of file i.  i == 0 is also valid when the
	 * set has no usable files table (the entry itself is still there). */
	int (*pread)(struct nf_artifact *a, uint32_t i, void *buf, uint64_t len, uint64_t off);
	/* The source's part of nf_files_stats (open, open_max, evictions,
	 * reopens) and nf_files_set_open_max. */
	void (*stats)(const struct nf_artifact *a, struct nf_files_stats *out);
	void (*set_open_max)(struct nf_artifact *a, uint32_t n);
	/* Redacted URL of file i, or NULL (local sets; parts never requested). */
	const char *(*url)(const struct nf_artifact *a, uint32_t i);
	/* Free what open made (descriptors, the remote set).  Also after a
	 * failed open. */
	void (*close)(struct nf_artifact *a);
};

extern const struct nf_source_ops nf_source_local;
extern const struct nf_source_ops nf_source_remote;

/* The remote source's handle (NULL for a local set). */
struct nf_remote *nf_source_remote_set(const struct nf_artifact *a);

#endif
