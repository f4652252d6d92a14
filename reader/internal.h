/* reader/internal.h — shared by the reader's own files, never installed.
 *
 * The model of an artifact lives in one arena (strings, arrays of records,
 * shapes): a million objects cost a handful of large allocations, not a
 * million small ones, and nf_artifact_close() frees it in one sweep. */
#ifndef NF_READER_INTERNAL_H
#define NF_READER_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/artifact.h"
#include "report/report.h"

/* ---- arena.c ---------------------------------------------------------- */

struct nf_arena_chunk;
struct nf_arena {
	struct nf_arena_chunk *head;
	bool failed;              /* an allocation failed: the model is incomplete */
};

void nf_arena_init(struct nf_arena *ar);
void nf_arena_free(struct nf_arena *ar);
/* Zeroed memory, aligned for any scalar; NULL (and ar->failed) on OOM or
 * when n * size overflows. */
void *nf_arena_calloc(struct nf_arena *ar, size_t n, size_t size);
char *nf_arena_strdup(struct nf_arena *ar, const char *s);
char *nf_arena_memdup0(struct nf_arena *ar, const void *p, size_t n); /* + NUL */

/* ---- private artifact state ------------------------------------------ */

/* What is known of one file of the set, whatever its source (files.c). */
struct nf_file_state {
	enum nf_file_status status;
	char *reason;             /* malloc'd, bad/missing only */
	const char *code;         /* finding code of a bad/missing file */
	bool path_ok;             /* false: the path broke seed §3.3, never opened */
};

struct nf_source_ops;

struct nf_artifact_private {
	struct nf_arena arena;
	pthread_mutex_t lock;     /* guards files[] state (and the local source's cache) */
	const struct nf_source_ops *src;   /* where the files come from (source.h) */
	void *src_state;          /* the source's own state */
	struct nf_file_state *files;
	uint64_t changes;         /* files found changed */
	void (*change_hook)(void *arg, uint32_t file);
	void *change_arg;
	uint32_t *obj_by_id;      /* object indices sorted by id */
	uint32_t *bind_by_name;   /* binding indices sorted by name */
	char *uses_json;          /* malloc'd text behind a->uses_json (streamed build) */
	char *json_text;          /* malloc'd text behind a->json_text, until dropped
				     (only where the entry cannot be mapped) */
	void *json_map;           /* or the mapping of [0, 32 + json_bytes] (source_local.c,
				     json_fetch.c): the text is at json_map + 32 */
	size_t json_map_len;
	uint64_t max_json;        /* ceiling on json_bytes; 0: NF_DEFAULT_MAX_JSON */
	/* The uses array's byte range in json_text, for nf_uses_json(); only
	 * when the directory was read record by record (no big integers). */
	bool uses_range;
	size_t uses_start, uses_end, uses_count;
	bool uses_size_known;     /* uses_json_size: counted while reading */
	uint64_t uses_json_size;
};

/* ---- header.c --------------------------------------------------------- */

/* Check the entry header (seed §3.1): `h` is its 32 bytes, or NULL when the
 * entry (entry_size bytes) is shorter.  Sets artifact_id, json_bytes and
 * entry_payload_start.  0, or -EINVAL (a directory finding), -EFBIG
 * (json_bytes above priv->max_json: JSON_TOO_LARGE), -ENOMEM. */
int nf_entry_header(struct nf_artifact *a, const uint8_t *h, uint64_t entry_size,
		    struct nf_report *r);

/* ---- json_fetch.c: the JSON of an entry read with pread, in chunks ---- */

/* Read [32, 32 + json_bytes) of the entry with `fetch` (0 or -errno; *why
 * may be set to a static or source-owned text naming the cause) into an
 * anonymous mapping with a NUL after it, chunk by chunk, and stop at the
 * end of the chunk that holds the directory's first syntax error (the
 * rest is never fetched and reads as zero bytes).  Sets json_text and
 * priv->json_map.  0, or -errno with a finding. */
