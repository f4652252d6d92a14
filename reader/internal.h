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
#include "reader/report.h"

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

struct nf_file_state {
	enum nf_file_status status;
	int fd;                   /* -1 until opened */
	char *reason;             /* malloc'd, bad/missing only */
	const char *code;         /* finding code of a bad/missing file */
	bool path_ok;             /* false: the path broke seed §3.3, never opened */
};

struct nf_artifact_private {
	struct nf_arena arena;
	pthread_mutex_t lock;     /* guards files[] state and dirfd */
	int dirfd;                /* O_PATH of the entry's directory, -1 until needed */
	int entry_fd;             /* the entry, kept open (files[0]) */
	char *entry_dir;          /* directory of the entry, malloc'd */
	struct nf_file_state *files;
	uint32_t *obj_by_id;      /* object indices sorted by id */
	uint32_t *bind_by_name;   /* binding indices sorted by name */
};

/* ---- header.c --------------------------------------------------------- */

/* Read and check the entry header (seed §3.1) and the JSON text.  On
 * success the artifact has artifact_id, json_bytes, entry_payload_start
 * and json_text (arena), and *entry_size holds the entry's length. */
int nf_read_entry(struct nf_artifact *a, int fd, struct nf_report *r, uint64_t *entry_size);

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
	json_t *bindings_json;    /* the root bindings object as parsed */
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
/* Pretty JSON ("  " indent, newline-terminated) into the arena. */
char *nf_pretty(struct nf_build *b, const json_t *v);

/* ---- directory_*.c ---------------------------------------------------- */

/* Each builds one table of the model from the parsed root, reporting. */
void nf_build_files(struct nf_build *b, json_t *files, uint64_t entry_size);
void nf_build_objects(struct nf_build *b, json_t *objects);
void nf_build_bindings(struct nf_build *b, json_t *bindings);
void nf_build_uses(struct nf_build *b, json_t *uses);
void nf_build_components(struct nf_build *b, json_t *components);

/* Parse one Binding record (seed §7.1) into *out (arena).  Returns false
 * when it is inconsistent (reported) and must be left out. */
bool nf_parse_binding(struct nf_build *b, const struct nf_where *w, json_t *v,
		      const char *name, struct nf_binding *out);

bool nf_build_id_known(const struct nf_build *b, const char *id);
/* Sorted lookup indices (priv->obj_by_id, priv->bind_by_name). */
bool nf_index_objects(struct nf_artifact *a);
bool nf_index_bindings(struct nf_artifact *a);

/* ---- files.c ---------------------------------------------------------- */

/* seed §3.3: is `p` an acceptable part file name for entry `entry_name`?
 * NULL when it is, else the rule it breaks (and *code its finding code). */
const char *nf_part_path_problem(const char *p, size_t len, const char *entry_name,
				 const char **code);

#endif
