/* reader/writer.h — writing an artifact set (seed §2.1, §2.3, §11.4).
 *
 * The caller describes the directory as a jansson object holding
 * `components`, `bindings`, `uses` and optionally `metadata` and
 * `provenance`, plus an ordered list of objects with their record fields
 * and where their encoded bytes come from.  The writer lays the objects out
 * (tensors at align_up(prev_end, 256), resources at prev_end — codecs §7),
 * fills in offset/bytes, computes the files table for max_file_bytes,
 * reserves JSON space with trailing spaces, writes every file to a
 * temporary name beside the target, validates the result with the reader,
 * publishes parts first and the entry last, never replaces an existing file,
 * and removes its temporaries on any failure (and those of killed earlier
 * runs for the same target: reader/writer_tmp.h). */
#ifndef NF_READER_WRITER_H
#define NF_READER_WRITER_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "report/report.h"

/* NF_SRC_ARTIFACT: the bytes are the logical
 * payload range [src_offset, src_offset+bytes) of an open artifact, read
 * through its range map (objects may straddle its files); used by
 * `ninfer-pack reshard`. */
enum nf_source_kind { NF_SRC_MEMORY = 0, NF_SRC_FILE, NF_SRC_ARTIFACT };

struct nf_artifact;

struct nf_write_object {
	/* The object record without offset/bytes (id, kind, shape, format,
	 * layout, [divisors] for tensors; id, kind, encoding for resources).
	 * Borrowed. */
	json_t *record;
	enum nf_source_kind source;
	const void *data;        /* NF_SRC_MEMORY */
	const char *path;        /* NF_SRC_FILE: bytes [src_offset, src_offset+bytes) */
	uint64_t src_offset;     /* NF_SRC_FILE: file offset; NF_SRC_ARTIFACT: logical offset */
	uint64_t bytes;          /* encoded size */
	struct nf_artifact *artifact; /* NF_SRC_ARTIFACT (added): borrowed, open */
};

struct nf_write_opts {
	uint64_t max_file_bytes; /* 0: one file, no split (seed §2.3) */
	bool allow_unknown;      /* accept formats/layouts the registry does not know */
	void (*progress)(void *arg, uint64_t done, uint64_t total); /* may be NULL */
	void *progress_arg;
	/* When non-NULL and it becomes nonzero (e.g. from a signal handler),
	 * the writer stops at the next chunk, removes everything it wrote and
	 * returns -ECANCELED. */
	const volatile sig_atomic_t *cancel;
};

/* Write the set whose entry is `entry_path`.  Returns 0, or a negative
 * errno with findings in `report` naming what was wrong (a record, a
 * limit too small for the headers, an existing target, an I/O error). */
int nf_write_artifact(const char *entry_path, json_t *directory,
		      const struct nf_write_object *objects, size_t nobjects,
		      const struct nf_write_opts *opts, struct nf_report *report);

/* §2.3 capacities for a limit; -EINVAL when the limit cannot hold the
 * headers (both capacities must be positive). */
int nf_split_capacities(uint64_t limit, uint64_t entry_payload_start,
			uint64_t *entry_capacity, uint64_t *part_capacity);

/* "is a directory", "is a FIFO", ... for st_mode (messages about a source
 * that is not a regular file). */
const char *nf_file_kind(mode_t mode);

/* "<entry name>.part-NNNN" (at least four digits) into buf. */
int nf_part_name(char *buf, size_t size, const char *entry_name, uint64_t index);

/* The layout and files table the writer would
 * produce for the entry file name `entry_name` (its length matters: part
 * names are in the JSON), without writing anything: object offsets (tensors at
 * align_up(prev_end,256), resources at prev_end), payload_bytes,
 * json_bytes (reserved, spaces included), entry_payload_start and the
 * files table.  `offsets` (nobjects entries) may be NULL.  The caller
 * frees *files_out with free().  Findings as nf_write_artifact. */
struct nf_write_plan_file {
	uint64_t payload_bytes;
	uint64_t logical_start;
};
int nf_write_plan(const char *entry_name, json_t *directory, const struct nf_write_object *objects, size_t nobjects,
		  const struct nf_write_opts *opts, struct nf_report *report,
		  uint64_t *offsets, uint64_t *payload_bytes, uint64_t *json_bytes,
		  struct nf_write_plan_file **files_out, size_t *nfiles_out);

#endif
