/* report/report.c — findings as values (contract §4, §5).
 *
 * A report is a growing array of findings.  Adding never fails loudly: on
 * OOM the finding is dropped and `oom` is set, which the exit status turns
 * into an operational failure (the report is then known to be incomplete). */
#include <inttypes.h>
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

static void finding_free(struct nf_finding *f)
{
	free(f->where);
	free(f->evidence);
	free(f->file);
	free(f->key);
}

void nf_report_free(struct nf_report *r)
{
	for (size_t i = 0; i < r->count; i++)
		finding_free(&r->items[i]);
	free(r->items);
	nf_report_init(r);
}

static bool grow(struct nf_report *r)
{
	if (r->count < r->cap)
		return true;
	size_t cap = r->cap ? r->cap * 2 : 16;
	struct nf_finding *n = realloc(r->items, cap * sizeof *n);
	if (!n) {
		r->oom = true;
		return false;
	}
	r->items = n;
	r->cap = cap;
	return true;
}

void nf_report_add(struct nf_report *r, enum nf_severity sev, enum nf_scope scope,
		   const char *code, const char *where, const char *evidence_fmt, ...)
{
	if (!grow(r))
		return;
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
	r->items[r->count++] = (struct nf_finding){
		.severity = sev, .scope = scope, .code = code, .where = wh, .evidence = ev,
	};
}

static char *site_where(const struct nf_site *s)
{
	const char *file = s && s->file && *s->file ? s->file : NULL;
	const char *key = s && s->key && *s->key ? s->key : NULL;
	char *w = NULL;
	int rc;
	if (!file && !key)
		rc = asprintf(&w, "package");
	else if (file && s->line)
		rc = asprintf(&w, "%s:%" PRIu64 "%s%s", file, s->line, key ? " " : "", key ? key : "");
	else
		rc = asprintf(&w, "%s%s%s", file ? file : "", file && key ? " " : "", key ? key : "");
	return rc < 0 ? NULL : w;
}

void nf_report_add_site(struct nf_report *r, enum nf_severity sev, enum nf_scope scope,
			char gate, enum nf_class klass, const char *code,
			const struct nf_site *site, const char *evidence_fmt, ...)
{
	if (!grow(r))
		return;
	struct nf_finding f = {.severity = sev, .scope = scope, .code = code, .gate = gate,
			       .klass = klass, .line = site ? site->line : 0};
	va_list ap;
	va_start(ap, evidence_fmt);
	int rc = vasprintf(&f.evidence, evidence_fmt, ap);
	va_end(ap);
	if (rc < 0)
		f.evidence = NULL;
	f.where = site_where(site);
	bool ok = rc >= 0 && f.where;
	if (ok && site && site->file && !(f.file = strdup(site->file)))
		ok = false;
	if (ok && site && site->key && !(f.key = strdup(site->key)))
		ok = false;
	if (!ok) {
		finding_free(&f);
		r->oom = true;
		return;
	}
	r->items[r->count++] = f;
}

void nf_report_append(struct nf_report *dst, struct nf_report *src)
{
	if (src->count && dst->count + src->count > dst->cap) {
		size_t cap = dst->cap ? dst->cap : 16;
		while (cap < dst->count + src->count)
			cap *= 2;
		struct nf_finding *n = realloc(dst->items, cap * sizeof *n);
		if (!n) {
			dst->oom = true;
			nf_report_free(src);
			return;
		}
		dst->items = n;
		dst->cap = cap;
	}
	if (src->count)
		memcpy(dst->items + dst->count, src->items, src->count * sizeof *src->items);
	dst->count += src->count;
	dst->oom |= src->oom;
	free(src->items);
	nf_report_init(src);
}

size_t nf_report_count(const struct nf_report *r, enum nf_severity sev, int scope)
{
	size_t n = 0;
	for (size_t i = 0; i < r->count; i++)
		if (r->items[i].severity == sev && (scope < 0 || (int)r->items[i].scope == scope))
			n++;
	return n;
}

size_t nf_report_count_gate(const struct nf_report *r, char gate, enum nf_severity sev)
{
	size_t n = 0;
	for (size_t i = 0; i < r->count; i++)
		if (r->items[i].gate == gate && r->items[i].severity == sev)
			n++;
	return n;
}

size_t nf_report_count_class(const struct nf_report *r, enum nf_class klass)
{
	size_t n = 0;
	for (size_t i = 0; i < r->count; i++)
		if (r->items[i].klass == klass)
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

const char *nf_class_name(enum nf_class c)
{
	switch (c) {
	case NF_CLASS_NONE: return NULL;
	case NF_CLASS_ERROR: return "ERROR";
	case NF_CLASS_BLOCKED_REPRODUCIBILITY: return "BLOCKED_REPRODUCIBILITY";
	case NF_CLASS_WARNING_VENDOR: return "WARNING_VENDOR";
	case NF_CLASS_WARNING_SERVICE: return "WARNING_SERVICE";
	}
	return NULL;
}

/* Declared in reader/internal.h: the reader drops the findings of a
 * streamed build it throws away (it then reads the text as a whole). */
void nf_report_truncate(struct nf_report *r, size_t count, bool oom);
void nf_report_truncate(struct nf_report *r, size_t count, bool oom)
{
	for (size_t i = count; i < r->count; i++)
		finding_free(&r->items[i]);
	if (count < r->count)
		r->count = count;
	r->oom = oom;
}
