/* report/report.c — findings as values (contract §4, §5).
 *
 * A report is a growing array of findings.  Adding never fails loudly: on
 * OOM the finding is dropped and `oom` is set, which the exit status turns
 * into an operational failure (the report is then known to be incomplete). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

void nf_report_init(struct nf_report *r)
{
	r->items = NULL;
	r->count = r->cap = 0;
	r->oom = false;
}

void nf_report_free(struct nf_report *r)
{
	for (size_t i = 0; i < r->count; i++) {
		free(r->items[i].where);
		free(r->items[i].evidence);
	}
	free(r->items);
	nf_report_init(r);
}

void nf_report_add(struct nf_report *r, enum nf_severity sev, enum nf_scope scope,
		   const char *code, const char *where, const char *evidence_fmt, ...)
{
	if (r->count == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct nf_finding *n = realloc(r->items, cap * sizeof *n);
		if (!n) {
			r->oom = true;
			return;
		}
		r->items = n;
		r->cap = cap;
	}
	char *ev = NULL;
	va_list ap;
	va_start(ap, evidence_fmt);
	int rc = vasprintf(&ev, evidence_fmt, ap);
	va_end(ap);
	char *wh = strdup(where ? where : "");
	if (rc < 0 || !wh) {
		if (rc >= 0)
			free(ev);
		free(wh);
		r->oom = true;
		return;
	}
	struct nf_finding *f = &r->items[r->count++];
	f->severity = sev;
	f->scope = scope;
	f->code = code;
	f->where = wh;
	f->evidence = ev;
}

size_t nf_report_count(const struct nf_report *r, enum nf_severity sev, int scope)
{
	size_t n = 0;
	for (size_t i = 0; i < r->count; i++)
		if (r->items[i].severity == sev && (scope < 0 || (int)r->items[i].scope == scope))
			n++;
	return n;
}

bool nf_report_has_code(const struct nf_report *r, const char *code)
{
	for (size_t i = 0; i < r->count; i++)
		if (strcmp(r->items[i].code, code) == 0)
			return true;
	return false;
}

/* fsck convention (contract §1): an operational finding wins (the check
 * itself could not be completed), then errors, then warnings. */
int nf_report_exit_status(const struct nf_report *r)
{
	if (r->oom || nf_report_count(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL) ||
	    nf_report_count(r, NF_SEV_WARNING, NF_SCOPE_OPERATIONAL))
		return 8;
	if (nf_report_count(r, NF_SEV_ERROR, -1))
		return 4;
	if (nf_report_count(r, NF_SEV_WARNING, -1))
		return 1;
	return 0;
}

const char *nf_report_verdict(const struct nf_report *r)
{
	if (r->oom || nf_report_count(r, NF_SEV_ERROR, -1) ||
	    nf_report_count(r, NF_SEV_WARNING, NF_SCOPE_OPERATIONAL))
		return "fail";
	if (nf_report_count(r, NF_SEV_WARNING, -1))
		return "pass_with_warnings";
	return "pass";
}

const char *nf_severity_name(enum nf_severity s)
{
	switch (s) {
	case NF_SEV_INFO: return "info";
	case NF_SEV_WARNING: return "warning";
	case NF_SEV_ERROR: return "error";
	}
	return "?";
}

const char *nf_scope_name(enum nf_scope s)
{
	switch (s) {
	case NF_SCOPE_DIRECTORY: return "directory";
	case NF_SCOPE_FILE: return "file";
	case NF_SCOPE_OBJECT: return "object";
	case NF_SCOPE_OPERATIONAL: return "operational";
	}
	return "?";
}

/* Declared in reader/internal.h: the reader drops the findings of a
 * streamed build it throws away (it then reads the text as a whole). */
void nf_report_truncate(struct nf_report *r, size_t count, bool oom);
void nf_report_truncate(struct nf_report *r, size_t count, bool oom)
{
	for (size_t i = count; i < r->count; i++) {
		free(r->items[i].where);
		free(r->items[i].evidence);
	}
	if (count < r->count)
		r->count = count;
	r->oom = oom;
}