int nf_json_fetch(struct nf_artifact *a, int (*fetch)(void *ctx, void *buf, uint64_t len,
						      uint64_t off, const char **why),
		  void *ctx, struct nf_report *r);

/* ---- source_local.c --------------------------------------------------- */

/* pread exactly n bytes at off; 0, -errno, or -ENODATA when the file ends
 * first. */
int nf_pread_full(int fd, void *buf, uint64_t n, uint64_t off);
struct stat;
void nf_fingerprint_of(const struct stat *sb, struct nf_file_fingerprint *id);

/* ---- where.c: locating findings -------------------------------------- */

/* Where a record is, formatted only when a finding is made. */
struct nf_where {
	const char *table;        /* "objects", "files", "bindings", "uses", "components",
				     "root", "header" */
	uint64_t index;           /* objects/files/uses */
	const char *name;         /* id / path / binding name / component id; may be NULL */
	const char *tail;         /* appended as is, e.g. ".parts[1]"; may be NULL */
};
char *nf_where_format(const struct nf_where *w); /* malloc'd */

/* ---- json_scan.c: integers jansson cannot hold ----------------------- */

/* A JSON integer literal outside int64 (json_int_t).  jansson refuses the
 * whole document for one such literal, so the text is rewritten with the
 * literal as a binary64 real; the parsed node is then recognised by
 * identity and reported by the field that holds it. */
struct nf_bigint {
	char *literal;            /* the digits as written */
	char *pointer;            /* JSON pointer, for evidence */
	json_t *node;             /* the real node after parsing */
	bool open;                /* inside config/metadata/provenance */
};
struct nf_bigints {
	struct nf_bigint *items;
	size_t count;
};
/* Returns a malloc'd rewritten text (length *out_len) when the text holds
 * big integers (and fills *bi with their paths), NULL with *bi empty when it
 * holds none; -ENOMEM is reported via *err. */
char *nf_json_rewrite_bigints(const char *text, size_t len, size_t *out_len,
			      struct nf_bigints *bi, int *err);
void nf_json_resolve_bigints(struct nf_bigints *bi, json_t *root);
void nf_bigints_free(struct nf_bigints *bi);
const struct nf_bigint *nf_bigint_of(const struct nf_bigints *bi, const json_t *v);

/* ---- json_scan.c: the directory record by record ---------------------- */

/* The root object split into members without building a tree.  The scan is
 * only trusted when it says so: anything it cannot vouch for (big integers,
 * nesting deeper than 1024, a duplicate root member name, more than 64 root
 * members, syntax it does not expect, trailing bytes) makes it return false,
 * and the reader then parses the whole text with jansson exactly as before,
 * so every finding about bad JSON comes from one place. */
#define NF_SCAN_MAX_MEMBERS 64
struct nf_scan_member {
	char *key;                /* decoded, malloc'd */
	size_t start, end;        /* the value: [start, end) of the text */
	size_t count;             /* array elements / object members (containers) */
};
struct nf_root_scan {
	struct nf_scan_member m[NF_SCAN_MAX_MEMBERS];
	size_t n;
};
bool nf_json_scan_root(const char *text, size_t len, struct nf_root_scan *out);
void nf_root_scan_free(struct nf_root_scan *s);

/* The records of one table: either the elements/members of a parsed jansson
 * array/object (`tree`), or streamed from the text (json_records.c: cut
 * and parsed a batch ahead by a producer thread).  A streamed table whose
 * text does not hold what the scan said sets *failed and ends early: the
 * caller then throws the model away and parses the whole text.  One thread
 * reads a table, with nf_recs_next or nf_recs_next_use throughout. */
struct nf_recs_pipe;
struct nf_recs {
	json_t *tree;
	void *iter;
	const char *text;         /* streamed: the JSON text */
	size_t start, end;        /* streamed: the table's [start, end) */
	bool object;
	size_t count, i;
	/* nf_recs_next_use's plain form: parameter, input, activation_policy
	 * (or NULL); valid until the next call */
	const char *plain[3];
	size_t cur_start, cur_end; /* streamed: the current record's text */
	json_t *reparsed;         /* streamed: a plain record given as a tree */
	struct nf_recs_pipe *pipe;
	bool *failed;
};
void nf_recs_tree(struct nf_recs *s, json_t *tree, bool *failed);
void nf_recs_text(struct nf_recs *s, const char *text, size_t start, size_t end, size_t count,
		  bool *failed);
