/* reader/report_json.c — the validation report (contract §4) as JSON and
 * as text, and files.json (contract §2). */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "nf_version.h"
#include "reader/internal.h"
#include "remote/remote.h"

char *nf_report_to_json(const struct nf_report *r, const struct nf_artifact *a,
			const char *entry_path, const char *tool, int argc, char *const *argv)
{
	json_t *doc = json_object();
	json_t *t = json_object();
	json_t *args = json_array();
	json_t *art = json_object();
	json_t *comps = json_array();
	json_t *findings = json_array();
	if (!doc || !t || !args || !art || !comps || !findings) {
		json_decref(doc);
		json_decref(t);
		json_decref(args);
		json_decref(art);
		json_decref(comps);
		json_decref(findings);
		return NULL;
	}
	nf_json_put(doc, "schema", json_string("ninferfs-validation/v1"));
	nf_json_put(t, "name", json_string(tool ? tool : "ninfer-check"));
	nf_json_put(t, "version", json_string(NF_VERSION));
	for (int i = 0; i < argc && argv; i++)
		json_array_append_new(args, nf_json_text(argv[i]));
	nf_json_put(t, "argv", args);
	nf_json_put(t, "exit_status", json_integer(nf_report_exit_status(r)));
	nf_json_put(doc, "tool", t);

	const char *entry = entry_path ? entry_path : (a ? a->entry_path : NULL);
	nf_json_put(art, "entry", nf_json_text(entry));
	nf_json_put(art, "artifact_id", a ? json_string(a->artifact_id_hex) : json_null());
	nf_json_put(art, "files", json_integer(a ? a->nfiles : 0));
	nf_json_put(art, "payload_bytes", nf_json_u64(a ? a->payload_bytes : 0));
	nf_json_put(art, "objects", json_integer(a ? a->nobjects : 0));
	nf_json_put(art, "bindings", json_integer(a ? a->nbindings : 0));
	nf_json_put(art, "uses", json_integer(a ? a->nuses : 0));
	for (uint32_t i = 0; a && i < a->ncomponents; i++)
		json_array_append_new(comps, nf_json_text(a->components[i].id));
	nf_json_put(art, "components", comps);
	nf_json_put(doc, "artifact", art);

	for (size_t i = 0; i < r->count; i++) {
		const struct nf_finding *f = &r->items[i];
		json_t *o = json_object();
		if (!o)
			break;
		nf_json_put(o, "severity", json_string(nf_severity_name(f->severity)));
		nf_json_put(o, "scope", json_string(nf_scope_name(f->scope)));
		nf_json_put(o, "code", json_string(f->code));
		/* where/evidence quote JSON strings (valid UTF-8) but also
		 * file names and raw header bytes. */
		nf_json_put(o, "where", nf_json_text(f->where));
		nf_json_put(o, "evidence", nf_json_text(f->evidence));
		json_array_append_new(findings, o);
	}
	nf_json_put(doc, "findings", findings);
	nf_json_put(doc, "verdict", json_string(nf_report_verdict(r)));
	return nf_json_document(doc, JSON_INDENT(2));
}

void nf_report_print_text(FILE *out, const struct nf_report *r, const struct nf_artifact *a,
			  const char *entry_path)
{
	for (size_t i = 0; i < r->count; i++) {
		const struct nf_finding *f = &r->items[i];
		fprintf(out, "%-7s %s  %s: %s\n", nf_severity_name(f->severity), f->code, f->where,
			f->evidence);
	}
	if (r->oom)
		fprintf(out, "error   OUT_OF_MEMORY  report: some findings could not be recorded\n");
	const char *entry = entry_path ? entry_path : (a ? a->entry_path : "?");
	size_t errors = nf_report_count(r, NF_SEV_ERROR, -1);
	size_t warnings = nf_report_count(r, NF_SEV_WARNING, -1);
	if (a)
		fprintf(out, "%s: artifact %s, %" PRIu32 " file%s, %" PRIu64 " payload bytes, %" PRIu32
			" objects, %" PRIu32 " bindings, %" PRIu32 " uses, %" PRIu32
			" components; %zu error%s, %zu warning%s: %s\n", entry, a->artifact_id_hex,
			a->nfiles, a->nfiles == 1 ? "" : "s", a->payload_bytes, a->nobjects,
			a->nbindings, a->nuses, a->ncomponents, errors, errors == 1 ? "" : "s",
			warnings, warnings == 1 ? "" : "s", nf_report_verdict(r));
	else
		fprintf(out, "%s: not readable as an artifact; %zu error%s, %zu warning%s: %s\n", entry,
			errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s",
			nf_report_verdict(r));
}

static const char *status_name(enum nf_file_status s)
{
	switch (s) {
	case NF_FILE_PRESENT: return "present";
	case NF_FILE_MISSING: return "missing";
	case NF_FILE_BAD: return "bad";
	case NF_FILE_UNCHECKED: return "unchecked";
	}
	return "unchecked";
}

/* A remote file's URL (redacted) and what fetching it cost: the engine's
 * counters when the document was made (issue 14). */
static void put_remote(json_t *o, const struct nf_artifact *a, uint32_t i)
{
	struct nf_remote *r = nf_artifact_remote(a);
	struct nf_remote_file_stats st;
	const char *url = nf_file_url(a, i);

	if (r == NULL || url == NULL || nf_remote_file_stats(r, i, &st) < 0)
		return;
	nf_json_put(o, "url", json_string(url));
	json_t *x = json_object();
	if (!x)
		return;
	nf_json_put(x, "status", json_string(nf_remote_status_name(st.status)));
	nf_json_put(x, "http_status", json_integer(st.http_status));
	if (st.reason[0])
		nf_json_put(x, "reason", nf_json_text(st.reason));
	if (st.etag[0])
		nf_json_put(x, "etag", nf_json_text(st.etag));
	nf_json_put(x, "bytes_fetched", nf_json_u64(st.bytes_fetched));
	nf_json_put(x, "requests", nf_json_u64(st.requests));
	nf_json_put(x, "retries", nf_json_u64(st.retries));
	nf_json_put(x, "cache_hits", nf_json_u64(st.cache_hits));
	nf_json_put(x, "cache_misses", nf_json_u64(st.cache_misses));
	nf_json_put(o, "remote", x);
}

char *nf_files_json(const struct nf_artifact *a)
{
	json_t *arr = json_array();
	if (!arr)
		return NULL;
	for (uint32_t i = 0; a && i < a->nfiles; i++) {
		const struct nf_file *f = &a->files[i];
		json_t *o = json_object();
		if (!o)
			break;
		const char *reason = NULL;
		enum nf_file_status s = nf_file_status(a, i, &reason);
		nf_json_put(o, "index", json_integer(i));
		nf_json_put(o, "path", nf_json_text(f->path));
		nf_json_put(o, "payload_begin", nf_json_u64(f->logical_start));
		nf_json_put(o, "payload_end", nf_json_u64(f->logical_start + f->payload_bytes));
		nf_json_put(o, "data_offset", nf_json_u64(f->data_offset));
		nf_json_put(o, "file_bytes", nf_json_u64(f->file_bytes));
		nf_json_put(o, "status", json_string(status_name(s)));
		if ((s == NF_FILE_BAD || s == NF_FILE_MISSING) && reason)
			nf_json_put(o, "reason", nf_json_text(reason));
		put_remote(o, a, i);
		json_array_append_new(arr, o);
	}
	return nf_json_document(arr, JSON_INDENT(2));
}
