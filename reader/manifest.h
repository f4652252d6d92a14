/* reader/manifest.h — the manifest of `ninfer-pack create` (man ninfer-pack(1),
 * MANIFEST FORMAT): the directory without offsets, sizes and files, plus one
 * byte source per object.
 *
 * Two steps, so that parsing never touches the filesystem (the fuzzer runs
 * nf_manifest_parse alone):
 *   1. nf_manifest_parse(): the text -> directory object, object records
 *      (without source/source_offset/bytes) and NF_SRC_FILE write objects
 *      whose paths are resolved against base_dir (string work only).
 *   2. nf_manifest_stat_sources(): stat() every source (a regular file is
 *      required) and, for each object without "bytes", set bytes = file
 *      length - source_offset.
 * Then nf_write_artifact(path, m.directory, m.objects, m.nobjects, ...).
 *
 * Findings (severity error) carry these codes:
 *   MANIFEST_JSON            not JSON (where = "LINE:COLUMN", jansson's text)
 *   MANIFEST_NOT_OBJECT      the top level is not an object
 *   MANIFEST_UNKNOWN_MEMBER  a top-level member other than components,
 *                            objects, bindings, uses, metadata, provenance
 *   MANIFEST_OBJECTS         "objects" missing, not an array, or empty
 *   MANIFEST_SOURCE          an object is not a JSON object or has no
 *                            non-empty string "source"
 *   MANIFEST_SOURCE_RANGE    source_offset not a non-negative integer or
 *                            bytes not a positive integer
 *   MANIFEST_SOURCE_EMPTY    (step 2) the source holds no bytes after
 *                            source_offset
 *   MANIFEST_SOURCE_STAT     (step 2, operational) stat() of a source failed
 *   MANIFEST_SOURCE_TYPE     (step 2) a source is not a regular file (a
 *                            directory, FIFO, device, socket)
 *   MANIFEST_NOMEM           (operational) out of memory
 * Object findings have where = "objects[I] ID" (ID empty when absent). */
#ifndef NF_READER_MANIFEST_H
#define NF_READER_MANIFEST_H

#include <jansson.h>
#include <stddef.h>

#include "report/report.h"
#include "reader/writer.h"

struct nf_manifest {
	json_t *directory;                /* components, bindings, uses, [metadata], [provenance] */
	struct nf_write_object *objects;  /* nobjects entries, source NF_SRC_FILE */
	size_t nobjects;
	/* private: owners of what objects[] borrows */
	json_t *records;                  /* array of the object records */
	char **paths;                     /* resolved source paths */
	unsigned char *bytes_given;       /* 1 where the manifest gave "bytes" */
};

/* Parse `len` bytes of `text` (need not be NUL-terminated).  Relative
 * sources are joined to base_dir ("." when NULL); absolute ones are kept.
 * Every finding goes to `report`.  Returns 0 with *m filled; -EINVAL when
 * the manifest is invalid (findings say why); -ENOMEM.  On failure *m is
 * left empty (nf_manifest_free is still safe to call). */
int nf_manifest_parse(const char *text, size_t len, const char *base_dir, struct nf_manifest *m,
		      struct nf_report *report);

/* Check that every source is a regular file (MANIFEST_SOURCE_TYPE) and
 * fill objects[i].bytes for the objects whose manifest gave no "bytes",
 * from the source's length.  Returns 0; a negative errno from stat()
 * (MANIFEST_SOURCE_STAT, operational); or -EINVAL (MANIFEST_SOURCE_TYPE,
 * MANIFEST_SOURCE_EMPTY).
 * Stops at the first failure. */
int nf_manifest_stat_sources(struct nf_manifest *m, struct nf_report *report);

void nf_manifest_free(struct nf_manifest *m);

#endif
