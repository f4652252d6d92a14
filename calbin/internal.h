/* calbin/internal.h — what the calbin files share and the API does not show.
 *
 * One file holds one idea: walk.c the directory (Gate A's walk), lines.c
 * the bounded line reader, meta.c the metadata grammar (§4, §5), yaml.c
 * libyaml -> jansson, opio.c the op I/O model (§6), commands.c the command
 * dumps (§7.2), elf.c libelf, hash.c SHA256SUMS and SHA-256, jobs.c the
 * workers, gate_*.c the rules, memory.c Gate D, report_*.c the documents. */
#ifndef NF_CALBIN_INTERNAL_H
#define NF_CALBIN_INTERNAL_H

#include <stdarg.h>

#include "calbin/calbin.h"

/* ---- findings ----------------------------------------------------------- */

/* Every finding of the package goes through here: gate, severity and class
 * decide the scope (contract §5 for a mount: Gates A–C errors refuse it;
 * operational = the tool could not read what it needed, exit 8). */
void cb_find(struct nf_report *r, char gate, enum nf_severity sev, enum nf_class klass,
	     const char *code, const char *file, uint64_t line, const char *key,
	     const char *fmt, ...) __attribute__((format(printf, 9, 10)));
/* The same with the operational scope (exit 8). */
void cb_find_op(struct nf_report *r, char gate, const char *code, const char *file,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define CB_ERR(r, gate, code, file, line, key, ...) \
	cb_find(r, gate, NF_SEV_ERROR, NF_CLASS_ERROR, code, file, line, key, __VA_ARGS__)
#define CB_WARN(r, gate, klass, code, file, line, key, ...) \
	cb_find(r, gate, NF_SEV_WARNING, klass, code, file, line, key, __VA_ARGS__)
#define CB_INFO(r, gate, code, file, line, key, ...) \
	cb_find(r, gate, NF_SEV_INFO, NF_CLASS_NONE, code, file, line, key, __VA_ARGS__)

/* A per-file cap on repeated findings of one parser (a 444k-line dump
 * with a bad generator must not make a 444k-finding report). */
#define CB_MAX_FINDINGS_PER_FILE 32

/* ---- lines.c: a bounded line reader ---------------------------------------- */

/* Called once per line, without its '\n'.  toolong: the line was longer
 * than maxline; `line` holds its first maxline bytes and the rest was
 * skipped.  A non-zero return stops the reader and is returned. */
typedef int (*cb_line_fn)(void *arg, const char *line, size_t len, uint64_t lineno,
			  bool toolong);
/* Called with every chunk as it is read (e.g. to hash it); may be NULL. */
typedef void (*cb_chunk_fn)(void *arg, const void *buf, size_t len);
/* Read fd from offset 0 to its end with reads of `chunk` bytes, keeping at
 * most chunk + maxline bytes.  Returns 0, the callback's stop value, or
 * -errno of a failed read (*bytes: how much was read). */
int cb_read_lines(int fd, size_t chunk, size_t maxline, cb_line_fn fn, void *arg,
		  cb_chunk_fn chunk_fn, void *chunk_arg, uint64_t *bytes);

/* ---- text helpers (meta.c) ------------------------------------------------ */

/* Exact forms of the conventions.  Each returns true and sets *v
 * only when the whole token has the form. */
bool cb_tok_hex(const char *s, size_t n, uint64_t *v);      /* 0x + lowercase hex */
bool cb_tok_dec(const char *s, size_t n, uint64_t *v);      /* unsigned decimal */
bool cb_tok_mask(const char *s, size_t n, uint32_t *v);     /* 8 lowercase hex digits */
/* "[d0,d1,...]" with decimal dims, no spaces; rank <= CB_MAX_RANK. */
bool cb_tok_dims(const char *s, size_t n, uint32_t *rank, uint64_t dims[CB_MAX_RANK]);
/* product(dims) * bytes, false on overflow. */
bool cb_shape_bytes(uint32_t rank, const uint64_t *dims, unsigned bytes, uint64_t *out);

/* ---- meta.c: the metadata grammar (§4, §5) ------------------------------- */

enum cb_meta_kind { CB_META_TOP, CB_META_SUB };

struct cb_meta_out {
	enum cb_meta_kind kind;
	const char *file;      /* relative path, for the findings */
	struct nf_report *r;
	/* top */
	struct cb_topmeta *top;
	struct cb_reservation *res;   /* [CB_DOMAIN_COUNT] */
	struct cb_map *maps;
	size_t nmaps, capmaps;
	/* sub */
	struct cb_submeta *sub;
	size_t capdecls, capicsrs, capbufs;
	/* bookkeeping */
	size_t syntax_findings, syntax_dropped;
	bool oom;
};

/* One line (lineno 1-based).  Anything that is not exactly one of the
 * forms is a META_SYNTAX finding naming the rule; the line is dropped. */
void cb_meta_line(struct cb_meta_out *m, const char *line, size_t len, uint64_t lineno);
/* After the last line: the required lines (META_KEY_MISSING) and the count
 * of dropped syntax findings. */
void cb_meta_finish(struct cb_meta_out *m);
void cb_topmeta_free(struct cb_topmeta *t);
void cb_submeta_free(struct cb_submeta *s);
void cb_maps_free(struct cb_map *maps, size_t n);

/* ---- yaml.c: libyaml events -> jansson, with limits ----------------------- */

struct cb_yaml_limits {
	uint64_t max_bytes;    /* of the file */
	unsigned max_depth;    /* nesting of sequences and mappings */
	size_t max_nodes;      /* values built, aliases expanded included */
	size_t max_scalar;     /* bytes of one scalar */
};
extern const struct cb_yaml_limits cb_yaml_default_limits;

struct cb_yaml_line;
struct cb_yaml_doc {
	json_t *root;          /* NULL when the parse failed */
	struct cb_yaml_line *lines;   /* open addressing: (parent, key|index) -> line */
	size_t nlines, caplines;
	uint64_t root_line;
};
/* Parse the YAML stream of fd (one document).  0: doc->root set; -1: a
 * finding (YAML_SYNTAX, YAML_LIMIT, YAML_TAG, YAML_DUPLICATE_KEY) was
 * recorded; -ENOMEM.  Keys keep their file order. */
int cb_yaml_load(int fd, const char *file, const struct cb_yaml_limits *lim,
		 struct nf_report *r, struct cb_yaml_doc *doc);
int cb_yaml_load_buffer(const void *buf, size_t len, const char *file,
			const struct cb_yaml_limits *lim, struct nf_report *r,
			struct cb_yaml_doc *doc);
/* Line of the member `key` of object `parent` / element i of an array; 0
 * when not known. */
uint64_t cb_yaml_line(const struct cb_yaml_doc *d, const json_t *parent, const char *key);
uint64_t cb_yaml_line_at(const struct cb_yaml_doc *d, const json_t *parent, size_t i);
/* Frees the line index; the tree is kept unless free_root. */
void cb_yaml_free(struct cb_yaml_doc *d, bool free_root);

/* ---- parsers of the other files ----------------------------------------- */

struct cb_build {
	struct cb_package *p;
	struct nf_report *r;
	const struct cb_options *opt;
	struct cb_yaml_doc manifest_doc;   /* lines of the manifest (Gate B/C sites) */
	const char *manifest_file;         /* its path, or NULL */
	bool manifest_ok;                  /* Gate B passed for the manifest's keys */
	json_t *cfg[2];                    /* one_model_cfg.prefill / .decode */
	const char *cfg_key[2];
};

/* walk.c */
void cb_walk(struct cb_build *b);
void cb_classify(struct cb_build *b);
/* Opens files[i] beneath the root: fd or -errno. */
int cb_open_index(const struct cb_package *p, size_t i);

/* opio.c: the §6 model of one submodel from its YAML tree. */
void cb_opio_build(struct cb_build *b, struct cb_submodel *s, const struct cb_yaml_doc *doc,
		   const char *file);
void cb_opio_free(struct cb_submodel *s);

/* profparts.c */
void cb_profparts_read(struct cb_build *b, struct cb_submodel *s);

/* hash.c: streaming SHA-256 (OpenSSL EVP). */
struct cb_sha256;
struct cb_sha256 *cb_sha256_new(void);
void cb_sha256_update(void *h, const void *buf, size_t len);   /* a cb_chunk_fn */
/* Final digest as 64 lowercase hex digits + NUL; frees h.  false on error. */
bool cb_sha256_final(struct cb_sha256 *h, char hex[65]);
void cb_sha256_free(struct cb_sha256 *h);

/* commands.c: parse one dump (worker-safe: findings into r); when h is
 * not NULL, every byte read is hashed into it as well (one pass). */
void cb_commands_parse(const struct cb_package *p, struct cb_commands *c, struct nf_report *r,
		       struct cb_sha256 *h, uint64_t *bytes_read);
/* The .bin header (§7.2 conventions): count, or -1 reported. */
int64_t cb_command_bin_count(const struct cb_package *p, int file_index, struct nf_report *r);

/* elf.c */
void cb_elf_read(struct cb_build *b, size_t file_index);
void cb_elf_free(struct cb_elf *e);

/* hash.c: SHA256SUMS.  expect[i] is the digest listed for files[i] (its
 * line in files[i].sums_line). */
struct cb_sums {
	char (*expect)[65];
	bool read;
};
void cb_sums_read(struct cb_build *b, struct cb_sums *s);
void cb_sums_check(struct cb_build *b, struct cb_sums *s);
/* SHA-256 of all of fd with 1 MiB reads; tick(arg, n) after each. */
int cb_hash_fd(int fd, char hex[65], void (*tick)(void *, uint64_t), void *tick_arg);

/* jobs.c: the command dumps and the digests, on opt->threads workers, the
 * largest first; each worker reports into its own list, merged afterwards
 * in file order, so the report does not depend on the scheduling. */
void cb_run_jobs(struct cb_build *b);

/* gates */
void cb_gate_manifest(struct cb_build *b);    /* B: §3 keys and types */
void cb_gate_inventory(struct cb_build *b);   /* A: §2 required files, counts */
void cb_gate_cross(struct cb_build *b);       /* C */
void cb_gate_memory(struct cb_build *b);      /* D */
void cb_gate_supply(struct cb_build *b);      /* E */
void cb_gate_service(struct cb_build *b);     /* §8 */
void cb_gate_runtime(struct cb_build *b);     /* F */

/* memory.c: interval union of [begin, end) pairs (sorted in place). */
struct cb_range {
	uint64_t begin, end;
	size_t tag;
};
uint64_t cb_union_bytes(struct cb_range *v, size_t n);

/* report_json.c: validation.json's "memory" object (Gate D), the base of
 * the mount's memory.json (docs.c). */
json_t *cb_memory_obj(const struct cb_package *p, bool pub);
/* report_json.c: one command dump of a submodel (file, engine, chip,
 * buffer, parsed, counts by type), as validation.json lists them and the
 * mount shows as a commands document (docs.c); NULL on OOM. */
json_t *cb_commands_obj(const struct cb_package *p, const struct cb_commands *c);
/* report_json.c: evidence for the public report: every 0x number becomes
 * "0x?", a bare number of 9+ digits "<number>" (a 64-digit SHA-256 stays),
 * every absolute path or one starting "../" "<path>" (malloc'd). */
char *cb_sanitize(const char *s);

/* Small helpers. */
const char *cb_json_str(const json_t *obj, const char *key);
bool cb_json_u64(const json_t *v, uint64_t *out);
/* "0x1f00" (a device address or offset, as the documents write them). */
json_t *cb_json_hex(uint64_t v);
/* [d0, d1, ...]: a shape. */
json_t *cb_json_dims(uint32_t rank, const uint64_t *dims);
const struct cb_file *cb_file_at(const struct cb_package *p, int i);

#endif
