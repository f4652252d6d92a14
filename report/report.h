/* report/report.h — findings and the validation report.
 *
 * A finding is a value: severity, scope, a stable code, where (the record,
 * e.g. "objects[3] w.attn.qk"), and evidence (what was seen and which rule
 * it breaks).  Codes are listed in man/ninfer-check.1 (NInfer) and
 * man/calbin-check.1 (calbin).
 *
 * Families whose inputs are files of text (calbin, seed 004) also give a
 * finding a structured site (file relative to the package, line, key path),
 * the gate that found it and the policy class of seed 004 §10; NInfer
 * findings leave those empty and print exactly as before. */
#ifndef NF_REPORT_REPORT_H
#define NF_REPORT_REPORT_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum nf_severity { NF_SEV_INFO = 0, NF_SEV_WARNING, NF_SEV_ERROR };

/* contract §5: directory errors refuse the mount; file and object errors
 * only fail the reads that need them; operational means the tool could not
 * read what it needed (exit 8). */
enum nf_scope { NF_SCOPE_DIRECTORY = 0, NF_SCOPE_FILE, NF_SCOPE_OBJECT, NF_SCOPE_OPERATIONAL };

/* seed 004 §10: what a finding means for the package beyond its severity.
 * NONE for findings the policy table does not classify (and for NInfer). */
enum nf_class {
	NF_CLASS_NONE = 0,
	NF_CLASS_ERROR,                    /* reject */
	NF_CLASS_BLOCKED_REPRODUCIBILITY,  /* may run, must not be called reproducible */
	NF_CLASS_WARNING_VENDOR,           /* isolated testing only; the vendor must fix it */
	NF_CLASS_WARNING_SERVICE,          /* the service enforces the package's limit */
};

/* Where in a package a finding points.  file: relative to the package root
 * (NULL: the package as a whole); line: 1-based, 0 when it does not apply;
 * key: a key path such as "one_model_cfg.prefill.model_info.batch_num"
 * (NULL when it does not apply). */
struct nf_site {
	const char *file;
	uint64_t line;
	const char *key;
};

struct nf_finding {
	enum nf_severity severity;
	enum nf_scope scope;
	const char *code;  /* static string */
	char *where;       /* owned; for a site finding "file:line key" */
	char *evidence;    /* owned */
	/* Site findings only (nf_report_add_site); 0 / NONE / NULL otherwise. */
	char gate;         /* 'A'..'F', or 'S' for the service checks */
	enum nf_class klass;
	char *file;        /* owned */
	uint64_t line;
	char *key;         /* owned */
};

struct nf_report {
	struct nf_finding *items;
	size_t count, cap;
	bool oom;          /* a finding could not be recorded */
};

void nf_report_init(struct nf_report *r);
void nf_report_free(struct nf_report *r);
/* Record a finding; `where` and the evidence format are copied. */
void nf_report_add(struct nf_report *r, enum nf_severity sev, enum nf_scope scope,
		   const char *code, const char *where, const char *evidence_fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* Record a finding with a site, a gate and a class; the strings are copied
 * and `where` is composed from the site ("file:line key", parts omitted
 * when empty; "package" when all are). */
void nf_report_add_site(struct nf_report *r, enum nf_severity sev, enum nf_scope scope,
			char gate, enum nf_class klass, const char *code,
			const struct nf_site *site, const char *evidence_fmt, ...)
	__attribute__((format(printf, 8, 9)));
/* Move every finding of src to the end of dst (src is left empty; its oom
 * flag carries over).  Lets workers report into their own lists and the
 * caller merge them in a fixed order. */
void nf_report_append(struct nf_report *dst, struct nf_report *src);
size_t nf_report_count(const struct nf_report *r, enum nf_severity sev, int scope /* -1: any */);
/* Findings of one gate ('A'..'F', 'S') with severity sev. */
size_t nf_report_count_gate(const struct nf_report *r, char gate, enum nf_severity sev);
size_t nf_report_count_class(const struct nf_report *r, enum nf_class klass);
bool nf_report_has_code(const struct nf_report *r, const char *code);

/* fsck-style exit status: 0 clean, 1 warnings only, 4 errors,
 * 8 an operational finding. */
int nf_report_exit_status(const struct nf_report *r);
/* "pass", "pass_with_warnings" or "fail". */
const char *nf_report_verdict(const struct nf_report *r);
const char *nf_severity_name(enum nf_severity s);
const char *nf_scope_name(enum nf_scope s);
/* "ERROR", "BLOCKED_REPRODUCIBILITY", ...; NULL for NF_CLASS_NONE. */
const char *nf_class_name(enum nf_class c);

/* A JSON string of arbitrary bytes (file names, argv, quoted input need not
 * be UTF-8): valid UTF-8 is kept, every byte of an invalid sequence becomes
 * U+FFFD, so the document stays valid JSON.  json_null() for NULL; NULL
 * only on OOM.  (The one shared copy of this rule: report/utf8.c.) */
json_t *nf_json_text(const char *s);
/* json_doc.c: a U64 as a JSON number (a real above INT64_MAX, never a
 * wrapped negative integer); NULL only on OOM. */
json_t *nf_json_u64(uint64_t v);
/* obj[key] = v, taking v; a NULL v (a failed allocation or a value that is
 * absent) is stored as null.  json_object_set_new()'s result. */
int nf_json_put(json_t *obj, const char *key, json_t *v);
/* The document as text ending in a newline (json_dumps flags, JSON_ENCODE_ANY
 * added); takes doc (decref'd); malloc'd; NULL for a NULL doc or on OOM. */
char *nf_json_document(json_t *doc, size_t flags);
/* utf8.c: s[0, n) as valid UTF-8, each byte that starts no well-formed
 * sequence (RFC 3629) replaced by U+FFFD; malloc'd and NUL-terminated, its
 * length in *out_len (may be NULL); NULL on OOM. */
char *nf_utf8_repair(const char *s, size_t n, size_t *out_len);

#endif