/* 1: *v (valid until the next call) and, for an object, *key; 0: no more. */
int nf_recs_next(struct nf_recs *s, json_t **v, const char **key);
void nf_recs_done(struct nf_recs *s);
/* For the uses table: like nf_recs_next, but a streamed record of the
 * plain form {"parameter": S, "input": S[, "activation_policy": P]} (members
 * in any order, each once; S non-empty printable ASCII without escapes; P
 * one of the three policies) is returned as 2 with s->plain[] set and no
 * jansson tree (*v NULL): such a record is valid JSON and has no finding
 * of its own, so only the reference check is left to make.  1 and 0 as
 * nf_recs_next. */
int nf_recs_next_use(struct nf_recs *s, json_t **v);
/* Text helpers shared by the scan and the records: the index after the
 * whitespace at t[i]; after the string starting at t[i] (0: unterminated);
 * a raw key token decoded by jansson (malloc'd, NULL if not a string). */
size_t nf_json_skip_ws(const char *t, size_t i, size_t len);
size_t nf_json_skip_string(const char *t, size_t i, size_t len);
/* The end of the value at t[i], or 0 when the scan cannot vouch for it
 * (containers: *count elements or members). */
size_t nf_json_skip_value(const char *t, size_t i, size_t len, size_t *count);
char *nf_json_decode_key(const char *tok, size_t len);
/* Parse [start, end) of the text alone, exactly (JSON_DECODE_ANY). */
json_t *nf_json_load_range(const char *text, size_t start, size_t end);

/* ---- json_fields.c: typed access with findings ------------------------ */

struct nf_build {
	struct nf_artifact *a;
	struct nf_report *r;
	struct nf_arena *ar;
	struct nf_bigints bigints;
	bool dir_error;           /* a directory-scope error was reported */
	bool files_ok;            /* the files table gives a usable address space */
	uint64_t entry_size;
	/* Every well-formed object id in the directory, kept or not, sorted:
	 * a reference to a record that was left out is not reported again. */
	const char **all_ids;
	size_t nall_ids;
	/* Names of bindings that were left out (scratch copies, sorted after
	 * the bindings are built): a use naming one is not reported again. */
	char **dropped_bindings;
	size_t ndropped_bindings, cap_dropped_bindings;
	struct nf_arena scratch;  /* temporaries of one open, freed after it */
	bool stream_failed;       /* the streamed text was not what the scan said */
	unsigned flags;           /* NF_OPEN_* */
	char *uses_buf;           /* uses_json being built (malloc'd) */
	size_t uses_len, uses_cap;
	bool uses_count_only;     /* uses_len counts, uses_buf stays NULL */
	const char *interned[32]; /* nf_intern(): a few distinct short strings */
	size_t ninterned;
};

/* A record being read: its JSON object and where it is. */
struct nf_rec {
	struct nf_build *b;
	const struct nf_where *w;
	const char *what;         /* e.g. "tensor object (seed §5.1)" */
	json_t *obj;
};

