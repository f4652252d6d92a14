/* reader/artifact.h — an NInfer v3 artifact set as data.
 *
 * nf_artifact_open() reads the entry header and the JSON directory, checks
 * every rule the container spec (../shared/seeds/000_*, cited as "seed §N")
 * gives a generic reader, records findings in a report, and builds an
 * immutable model.  After open, the model (names, shapes, records) never
 * changes; only the per-file open state (nf_file_acquire & co.) is mutable,
 * and it is guarded inside the artifact, so any number of threads may read
 * the model and call nf_file_acquire / nf_range_map concurrently.
 *
 * The reader never includes FUSE headers: ninfer-check, ninfer-pack, the
 * tests and the daemon all use exactly this code. */
#ifndef NF_READER_ARTIFACT_H
#define NF_READER_ARTIFACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "codecs/codec.h"
#include "io/extent.h"
#include "report/report.h"

#define NF_ENTRY_HEADER_BYTES 32
#define NF_PART_PAYLOAD_START 4096
#define NF_ID_BYTES 16

enum nf_obj_kind { NF_OBJ_TENSOR = 0, NF_OBJ_RESOURCE };

struct nf_object {
	const char *id;
	enum nf_obj_kind kind;
	const char *format;    /* tensor: format name as stored; resource: NULL */
	const char *layout;    /* tensor: layout name; resource: its encoding */
	uint32_t rank;
	const uint64_t *shape; /* rank entries; resources: rank 0, shape NULL */
	uint64_t elements;     /* tensors: elements(shape); resources: bytes */
	uint64_t offset;       /* logical payload offset (seed §2.2) */
	uint64_t bytes;
	uint64_t divisors;     /* 1 when absent */
	/* Interpretation (object scope, contract §5): codec_status is
	 * NF_CODEC_OK and size_ok is true when the codec registry knows the pair,
	 * the shape fits it and `bytes` equals the encoded size.  Then `geom` is
	 * valid.  Resources: codec_status OK, size_ok true, geom zeroed. */
	enum nf_codec_status codec_status;
	bool size_ok;
	struct nf_geometry geom;
	uint32_t index;        /* its index in the stored objects array (for messages;
				  differs from the model index when records were left out) */
};

/* One Part (seed §7.1): elements [begin, end) of a tensor object. */
struct nf_part {
	uint32_t object;       /* index into artifact->objects */
	uint64_t begin, end;
};

/* A Binding: either a whole object (whole=true, one part covering it) or a
 * list of parts.  Shape rule (contract §2): a whole binding has the object's
 * shape; a parts binding has [rows, K] when every part is whole rows of a
 * rank-2 parent with the same K, else [elements]. */
struct nf_binding {
	const char *name;      /* the full logical name; for an auxiliary, the role */
	bool whole;
	uint32_t nparts;
	const struct nf_part *parts;
	uint64_t elements;
	uint32_t rank;
	const uint64_t *shape;
	bool whole_rows;       /* parts binding made of whole rows of rank-2 parents with one K */
};

struct nf_use {
	const char *parameter;
	uint32_t binding;                  /* index of the parameter's binding */
	const char *input;
	const char *activation_policy;     /* NULL when absent */
	uint32_t naux;
	const struct nf_binding *aux;      /* name = the auxiliary role */
};

struct nf_resource_ref {
	const char *role;
	uint32_t object;
};

struct nf_component {
	const char *id;
	const char *config_json;     /* pretty-printed, newline-terminated */
	const char *target;          /* NULL when absent */
	const char *proposal_json;   /* pretty-printed, or NULL when absent */
	uint32_t nresources;
	const struct nf_resource_ref *resources;
};

enum nf_file_status { NF_FILE_UNCHECKED = 0, NF_FILE_PRESENT, NF_FILE_MISSING, NF_FILE_BAD };

struct nf_file {
	const char *path;        /* NULL for the entry (files[0]) */
	uint64_t payload_bytes;  /* B_i */
	uint64_t logical_start;  /* P_i */
	uint64_t data_offset;    /* entry_payload_start for the entry, 4096 for parts */
	uint64_t file_bytes;     /* the length the file must have */
};

struct nf_artifact_private;

struct nf_artifact {
	const char *entry_path;     /* as given (a URL: redacted, nf_remote_redact) */
	const char *entry_name;     /* basename */
	uint8_t artifact_id[NF_ID_BYTES];
	char artifact_id_hex[2 * NF_ID_BYTES + 1];
	uint64_t json_bytes;
	uint64_t entry_payload_start;
	uint64_t payload_bytes;
	const char *json_text;      /* exactly json_bytes bytes as stored, NUL appended;
				       NULL after nf_artifact_drop_json_text().  A
				       private read-only mapping of the entry: pages
				       are read when first touched (issue 11) */

