/* fs/stats.c — the `stats` document: live counters, one snapshot per open. */
#include <jansson.h>
#include <stdlib.h>

#include "fs/context.h"

static const char *status_name(enum nf_file_status s)
{
	switch (s) {
	case NF_FILE_PRESENT: return "present";
	case NF_FILE_MISSING: return "missing";
	case NF_FILE_BAD: return "bad";
	default: return "unchecked";
	}
}

static json_t *file_stats(struct nf_fs *fs, uint32_t i)
{
	const struct nf_file_counters *c = &fs->files[i];
	const char *path = fs->a->files[i].path ? fs->a->files[i].path : fs->a->entry_name;

	return json_pack("{s:I,s:s,s:s,s:I,s:I,s:I}", "index", (json_int_t)i, "path", path, "status",
			 status_name(nf_file_status(fs->a, i, NULL)),
			 "reads", (json_int_t)atomic_load(&c->reads),
			 "bytes", (json_int_t)atomic_load(&c->bytes),
			 "errors", (json_int_t)atomic_load(&c->errors));
}

char *nf_stats_json(struct nf_fs *fs)
{
	json_t *files = json_array(), *doc;
	char *text = NULL, *out = NULL;

	for (uint32_t i = 0; files && i < fs->a->nfiles; i++)
		json_array_append_new(files, file_stats(fs, i));
	doc = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:o*}",
			"reads", (json_int_t)atomic_load(&fs->reads),
			"bytes", (json_int_t)atomic_load(&fs->bytes),
			"errors", (json_int_t)atomic_load(&fs->errors),
			"uring_submissions", (json_int_t)atomic_load(&fs->submissions),
			"uring_sqes", (json_int_t)atomic_load(&fs->sqes),
			"short_reads", (json_int_t)atomic_load(&fs->short_reads),
			"files", files);
	/* the open-file cache of the parts (issue 11) */
	struct nf_files_stats fst;
	nf_files_stats(fs->a, &fst);
	if (doc)
		json_object_set_new(doc, "descriptors",
				    json_pack("{s:b,s:I,s:I,s:I,s:I,s:I}", "fixed_files", fs->fixed_files,
					      "open", (json_int_t)fst.open, "open_max",
					      (json_int_t)fst.open_max, "evictions",
					      (json_int_t)fst.evictions, "reopens",
					      (json_int_t)fst.reopens, "changed_files",
					      (json_int_t)fst.changes));
	if (doc)
		text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (text && asprintf(&out, "%s\n", text) < 0)
		out = NULL;
	free(text);
	return out;
}