void nf_dir_error(struct nf_build *b, const struct nf_where *w, const char *code,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void nf_finding_at(struct nf_build *b, enum nf_severity sev, enum nf_scope scope,
		   const struct nf_where *w, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

const char *nf_json_type_name(const struct nf_build *b, const json_t *v);
/* Report every member not in `allowed` (NULL-terminated) as FIELD_UNKNOWN.
 * Returns false when there was one. */
bool nf_rec_members(const struct nf_rec *rc, const char *const *allowed, const char *what);
/* The member, or NULL.  A missing required member is FIELD_MISSING. */
json_t *nf_rec_get(const struct nf_rec *rc, const char *key, bool required);

/* Integer checks.  Return true when v is an integer in range; otherwise
 * report (INT_*, FIELD_TYPE) naming `field` and return false. */
bool nf_val_u64(const struct nf_rec *rc, const char *field, const json_t *v, bool positive,
		uint64_t *out);
/* 1: present and valid, 0: absent (and optional), -1: reported. */
int nf_rec_u64(const struct nf_rec *rc, const char *key, bool required, bool positive,
	       uint64_t *out);
/* ID rule (seed §1): a non-empty string (UTF-8 and no U+0000 were checked
 * by the parser).  Same return convention. */
int nf_rec_id(const struct nf_rec *rc, const char *key, bool required, const char **out);
bool nf_val_id(const struct nf_rec *rc, const char *field, const json_t *v, const char **out);
/* An arena copy of s, shared with earlier equal strings while there are
 * few distinct ones (format, layout, encoding, activation policy). */
const char *nf_intern(struct nf_build *b, const char *s);
/* Pretty JSON ("  " indent, newline-terminated) into the arena. */
char *nf_pretty(struct nf_build *b, const json_t *v);

/* ---- directory_*.c ---------------------------------------------------- */

/* Each builds one table of the model from the parsed root, reporting. */
void nf_build_files(struct nf_build *b, json_t *files, uint64_t entry_size);
void nf_build_objects(struct nf_build *b, struct nf_recs *objects);
void nf_build_bindings(struct nf_build *b, struct nf_recs *bindings);
/* Also builds the pretty uses_json text (b->uses_buf) record by record. */
void nf_build_uses(struct nf_build *b, struct nf_recs *uses);
/* Is `name` a member of the root bindings object (kept or left out)? */
bool nf_build_binding_named(const struct nf_build *b, const char *name);
/* uses.json from the uses array at [start, end) of the text (count
 * elements, as scanned): malloc'd, NULL on OOM or bad text. */
char *nf_uses_pretty(const char *text, size_t start, size_t end, size_t count);
void nf_build_components(struct nf_build *b, json_t *components);

/* Parse one Binding record (seed §7.1) into *out (arena).  Returns false
 * when it is inconsistent (reported) and must be left out. */
bool nf_parse_binding(struct nf_build *b, const struct nf_where *w, json_t *v,
		      const char *name, struct nf_binding *out);

bool nf_build_id_known(const struct nf_build *b, const char *id);
/* Sorted lookup indices (priv->obj_by_id, priv->bind_by_name). */
bool nf_index_objects(struct nf_artifact *a);
bool nf_index_bindings(struct nf_artifact *a);

/* ---- report.c ---------------------------------------------------------- */

/* Drop the findings after the first `count` (a discarded streamed build). */
void nf_report_truncate(struct nf_report *r, size_t count, bool oom);

/* ---- files.c: the file states, shared by both sources ---------------- */

/* seed §3.3: is `p` an acceptable part file name for entry `entry_name`?
 * NULL when it is, else the rule it breaks (and *code its finding code). */
const char *nf_part_path_problem(const char *p, size_t len, const char *entry_name,
				 const char **code);
/* The file's name for messages: its path, or the entry's name. */
const char *nf_file_name(const struct nf_artifact *a, uint32_t i);
/* Set file i's status, finding code and reason (lock held). */
void nf_file_set(struct nf_artifact *a, uint32_t i, enum nf_file_status s, const char *code,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* seed §3.2: the first 32 bytes `h` of part i (NULL when the part has
 * fewer) and its length: present, or bad with the rule it breaks (lock
 * held).  True when present. */
bool nf_part_check_header(struct nf_artifact *a, uint32_t i, const uint8_t *h, uint64_t size);
/* A present file changed (contract §5): bad, FILE_CHANGED (lock held).
 * True when this call made the change: the caller then calls
 * nf_file_tell_hook (unlocked). */
bool nf_file_mark_changed(struct nf_artifact *a, uint32_t i, const char *what);
void nf_file_tell_hook(struct nf_artifact *a, uint32_t i);

#endif