	uint32_t nfiles;
	const struct nf_file *files;
	uint32_t nobjects;
	const struct nf_object *objects;     /* in stored (offset) order */
	uint32_t nbindings;
	const struct nf_binding *bindings;   /* in stored order */
	uint32_t nuses;
	const struct nf_use *uses;
	const char *uses_json;               /* the uses array, pretty-printed */
	uint32_t ncomponents;
	const struct nf_component *components;
	const char *metadata_json;           /* pretty; "{}\n" when absent */
	const char *provenance_json;

	/* false when the report holds a directory-scope error: the model then
	 * holds only the records that were consistent on their own (lenient). */
	bool directory_ok;

	struct nf_artifact_private *priv;
};

/* Open and validate.  Findings go to `report` (never NULL).
 * Returns 0 and *out when the header and JSON could be read and parsed (the
 * artifact may still have errors: see directory_ok and the report);
 * returns a negative errno and *out = NULL when not even that was possible
 * (the report then says why). */
int nf_artifact_open(const char *entry_path, struct nf_report *report, struct nf_artifact **out);
/* The same with options (NF_OPEN_* bits; 0 is nf_artifact_open()). */
#define NF_OPEN_LAZY_USES_JSON 1u  /* leave a->uses_json NULL when nf_uses_json()
				      can build it from the text (it is the
				      largest part of the model of a big set) */
