/* report/report.h — findings and the validation report.
 *
 * A finding is a value: severity, scope, a stable code, where (the record,
 * e.g. "objects[3] w.attn.qk"), and evidence (what was seen and which rule
 * it breaks).  Codes are listed in man/ninfer-check.1. */
#ifndef NF_READER_REPORT_H
#define NF_READER_REPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum nf_severity { NF_SEV_INFO = 0, NF_SEV_WARNING, NF_SEV_ERROR };

/* contract §5: directory errors refuse the mount; file and object errors
 * only fail the reads that need them; operational means the tool could not
 * read what it needed (exit 8). */
enum nf_scope { NF_SCOPE_DIRECTORY = 0, NF_SCOPE_FILE, NF_SCOPE_OBJECT, NF_SCOPE_OPERATIONAL };

struct nf_finding {
	enum nf_severity severity;
	enum nf_scope scope;
	const char *code;  /* static string */
	char *where;       /* owned */
	char *evidence;    /* owned */
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
size_t nf_report_count(const struct nf_report *r, enum nf_severity sev, int scope /* -1: any */);
bool nf_report_has_code(const struct nf_report *r, const char *code);

/* fsck-style exit status: 0 clean, 1 warnings only, 4 errors,
 * 8 an operational finding. */
int nf_report_exit_status(const struct nf_report *r);
/* "pass", "pass_with_warnings" or "fail". */
const char *nf_report_verdict(const struct nf_report *r);
const char *nf_severity_name(enum nf_severity s);
const char *nf_scope_name(enum nf_scope s);

#endif
