/* reader/manifest.c — parse the manifest of `ninfer-pack create` (see
 * manifest.h and man ninfer-pack(1)).  Pure string work; only
 * nf_manifest_stat_sources() touches the filesystem. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reader/manifest.h"

/* Top-level members copied into the directory as they are. */
static const char *const directory_members[] = {"components", "bindings", "uses", "metadata",
						"provenance"};

static bool is_directory_member(const char *key)
{
	for (size_t i = 0; i < sizeof directory_members / sizeof directory_members[0]; i++)
		if (strcmp(key, directory_members[i]) == 0)
			return true;
	return false;
}

/* "objects[I] ID" for findings; ID empty when the object has no string id. */
static void object_where(char *buf, size_t size, size_t i, json_t *obj)
{
	const char *id = json_string_value(json_object_get(obj, "id"));
	snprintf(buf, size, "objects[%zu] %s", i, id ? id : "");
}

static int nomem(struct nf_report *report)
{
	nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "MANIFEST_NOMEM", "",
		      "out of memory");
	return -ENOMEM;
}

void nf_manifest_free(struct nf_manifest *m)
{
	if (!m)
		return;
	if (m->paths)
		for (size_t i = 0; i < m->nobjects; i++)
			free(m->paths[i]);
	free(m->paths);
	free(m->objects);
	free(m->bytes_given);
	json_decref(m->records);
	json_decref(m->directory);
	memset(m, 0, sizeof *m);
}

/* One element of "objects": its record (every member but the source ones),
 * its resolved path and its source range.  Returns 0, -EINVAL (finding
 * added) or -ENOMEM. */
static int parse_object(struct nf_manifest *m, size_t i, json_t *val, const char *base_dir,
			struct nf_report *report)
{
	char where[256];
	object_where(where, sizeof where, i, val);
	const char *src = json_string_value(json_object_get(val, "source"));
	if (!json_is_object(val) || !src || !*src) {
		nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "MANIFEST_SOURCE", where,
			      "needs a \"source\" path");
		return -EINVAL;
	}
	json_t *so = json_object_get(val, "source_offset"), *by = json_object_get(val, "bytes");
	if ((so && (!json_is_integer(so) || json_integer_value(so) < 0)) ||
	    (by && (!json_is_integer(by) || json_integer_value(by) <= 0))) {
		nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "MANIFEST_SOURCE_RANGE", where,
			      "source_offset and bytes must be non-negative (bytes positive) integers");
		return -EINVAL;
	}
	json_t *rec = json_object();
	if (!rec || json_array_append_new(m->records, rec) != 0)
		return -ENOMEM;
	const char *key;
	json_t *v;
	json_object_foreach(val, key, v) {
		if (strcmp(key, "source") && strcmp(key, "source_offset") && strcmp(key, "bytes") &&
		    json_object_set(rec, key, v) != 0)
			return -ENOMEM;
	}
	if (src[0] == '/')
		m->paths[i] = strdup(src);
	else if (asprintf(&m->paths[i], "%s/%s", base_dir, src) < 0)
		m->paths[i] = NULL;
	if (!m->paths[i])
		return -ENOMEM;
	struct nf_write_object *o = &m->objects[i];
	o->record = rec;
	o->source = NF_SRC_FILE;
	o->path = m->paths[i];
	o->src_offset = so ? (uint64_t)json_integer_value(so) : 0;
	o->bytes = by ? (uint64_t)json_integer_value(by) : 0;
	m->bytes_given[i] = by != NULL;
	return 0;
}

int nf_manifest_parse(const char *text, size_t len, const char *base_dir, struct nf_manifest *m,
		      struct nf_report *report)
{
	memset(m, 0, sizeof *m);
	if (!base_dir)
		base_dir = ".";
	json_error_t err;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	if (!doc) {
		char pos[64];
		snprintf(pos, sizeof pos, "%d:%d", err.line, err.column);
		nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "MANIFEST_JSON", pos, "%s",
			      err.text);
		return -EINVAL;
	}
	int rc = -EINVAL;
	if (!json_is_object(doc)) {
		nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "MANIFEST_NOT_OBJECT", "",
			      "the manifest is not a JSON object");
		goto out;
	}
	m->directory = json_object();
	m->records = json_array();
	if (!m->directory || !m->records) {
		rc = nomem(report);
		goto out;
	}
	bool bad = false;
	const char *key;
	json_t *val;
	json_object_foreach(doc, key, val) {
		if (strcmp(key, "objects") == 0)
			continue;
		if (!is_directory_member(key)) {
			nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "MANIFEST_UNKNOWN_MEMBER", "",
				      "unknown manifest member \"%s\"", key);
			bad = true;
			continue;
		}
		if (json_object_set(m->directory, key, val) != 0) {
			rc = nomem(report);
			goto out;
		}
	}
	json_t *arr = json_object_get(doc, "objects");
	if (!json_is_array(arr) || json_array_size(arr) == 0) {
		nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "MANIFEST_OBJECTS", "",
			      "\"objects\" must be a non-empty array");
		goto out;
	}
	size_t n = json_array_size(arr);
	m->objects = calloc(n, sizeof *m->objects);
	m->paths = calloc(n, sizeof *m->paths);
	m->bytes_given = calloc(n, 1);
	if (!m->objects || !m->paths || !m->bytes_given) {
		rc = nomem(report);
		goto out;
	}
	m->nobjects = n;
	for (size_t i = 0; i < n; i++) {
		int r = parse_object(m, i, json_array_get(arr, i), base_dir, report);
		if (r == -ENOMEM) {
			rc = nomem(report);
			goto out;
		}
		if (r)
			bad = true;
	}
	rc = bad ? -EINVAL : 0;
out:
	json_decref(doc);
	if (rc)
		nf_manifest_free(m);
	return rc;
}

int nf_manifest_stat_sources(struct nf_manifest *m, struct nf_report *report)
{
	for (size_t i = 0; i < m->nobjects; i++) {
		struct nf_write_object *o = &m->objects[i];
		char where[256];
		object_where(where, sizeof where, i, o->record);
		struct stat st;
		if (stat(o->path, &st) != 0) {
			int e = errno;
			nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "MANIFEST_SOURCE_STAT", where,
				      "%s: %s", o->path, strerror(e));
			return -e;
		}
		/* A directory's st_size (4096 on ext4) is no byte count, and a
		 * FIFO would block the writer: say what it is (issue 11). */
		if (!S_ISREG(st.st_mode)) {
			nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "MANIFEST_SOURCE_TYPE", where,
				      "%s %s, not a regular file", o->path, nf_file_kind(st.st_mode));
			return -EINVAL;
		}
		if (m->bytes_given[i])
			continue;
		if ((uint64_t)st.st_size <= o->src_offset) {
			nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "MANIFEST_SOURCE_EMPTY", where,
				      "%s holds no bytes after source_offset", o->path);
			return -EINVAL;
		}
		o->bytes = (uint64_t)st.st_size - o->src_offset;
	}
	return 0;
}