#define NF_OPEN_REMOTE 2u          /* an entry that nf_remote_is_url() accepts
				      (http://, https://, s3://) is a remote set
				      (remote/remote.h, issue 14); without it
				      every entry is a local path, as before */
int nf_artifact_open_flags(const char *entry_path, unsigned flags, struct nf_report *report,
			   struct nf_artifact **out);
/* The same with every option.  max_json is the ceiling on json_bytes
 * (ninfer-check --max-json, ninferfs -o max_json): a larger claim is
 * refused before a byte of it is read (JSON_TOO_LARGE, operational); 0
 * means NF_DEFAULT_MAX_JSON.  4 GiB: the directory of a 1M-object set is
 * about 430 MB (bench/README.md), so the default leaves ten times that,
 * and bounds the address space the mapping of the JSON may take. */
#define NF_DEFAULT_MAX_JSON ((uint64_t)4 << 30)
struct nf_remote_opts;
struct nf_open_opts {
	unsigned flags;            /* NF_OPEN_* */
	uint64_t max_json;
	/* A remote set's engine options (nf_remote_opts_init, _set); NULL:
	 * the defaults.  It and its strings must outlive the artifact. */
	const struct nf_remote_opts *remote;
};
int nf_artifact_open_opts(const char *entry_path, const struct nf_open_opts *opts,
			  struct nf_report *report, struct nf_artifact **out);
void nf_artifact_close(struct nf_artifact *a);

/* Lookups, O(log n) or O(1). Return the index, or -1. */
int64_t nf_object_find(const struct nf_artifact *a, const char *id);
int64_t nf_binding_find(const struct nf_artifact *a, const char *name);

/* Files of the set (seed §3.2, §11.1), behind one narrow interface: every
 * read of a file's bytes goes through nf_file_pread, or, for a local set,
 * between nf_file_acquire and nf_file_release; status, fingerprint and
 * verify say what is known of it.  Thread-safe.
 *
 * The files come from one of two sources, chosen at open: a local
 * directory, or (NF_OPEN_REMOTE and a URL) a remote set, whose parts are
 * the URLs beside the entry's (remote/remote.h resolves and encodes them;
 * a part whose path breaks seed §3.3 is never requested).  Both check a
 * part the first time it is needed: its 32-byte header (magic, part_index,
 * artifact_id) and its length, and record its identity: a local file's
 * fingerprint, a remote file's ETag (or Last-Modified) at its first
 * response, which every later response must carry.
 *
 * nf_file_acquire() opens file i the first time it is needed, relative to
 * the entry's directory and never outside it, checks the part header
 * (magic, part_index, artifact_id) and length, records the file's identity
 * (its fingerprint), and remembers the result.  Every acquire compares the
 * file with its fingerprint (one fstat): a file changed since (size, mtime,
 * ctime, device or inode differ, or it was removed) becomes bad,
 * FILE_CHANGED (contract §5).  Returns an fd, valid until the matching
 * nf_file_release() (owned by the artifact: do not close it), or -ENOENT
 * (missing), -EIO (bad or changed), -EMFILE/-ENFILE (no descriptor to be
 * had now: a limit of this run; the file's status does not change),
 * -EINVAL.  Parts are held in a bounded cache (nf_files_set_open_max):
 * a released part may be closed, and is reopened on the next acquire,
 * which fails with -EIO unless it is still the very file first opened.
 * A remote set has no descriptors: nf_file_acquire returns -EREMOTE
 * (read with nf_file_pread, or through nf_artifact_remote's engine). */
int nf_file_acquire(struct nf_artifact *a, uint32_t i);
void nf_file_release(struct nf_artifact *a, uint32_t i);
/* Acquire and release: compare file i with its fingerprint now.  0, or
 * what nf_file_acquire returned.  Remote: checks the part if it was not
 * yet (one request), else makes no request and takes what the engine
 * found since (the object changed on the server, 404 after a first
 * response) into the file's status, calling the change hook once; 0,
 * -ENOENT (missing), -EIO (bad or changed). */
int nf_file_verify(struct nf_artifact *a, uint32_t i);
/* All of [off, off+len) of file i (absolute file offsets) into buf, for
 * every synchronous read (tools, tests, uses.json, --deep), local or
 * remote: checks the file first as nf_file_acquire would.  0, -ENOENT
 * (missing), -EIO (bad, changed, or a failed remote read), -ENODATA (a
 * local file ends early), -EMFILE/-ENFILE, -EINVAL (index or span).
 * i == 0 reads the entry even when the set has no usable files table. */
int nf_file_pread(struct nf_artifact *a, uint32_t i, void *buf, uint64_t len, uint64_t off);
/* The redacted URL of file i of a remote set (no credentials: fit to
 * print); NULL for a local set, an index out of range, or a part whose
 * path breaks seed §3.3 (never requested). */
const char *nf_file_url(const struct nf_artifact *a, uint32_t i);
/* The engine's handle of a remote set (NULL for a local set), for the
 * daemon's reads: file i of the artifact is file i of the handle (the
 * range map's segments go to nf_remote_read unchanged), and its per-file
 * counters are nf_remote_file_stats.  Owned by the artifact. */
struct nf_remote;
struct nf_remote *nf_artifact_remote(const struct nf_artifact *a);
enum nf_file_status nf_file_status(const struct nf_artifact *a, uint32_t i, const char **reason);
/* The identity recorded at a file's first open. */
struct nf_file_fingerprint {
	uint64_t dev, ino, size;
	struct timespec mtime, ctime;
};
/* 0 and *out, or -ENOENT when the file was never opened, -EREMOTE for a
 * remote set (its identity is its ETag: nf_remote_file_stats). */
int nf_file_fingerprint(const struct nf_artifact *a, uint32_t i, struct nf_file_fingerprint *out);
/* Called (from the thread that noticed, no lock held) once per file that
 * becomes bad because it changed; NULL: none.  For the daemon's page-cache
 * invalidation (contract §5). */
void nf_files_set_change_hook(struct nf_artifact *a, void (*hook)(void *arg, uint32_t file),
			      void *arg);
/* The cache: at most `n` part descriptors stay open when released (more
 * are open only while acquired).  Default: nf_files_default_open_max() at
 * open, half the soft RLIMIT_NOFILE (at least 4).  No-op for a remote set
 * (its stats are 0 but for `changes`). */
void nf_files_set_open_max(struct nf_artifact *a, uint32_t n);
uint32_t nf_files_default_open_max(void);
struct nf_files_stats {
	uint32_t open, open_max;       /* part descriptors open now; the bound */
	uint64_t evictions, reopens;   /* closed to make room; opened again */
	uint64_t changes;              /* files found changed */
};
void nf_files_stats(const struct nf_artifact *a, struct nf_files_stats *out);
/* Open every file and add a finding per missing (warning, FILE_MISSING) or
 * bad (error, FILE_BAD_*, FILE_UNREADABLE) file.  Call it once per report:
 * a second call adds the same findings again.  Parts whose path broke seed
 * §3.3 are already directory errors and get no second finding. */
void nf_artifact_check_files(struct nf_artifact *a, struct nf_report *report);

/* The range map (seed §2.2, §11.2): the only code that knows how files
 * join.  Maps the logical payload range [offset, offset+length) onto file
 * segments (struct nf_segment of io/extent.h), in order.  Returns the
 * number of segments the range needs (only the first `max` are written), or
 * -ERANGE when the range is not inside [0, payload_bytes] (length 0 at
 * payload_bytes is allowed and maps to no segment). */
ssize_t nf_range_map(const struct nf_artifact *a, uint64_t offset, uint64_t length,
		     struct nf_segment *segs, size_t max);
/* The files table as the extent table the map reads (io/extent.h): file i
 * holds [logical_start, + payload_bytes) at data_offset; total is
 * payload_bytes.  It points into a->files (valid while `a` is open). */
struct nf_extents nf_artifact_extents(const struct nf_artifact *a);

/* Deep check (ninfer-check --deep): reads every payload byte of every
 * present file once, through the range map, and reports as warnings:
 * non-zero bytes in the entry's alignment gap after the JSON, in a part's
 * header padding [32, 4096), and between or after objects (seed §3, §5.3);
 * and, per tensor object whose codec is known and size right, the first
 * violation of nf_check_invariants() (code from the codec).  A read
 * failure of a present file is a file error (DEEP_READ_FAILED).  Call
 * nf_artifact_check_files() first.  `progress` (may be NULL) gets the
 * bytes done and the total.  Returns 0, or -ENOMEM. */
int nf_artifact_check_deep(struct nf_artifact *a, struct nf_report *report,
			   void (*progress)(void *arg, uint64_t done, uint64_t total),
			   void *progress_arg);

/* Read logical payload bytes [off, off+len) into buf with nf_file_pread,
 * through the range map, opening files as needed.  Returns 0; -ERANGE when the
 * range is not inside the payload; or the first failing file's -errno
 * (-ENODATA when it ends early, -EIO/-ENOENT when missing or bad), with its
 * index in *failed_file when that is not NULL.  The daemon reads through
 * the io_uring engine instead; this is the path of tools and tests. */
int nf_payload_read(struct nf_artifact *a, uint64_t off, uint64_t len, void *buf,
		    uint32_t *failed_file);

/* The validation report document of contract §4, as a NUL-terminated
 * malloc'd JSON string (pretty, newline-terminated).  `a` may be NULL when
 * the artifact could not be opened. */
char *nf_report_to_json(const struct nf_report *r, const struct nf_artifact *a,
			const char *entry_path, const char *tool, int argc, char *const *argv);
/* The same as human text, one finding a line, then a summary line. */
void nf_report_print_text(FILE *out, const struct nf_report *r, const struct nf_artifact *a,
			  const char *entry_path);
/* files.json of contract §2: index, path, payload range, status (+reason). */
char *nf_files_json(const struct nf_artifact *a);
/* uses.json of contract §2 (the same bytes as a->uses_json would hold),
 * built now from the stored JSON text: malloc'd, NULL on OOM.  Thread-safe
 * (it reads only the immutable text, or the entry with pread).  For a caller that opened with
 * NF_OPEN_LAZY_USES_JSON (a->uses_json is then NULL when the text alone
 * can give it): it is the largest text of the model after the JSON. */
char *nf_uses_json(const struct nf_artifact *a);
/* strlen(nf_uses_json(a)): counted while the directory was read when
 * NF_OPEN_LAZY_USES_JSON left a->uses_json NULL, so it needs neither the
 * text nor a pass.  0 or -ENOMEM. */
int nf_uses_json_size(const struct nf_artifact *a, uint64_t *size);
/* Free the JSON text (a->json_text becomes NULL) once the model is built
 * and nothing else needs it: on a large set it is a third of the memory
 * (issue 6).  nf_uses_json() then reads the uses array from the entry
 * again (NULL with errno EIO if that fails, or the bytes no longer parse
 * as they did).
 * Not thread-safe: call it before the artifact is shared. */
void nf_artifact_drop_json_text(struct nf_artifact *a);

/* limits.c: shared by ninfer-check, ninfer-pack and ninferfs. */
/* Raise the soft RLIMIT_NOFILE to the hard limit (a set may have more
 * parts than the usual soft limit of 1024); the new soft limit, or 0. */
uint64_t nf_raise_fd_limit(void);
/* A size: decimal digits with an optional K, M, G or T (powers of 1024,
 * optionally followed by "iB" or "B").  0, or -1 when it is not one. */
int nf_parse_size(const char *s, uint64_t *out);
/* on: a SIGBUS (the entry shrank under its mapped JSON text, which the
 * model reads until nf_artifact_drop_json_text) ends the process with
 * status 8 and a message on stderr; off: the default action again. */
void nf_guard_mapped_json(bool on);

#endif
