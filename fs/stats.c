/* fs/stats.c — the `stats` document: live counters, one snapshot per open.
 * The engine's counters go under the names it gives (io_uring:
 * uring_submissions, uring_sqes, short_reads), the family's open-file
 * cache under "descriptors". */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "fs/context.h"
#include "report/report.h"

/* A remote file's account (the engine's): where, its state, what it cost. */
static json_t *engine_file_stats(struct nf_fs *fs, uint32_t i)
{
	struct nf_engine_file_stats st;

	if (fs->engine.ops->file_stats == NULL ||
	    fs->engine.ops->file_stats(fs->engine.state, i, &st) < 0)
		return NULL;
	return json_pack("{s:s,s:s,s:i,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			 "url", st.url, "status", st.status, "http_status", st.http_status,
			 "reason", st.reason,
			 "bytes_fetched", (json_int_t)st.bytes_fetched,
			 "requests", (json_int_t)st.requests,
			 "retries", (json_int_t)st.retries,
			 "cache_hits", (json_int_t)st.cache_hits,
			 "cache_misses", (json_int_t)st.cache_misses,
			 "prefetch_hits", (json_int_t)st.prefetch_hits,
			 "prefetch_bytes", (json_int_t)st.prefetch_bytes);
}

static json_t *file_stats(struct nf_fs *fs, const struct nf_counts *sum, uint32_t i)
{
	const struct nf_fcount *c = &sum->files[i];
	json_t *o = json_pack("{s:I,s:s,s:s,s:I,s:I,s:I}", "index", (json_int_t)i,
			      "path", fs->set.names[i],
			      "status", nf_fstatus_name(fs->set.ops->status(fs->set.arg, i, NULL)),
			      "reads", (json_int_t)atomic_load(&c->reads),
			      "bytes", (json_int_t)atomic_load(&c->bytes),
			      "errors", (json_int_t)atomic_load(&c->errors));
	json_t *r = o ? engine_file_stats(fs, i) : NULL;

	if (r)
		json_object_set_new(o, "remote", r);
	return o;
}

/* The request sizes: {"4096": n, "8192": n, ..., "1048576": n, "more": n},
 * every bucket, in order (a bucket counts the sizes above the previous
 * bound, up to its own). */
static json_t *size_stats(const struct nf_counts *sum)
{
	json_t *o = json_object();

	for (unsigned k = 0; o && k < NF_SIZE_BUCKETS; k++) {
		char key[24];
		if (k + 1 < NF_SIZE_BUCKETS)
			snprintf(key, sizeof key, "%zu", (size_t)4096 << k);
		else
			snprintf(key, sizeof key, "more");
		json_object_set_new(o, key, json_integer((json_int_t)atomic_load(&sum->sizes[k])));
	}
	return o;
}

char *nf_stats_json(struct nf_fs *fs)
{
	const struct nf_engine_ops *eng = fs->engine.ops;
	struct nf_counts sum;
	json_t *files, *doc;

	if (nf_counters_sum(fs, &sum) < 0)
		return NULL;
	files = json_array();
	for (uint32_t i = 0; files && i < fs->set.n; i++)
		json_array_append_new(files, file_stats(fs, &sum, i));
	doc = json_pack("{s:s,s:I,s:I,s:I}", "engine", eng->name,
			"reads", (json_int_t)atomic_load(&sum.reads),
			"bytes", (json_int_t)atomic_load(&sum.bytes),
			"errors", (json_int_t)atomic_load(&sum.errors));
	for (unsigned k = 0; doc && k < eng->nstats; k++)
		json_object_set_new(doc, eng->stat_names[k],
				    json_integer((json_int_t)atomic_load(&sum.engine[k])));
	if (doc)
		json_object_set_new(doc, "read_sizes", size_stats(&sum));
	free(sum.files);
	if (doc && files)
		json_object_set_new(doc, "files", files);
	else
		json_decref(files);
	struct nf_set_stats fst;
	fs->set.ops->stats(fs->set.arg, &fst);
	if (doc)
		json_object_set_new(doc, "descriptors",
				    json_pack("{s:b,s:I,s:I,s:I,s:I,s:I}",
					      "fixed_files", fs->engine.fixed_files,
					      "open", (json_int_t)fst.open,
					      "open_max", (json_int_t)fst.open_max,
					      "evictions", (json_int_t)fst.evictions,
					      "reopens", (json_int_t)fst.reopens,
					      "changed_files", (json_int_t)fst.changes));
	return nf_json_document(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
}
