/* reader/directory_files.c — the files table (seed §2.2, §3.3).
 *
 * files[0] is the entry (path null), files[i>0] the continuation parts.
 * Each holds B_i bytes of the logical payload starting at P_i = sum B_j
 * (j < i).  A record with a bad path keeps its place in the address space
 * (the other files stay readable) but is never opened; a bad payload_bytes
 * makes the address space undefined, so then no file is usable. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

static const char *const file_fields[] = {"path", "payload_bytes", NULL};

struct path_ix {
	const char *path;
	uint32_t index;
};

static int cmp_path(const void *x, const void *y)
{
	const struct path_ix *a = x, *b = y;
	int c = strcmp(a->path, b->path);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

void nf_build_files(struct nf_build *b, json_t *files, uint64_t entry_size)
{
	struct nf_artifact *a = b->a;
	size_t n = json_array_size(files);
	b->files_ok = false;
	if (n == 0)
		return; /* FILES_EMPTY was reported; there is no address space */
	if (n > UINT32_MAX) {
		struct nf_where w = {.table = "root"};
		nf_dir_error(b, &w, "FILES_TOO_MANY", "the files table has %zu entries; at most %u are "
			     "supported", n, UINT32_MAX);
		return;
	}
	struct nf_file *f = nf_arena_calloc(b->ar, n, sizeof *f);
	struct nf_file_state *st = calloc(n ? n : 1, sizeof *st);
	if (!f || !st) {
		free(st);
		b->ar->failed = true;
		return;
	}
	a->priv->files = st;
	bool sizes_ok = true;
	uint64_t p = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *rec = json_array_get(files, i);
		st[i].status = NF_FILE_UNCHECKED;
		st[i].path_ok = true;
		struct nf_where w = {.table = "files", .index = i};
		struct nf_rec rc = {.b = b, .w = &w, .what = "a files record (seed §3.3)", .obj = rec};
		if (!json_is_object(rec)) {
			nf_dir_error(b, &w, "FIELD_TYPE", "seed §3.3: a files record is an object; it is %s",
				     nf_json_type_name(b, rec));
			sizes_ok = false;
			st[i].path_ok = false;
			continue;
		}
		json_t *path = json_object_get(rec, "path");
		if (path && json_is_string(path))
			w.name = json_string_value(path);
		nf_rec_members(&rc, file_fields, NULL);
		json_t *pv = nf_rec_get(&rc, "path", true);
		if (i == 0) {
			/* seed §3.3: the entry is files[0] and its path is null. */
			if (pv && !json_is_null(pv))
				nf_dir_error(b, &w, "FILES_ENTRY_PATH_NOT_NULL",
					     "seed §3.3: files[0] describes the entry, its path must be "
					     "null; it is %s", nf_json_type_name(b, pv));
		} else if (!pv) {
			st[i].path_ok = false;
		} else if (!json_is_string(pv)) {
			nf_dir_error(b, &w, "FIELD_TYPE", "seed §3.3: the path of a part is a file name "
				     "string; it is %s", nf_json_type_name(b, pv));
			st[i].path_ok = false;
		} else {
			const char *code = NULL;
			const char *why = nf_part_path_problem(json_string_value(pv),
							       json_string_length(pv), a->entry_name, &code);
			if (why) {
				nf_dir_error(b, &w, code, "seed §3.3: a part path is a plain file name "
					     "beside the entry; \"%s\" %s", json_string_value(pv), why);
				st[i].path_ok = false;
			}
			/* Kept for files.json and messages; path_ok guards opening. */
			f[i].path = nf_arena_strdup(b->ar, json_string_value(pv));
		}
		uint64_t bytes = 0;
		if (nf_rec_u64(&rc, "payload_bytes", true, true, &bytes) != 1) {
			sizes_ok = false;
			continue;
		}
		f[i].payload_bytes = bytes;
		f[i].logical_start = p;
		if (__builtin_add_overflow(p, bytes, &p)) {
			nf_dir_error(b, &w, "PAYLOAD_OVERFLOW", "seed §2.2: the prefix sum P_%zu + "
				     "payload_bytes %" PRIu64 " exceeds U64", i + 1, bytes);
			sizes_ok = false;
			break;
		}
		uint64_t start = i == 0 ? a->entry_payload_start : NF_PART_PAYLOAD_START;
		f[i].data_offset = start;
		if (__builtin_add_overflow(start, bytes, &f[i].file_bytes)) {
			nf_dir_error(b, &w, "PAYLOAD_OVERFLOW", "seed §3: the file length %" PRIu64
				     " + %" PRIu64 " exceeds U64", start, bytes);
			sizes_ok = false;
		}
	}

	/* Unique part names (seed §3.3): sort, then compare neighbours. */
	size_t np = 0;
	struct path_ix *ix = malloc((n ? n : 1) * sizeof *ix);
	if (!ix) {
		b->ar->failed = true;
	} else {
		for (size_t i = 1; i < n; i++)
			if (f[i].path && st[i].path_ok)
				ix[np++] = (struct path_ix){f[i].path, (uint32_t)i};
		qsort(ix, np, sizeof *ix, cmp_path);
		for (size_t k = 1; k < np; k++) {
			if (strcmp(ix[k].path, ix[k - 1].path) != 0)
				continue;
			uint32_t i = ix[k].index;
			struct nf_where w = {.table = "files", .index = i, .name = f[i].path};
			nf_dir_error(b, &w, "FILES_PATH_DUPLICATE", "seed §3.3: part names are unique; "
				     "files[%u] has the same path", ix[k - 1].index);
			st[i].path_ok = false;
			st[ix[k - 1].index].path_ok = false;
		}
		free(ix);
	}
	for (size_t i = 1; i < n; i++)
		if (!st[i].path_ok) {
			st[i].status = NF_FILE_BAD;
			st[i].code = "FILES_PATH_INVALID";
			st[i].reason = strdup("the path breaks seed §3.3 and is never opened");
		}

	a->files = f;
	a->nfiles = (uint32_t)n;
	if (!sizes_ok)
		return;
	a->payload_bytes = p;
	b->files_ok = true;

	/* seed §3.1: entry_file_bytes = entry_payload_start + files[0].payload_bytes. */
	if (n > 0 && f[0].file_bytes != entry_size) {
		struct nf_where w = {.table = "files", .index = 0, .name = a->entry_name};
		nf_dir_error(b, &w, "ENTRY_BAD_LENGTH", "seed §3.1: the entry must be entry_payload_start "
			     "%" PRIu64 " + files[0].payload_bytes %" PRIu64 " = %" PRIu64
			     " bytes; %s has %" PRIu64, a->entry_payload_start, f[0].payload_bytes,
			     f[0].file_bytes, a->entry_name, entry_size);
	}
}
