/* reader/writer.c — writing an artifact set (seed §2.1, §2.3, §3, §11.4;
 * codecs §7 for the JSON as the Python writer emits it).
 *
 * Phases:
 *   1. check the inputs (records, sizes against the codec registry, ids,
 *      references) — nothing touches the disk before this passes;
 *   2. plan: lay the objects out, serialise the JSON, reserve JSON space,
 *      compute the files table for max_file_bytes, iterating until the
 *      files table and the reserved JSON length are stable;
 *   3. remove the temporary directories killed runs of this target left
 *      (writer_tmp.c: their owner lock is free), then write every file
 *      under its final name inside a fresh, locked temporary directory
 *      beside the target, headers, JSON, zero gaps (files are pre-sized),
 *      then stream the object bytes;
 *   4. validate the temporary set with the reader (nf_artifact_open +
 *      nf_artifact_check_files, no error findings), compare its model with
 *      the plan and check coverage and file lengths;
 *   5. publish with renameat2(RENAME_NOREPLACE): parts first, entry last;
 *      never replace an existing file; undo on any failure. */
#include "reader/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "codecs/codec.h"
#include "reader/artifact.h"
#include "reader/writer_tmp.h"

#define W_ALIGN_TENSOR 256u
#define W_PAGE 4096u
#define W_CHUNK ((uint64_t)8 << 20)     /* progress / copy granule */
#define W_BUF_BYTES ((size_t)1 << 20)   /* pread/pwrite fallback buffer */
#define W_MAX_PLAN_ROUNDS 64

static const uint8_t entry_magic[8] = {0x4e, 0x49, 0x4e, 0x46, 0x45, 0x52, 0x00, 0x03};
static const uint8_t part_magic[8] = {0x4e, 0x49, 0x4e, 0x50, 0x52, 0x54, 0x00, 0x03};

/* ------------------------------------------------------------------ */
/* small helpers */

static bool add_u64(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_add_overflow(a, b, out); }

static bool align_up_u64(uint64_t x, uint64_t a, uint64_t *out)
{
	uint64_t t;
	if (!add_u64(x, a - 1, &t))
		return false;
	*out = t / a * a;
	return true;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static struct nf_report *scratch_report(struct nf_report *r, struct nf_report *scratch)
{
	if (r)
		return r;
	nf_report_init(scratch);
	return scratch;
}

int nf_split_capacities(uint64_t limit, uint64_t entry_payload_start,
			uint64_t *entry_capacity, uint64_t *part_capacity)
{
	/* seed §2.3 */
	if (limit <= entry_payload_start || limit <= NF_PART_PAYLOAD_START)
		return -EINVAL;
	uint64_t ec = (limit - entry_payload_start) / W_PAGE * W_PAGE;
	uint64_t pc = (limit - NF_PART_PAYLOAD_START) / W_PAGE * W_PAGE;
	if (ec == 0 || pc == 0)
		return -EINVAL;
	if (entry_capacity)
		*entry_capacity = ec;
	if (part_capacity)
		*part_capacity = pc;
	return 0;
}

int nf_part_name(char *buf, size_t size, const char *entry_name, uint64_t index)
{
	if (!buf || !entry_name || index == 0)
		return -EINVAL;
	int n = snprintf(buf, size, "%s.part-%04" PRIu64, entry_name, index);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

const char *nf_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "is a regular file";
	case S_IFDIR: return "is a directory";
	case S_IFIFO: return "is a FIFO";
	case S_IFCHR: return "is a character device";
	case S_IFBLK: return "is a block device";
	case S_IFSOCK: return "is a socket";
	case S_IFLNK: return "is a symbolic link";
	}
	return "is of an unknown file type";
}

/* ------------------------------------------------------------------ */
/* phase 1: input checks */

struct wobj {
	const struct nf_write_object *in;
	const char *id;
	bool tensor;
	uint64_t elements;    /* tensors: elements(shape) (0 when unknown shape) */
	uint32_t rank;
	uint64_t rows, cols;  /* rank-2 only */
	uint64_t offset;
};

static bool json_is_u64(const json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

static int check_record(struct wobj *o, const struct nf_write_opts *opts, size_t idx,
			struct nf_report *rep)
{
	char where[256];
	const json_t *rec = o->in->record;
	const char *idtxt = NULL;
	if (json_is_object(rec) && json_is_string(json_object_get(rec, "id")))
		idtxt = json_string_value(json_object_get(rec, "id"));
	snprintf(where, sizeof where, "objects[%zu] %s", idx, idtxt ? idtxt : "?");

	if (!json_is_object(rec)) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
			      "the object record is not a JSON object");
		return -EINVAL;
	}
	if (!idtxt || !*idtxt) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
			      "id must be a non-empty string (seed §1 ID)");
		return -EINVAL;
	}
	o->id = idtxt;
	const char *kind = json_string_value(json_object_get(rec, "kind"));
	if (!kind || (strcmp(kind, "tensor") != 0 && strcmp(kind, "resource") != 0)) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
			      "kind must be \"tensor\" or \"resource\" (seed §5)");
		return -EINVAL;
	}
	o->tensor = strcmp(kind, "tensor") == 0;
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)rec, key, val) {
		static const char *const tensor_keys[] = {"id", "kind", "shape", "format", "layout",
							  "divisors", "offset", "bytes", NULL};
		static const char *const res_keys[] = {"id", "kind", "encoding", "offset", "bytes", NULL};
		const char *const *allowed = o->tensor ? tensor_keys : res_keys;
		bool ok = false;
		for (size_t i = 0; allowed[i]; i++)
			ok |= strcmp(allowed[i], key) == 0;
		if (!ok) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
				      "unknown member \"%s\" for a %s record (seed §5)", key, kind);
			return -EINVAL;
		}
	}
	if (o->in->bytes == 0) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
			      "bytes must be positive (seed §5)");
		return -EINVAL;
	}
	if (o->in->bytes > (uint64_t)INT64_MAX) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
			      "bytes %" PRIu64 " too large for this writer", o->in->bytes);
		return -EINVAL;
	}
	switch (o->in->source) {
	case NF_SRC_MEMORY:
		if (!o->in->data)
			goto nosrc;
		break;
	case NF_SRC_FILE:
		if (!o->in->path)
			goto nosrc;
		break;
	case NF_SRC_ARTIFACT:
		if (!o->in->artifact)
			goto nosrc;
		break;
	default:
	nosrc:
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
			      "the object has no byte source");
		return -EINVAL;
	}

	if (!o->tensor) {
		const char *enc = json_string_value(json_object_get(rec, "encoding"));
		if (!enc || (strcmp(enc, "raw_bytes_v1") != 0 && !opts->allow_unknown)) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
				      "resource encoding must be \"raw_bytes_v1\" (seed §5.2)");
			return -EINVAL;
		}
		o->elements = o->in->bytes;
		return 0;
	}

	const json_t *shape = json_object_get(rec, "shape");
	const char *format = json_string_value(json_object_get(rec, "format"));
	const char *layout = json_string_value(json_object_get(rec, "layout"));
	if (!json_is_array(shape) || json_array_size(shape) > NF_MAX_RANK || !format || !*format ||
	    !layout || !*layout) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
			      "a tensor needs shape (0..16 positive integers), format and layout (seed §5.1)");
		return -EINVAL;
	}
	uint64_t dims[NF_MAX_RANK];
	uint64_t elements = 1;
	o->rank = (uint32_t)json_array_size(shape);
	for (uint32_t i = 0; i < o->rank; i++) {
		if (!json_is_u64(json_array_get(shape, i), &dims[i]) || dims[i] == 0 ||
		    __builtin_mul_overflow(elements, dims[i], &elements)) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
				      "shape[%u] is not a positive integer or the product overflows", i);
			return -EINVAL;
		}
	}
	o->elements = elements;
	if (o->rank == 2) {
		o->rows = dims[0];
		o->cols = dims[1];
	}
	uint64_t divisors = 1;
	const json_t *dv = json_object_get(rec, "divisors");
	if (dv && (!json_is_u64(dv, &divisors) || divisors == 0)) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
			      "divisors must be a positive integer (seed §5.1)");
		return -EINVAL;
	}
	struct nf_geometry g;
	enum nf_codec_status st = nf_geometry_init(&g, format, layout, o->rank, dims, divisors);
	if (st == NF_CODEC_OK) {
		if (g.bytes != o->in->bytes) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_SIZE_MISMATCH", where,
				      "%" PRIu64 " bytes given, but %s/%s has an encoded size of %" PRIu64
				      " (seed §5.3)", o->in->bytes, format, layout, g.bytes);
			return -EINVAL;
		}
		return 0;
	}
	if (opts->allow_unknown &&
	    (st == NF_CODEC_UNKNOWN_FORMAT || st == NF_CODEC_UNKNOWN_LAYOUT))
		return 0;
	nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_CODEC", where,
		      "%s/%s: %s", format, layout, nf_codec_status_str(st));
	return -EINVAL;
}

/* A Binding (seed §7.1): {"object": id} or {"parts": [{"object","range"}]}. */
static int check_binding(const json_t *b, json_t *ids, const struct wobj *objs, const char *where,
			 struct nf_report *rep)
{
	if (!json_is_object(b))
		goto bad;
	const json_t *obj = json_object_get(b, "object");
	const json_t *parts = json_object_get(b, "parts");
	if ((obj != NULL) == (parts != NULL) || json_object_size(b) != 1)
		goto bad;
	if (obj) {
		const char *id = json_string_value(obj);
		json_t *ix = id ? json_object_get(ids, id) : NULL;
		if (!ix || !objs[json_integer_value(ix)].tensor) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_REFERENCE", where,
				      "object \"%s\" is not a tensor object of this artifact (seed §7.1)",
				      id ? id : "?");
			return -EINVAL;
		}
		return 0;
	}
	if (!json_is_array(parts) || json_array_size(parts) == 0)
		goto bad;
	size_t i;
	json_t *p;
	json_array_foreach(parts, i, p) {
		const char *id = json_string_value(json_object_get(p, "object"));
		const json_t *range = json_object_get(p, "range");
		uint64_t b0, b1;
		if (!id || !json_is_array(range) || json_array_size(range) != 2 ||
		    json_object_size(p) != 2 || !json_is_u64(json_array_get(range, 0), &b0) ||
		    !json_is_u64(json_array_get(range, 1), &b1))
			goto bad;
		json_t *ix = json_object_get(ids, id);
		if (!ix || !objs[json_integer_value(ix)].tensor) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_REFERENCE", where,
				      "parts[%zu] object \"%s\" is not a tensor object (seed §7.1)", i, id);
			return -EINVAL;
		}
		if (!(b0 < b1 && b1 <= objs[json_integer_value(ix)].elements)) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_REFERENCE", where,
				      "parts[%zu] range [%" PRIu64 ",%" PRIu64 ") is not inside the %" PRIu64
				      " elements of \"%s\" (seed §7.1)", i, b0, b1,
				      objs[json_integer_value(ix)].elements, id);
			return -EINVAL;
		}
	}
	return 0;
bad:
	nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
		      "a binding is {\"object\": ID} or {\"parts\": [{\"object\": ID, \"range\": [b,e]}, ...]} (seed §7.1)");
	return -EINVAL;
}

static int check_directory(json_t *dir, json_t *ids, const struct wobj *objs,
			   struct nf_report *rep)
{
	if (!json_is_object(dir)) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", "directory",
			      "the directory is not a JSON object");
		return -EINVAL;
	}
	const char *key;
	json_t *val;
	json_object_foreach(dir, key, val) {
		static const char *const allowed[] = {"components", "bindings", "uses", "metadata",
						      "provenance", NULL};
		bool ok = false;
		for (size_t i = 0; allowed[i]; i++)
			ok |= strcmp(allowed[i], key) == 0;
		if (!ok) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", key,
				      "unknown directory member (the writer computes objects and files)");
			return -EINVAL;
		}
	}
	json_t *comps = json_object_get(dir, "components");
	json_t *binds = json_object_get(dir, "bindings");
	json_t *uses = json_object_get(dir, "uses");
	if (!json_is_object(comps) || json_object_size(comps) == 0) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", "components",
			      "components must be a non-empty object (seed §4.1)");
		return -EINVAL;
	}
	if (!json_is_object(binds)) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", "bindings",
			      "bindings must be an object (seed §4.1)");
		return -EINVAL;
	}
	if (!json_is_array(uses)) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", "uses",
			      "uses must be an array (seed §4.1)");
		return -EINVAL;
	}
	for (const char *m = "metadata"; m; m = strcmp(m, "metadata") == 0 ? "provenance" : NULL) {
		json_t *v = json_object_get(dir, m);
		if (v && !json_is_object(v)) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", m,
				      "%s must be an object (seed §10)", m);
			return -EINVAL;
		}
	}
	char where[512];
	json_object_foreach(comps, key, val) {
		snprintf(where, sizeof where, "components.%s", key);
		if (!json_is_object(val) || !json_is_object(json_object_get(val, "config"))) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
				      "a component needs a config object (seed §4.2)");
			return -EINVAL;
		}
		json_t *t = json_object_get(val, "target");
		if (t && (!json_is_string(t) || !json_object_get(comps, json_string_value(t)))) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_REFERENCE", where,
				      "target is not a component of this artifact (seed §4.2)");
			return -EINVAL;
		}
		json_t *res = json_object_get(val, "resources");
		if (res) {
			if (!json_is_object(res))
				goto badres;
			const char *role;
			json_t *rv;
			json_object_foreach(res, role, rv) {
				const char *id = json_string_value(rv);
				json_t *ix = id ? json_object_get(ids, id) : NULL;
				if (!ix || objs[json_integer_value(ix)].tensor) {
				badres:
					nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_REFERENCE",
						      where, "resources must map roles to resource object ids (seed §4.2, §9.1)");
					return -EINVAL;
				}
			}
		}
	}
	json_object_foreach(binds, key, val) {
		snprintf(where, sizeof where, "bindings.%s", key);
		int rc = check_binding(val, ids, objs, where, rep);
		if (rc)
			return rc;
	}
	size_t i;
	json_array_foreach(uses, i, val) {
		snprintf(where, sizeof where, "uses[%zu]", i);
		const char *param = json_string_value(json_object_get(val, "parameter"));
		if (!json_is_object(val) || !param || !json_is_string(json_object_get(val, "input"))) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
				      "a use needs parameter and input strings (seed §8)");
			return -EINVAL;
		}
		if (!json_object_get(binds, param)) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_REFERENCE", where,
				      "parameter \"%s\" is not a binding (seed §8)", param);
			return -EINVAL;
		}
		json_t *aux = json_object_get(val, "auxiliaries");
		if (aux) {
			if (!json_is_object(aux)) {
				nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", where,
					      "auxiliaries must be an object (seed §8)");
				return -EINVAL;
			}
			const char *role;
			json_t *b;
			json_object_foreach(aux, role, b) {
				char w2[600];
				snprintf(w2, sizeof w2, "%s.auxiliaries.%s", where, role);
				int rc = check_binding(b, ids, objs, w2, rep);
				if (rc)
					return rc;
			}
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* phase 2: plan */

struct wfile {
	char *name;              /* final file name (entry name or part name) */
	uint64_t logical_start;  /* P_i */
	uint64_t payload_bytes;  /* B_i */
	uint64_t data_offset;    /* entry_payload_start or 4096 */
	uint64_t file_bytes;
	int fd;
	bool in_tmp;             /* exists in the temporary directory */
	bool published;          /* renamed into the target directory */
};

struct plan {
	struct wobj *objs;
	size_t nobjs;
	uint64_t payload_bytes;
	char *json;              /* padded text, json_bytes long (+NUL) */
	uint64_t json_bytes;
	uint64_t entry_payload_start;
	struct wfile *files;
	size_t nfiles;
	/* writing: at most one payload file is open at a time (objects come
	 * in offset order), so any number of parts stays within RLIMIT_NOFILE */
	int tmpfd;
	size_t open_idx;
};

static void plan_free(struct plan *p)
{
	if (p->files)
		for (size_t i = 0; i < p->nfiles; i++)
			free(p->files[i].name);
	free(p->files);
	free(p->json);
	free(p->objs);
	memset(p, 0, sizeof *p);
}

static json_t *object_json(const struct wobj *o)
{
	const json_t *rec = o->in->record;
	json_t *j = json_object();
	if (!j)
		return NULL;
	int bad = 0;
	bad |= json_object_set(j, "id", json_object_get(rec, "id"));
	if (o->tensor) {
		json_t *dv = json_object_get(rec, "divisors");
		bad |= json_object_set_new(j, "shape", json_deep_copy(json_object_get(rec, "shape")));
		bad |= json_object_set(j, "format", json_object_get(rec, "format"));
		bad |= json_object_set(j, "layout", json_object_get(rec, "layout"));
		bad |= json_object_set_new(j, "offset", json_integer((json_int_t)o->offset));
		bad |= json_object_set_new(j, "bytes", json_integer((json_int_t)o->in->bytes));
		if (dv && json_integer_value(dv) != 1)
			bad |= json_object_set(j, "divisors", dv);
		bad |= json_object_set_new(j, "kind", json_string("tensor"));
	} else {
		bad |= json_object_set(j, "encoding", json_object_get(rec, "encoding"));
		bad |= json_object_set_new(j, "offset", json_integer((json_int_t)o->offset));
		bad |= json_object_set_new(j, "bytes", json_integer((json_int_t)o->in->bytes));
		bad |= json_object_set_new(j, "kind", json_string("resource"));
	}
	if (bad) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* Serialise the directory with the given files table (compact, root order
 * of codecs §7).  Returns a malloc'd string or NULL. */
static char *serialise(json_t *dir, json_t *objects_arr, const struct wfile *files, size_t nfiles)
{
	json_t *root = json_object();
	json_t *farr = json_array();
	char *text = NULL;
	if (!root || !farr)
		goto out;
	for (size_t i = 0; i < nfiles; i++) {
		json_t *f = json_object();
		if (!f || json_object_set_new(f, "path", i ? json_string(files[i].name) : json_null()) ||
		    json_object_set_new(f, "payload_bytes", json_integer((json_int_t)files[i].payload_bytes)) ||
		    json_array_append_new(farr, f))
			goto out;
	}
	json_t *meta = json_object_get(dir, "metadata");
	json_t *prov = json_object_get(dir, "provenance");
	if (json_object_set(root, "components", json_object_get(dir, "components")) ||
	    json_object_set(root, "objects", objects_arr) ||
	    json_object_set(root, "bindings", json_object_get(dir, "bindings")) ||
	    json_object_set(root, "uses", json_object_get(dir, "uses")) ||
	    json_object_set_new(root, "metadata", meta ? json_incref(meta) : json_object()) ||
	    json_object_set_new(root, "provenance", prov ? json_incref(prov) : json_object()) ||
	    json_object_set(root, "files", farr))
		goto out;
	text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
out:
	json_decref(farr);
	json_decref(root);
	return text;
}

/* Files table for a given entry_payload_start (seed §2.3). */
static int split_files(struct plan *p, const char *entry_name, uint64_t limit, uint64_t eps,
		       struct wfile **out, size_t *nout, struct nf_report *rep)
{
	uint64_t total = p->payload_bytes;
	uint64_t ec = total, pc = 0;
	size_t n = 1;
	bool single = limit == 0 || (eps <= limit && limit - eps >= total);
	if (!single) {
		if (nf_split_capacities(limit, eps, &ec, &pc)) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_LIMIT_TOO_SMALL",
				      "max_file_bytes",
				      "max_file_bytes %" PRIu64 " cannot hold the headers: the entry needs %" PRIu64
				      " bytes before its payload and a part needs 4096; both capacities "
				      "floor((limit-start)/4096)*4096 must be positive (seed §2.3)",
				      limit, eps);
			return -EINVAL;
		}
		uint64_t rest = total - ec;
		n = 1 + (size_t)((rest + pc - 1) / pc);
	}
	struct wfile *f = calloc(n, sizeof *f);
	if (!f)
		return -ENOMEM;
	uint64_t at = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t cap = i == 0 ? ec : pc;
		uint64_t b = total - at < cap ? total - at : cap;
		f[i].logical_start = at;
		f[i].payload_bytes = b;
		f[i].data_offset = i == 0 ? eps : NF_PART_PAYLOAD_START;
		f[i].file_bytes = f[i].data_offset + b;
		f[i].fd = -1;
		at += b;
		size_t len = strlen(entry_name) + 32;
		f[i].name = malloc(len);
		if (!f[i].name) {
			for (size_t j = 0; j <= i; j++)
				free(f[j].name);
			free(f);
			return -ENOMEM;
		}
		if (i == 0)
			snprintf(f[i].name, len, "%s", entry_name);
		else
			nf_part_name(f[i].name, len, entry_name, i);
	}
	*out = f;
	*nout = n;
	return 0;
}

static bool same_table(const struct wfile *a, size_t na, const struct wfile *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].payload_bytes != b[i].payload_bytes || a[i].data_offset != b[i].data_offset)
			return false;
	return true;
}

static void free_files(struct wfile *f, size_t n)
{
	if (!f)
		return;
	for (size_t i = 0; i < n; i++)
		free(f[i].name);
	free(f);
}

static int make_plan(struct plan *p, const char *entry_name, json_t *dir,
		     const struct nf_write_object *objects, size_t nobjects,
		     const struct nf_write_opts *opts, struct nf_report *rep)
{
	int rc = 0;
	json_t *ids = NULL, *objarr = NULL;
	memset(p, 0, sizeof *p);
	if (!objects || nobjects == 0) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", "objects",
			      "an artifact needs at least one object (seed §4.1)");
		return -EINVAL;
	}
	p->objs = calloc(nobjects, sizeof *p->objs);
	ids = json_object();
	objarr = json_array();
	if (!p->objs || !ids || !objarr) {
		rc = -ENOMEM;
		goto out;
	}
	p->nobjs = nobjects;
	/* records, sizes, unique ids, layout (codecs §7 object placement) */
	uint64_t end = 0;
	for (size_t i = 0; i < nobjects; i++) {
		struct wobj *o = &p->objs[i];
		o->in = &objects[i];
		if ((rc = check_record(o, opts, i, rep)))
			goto out;
		if (json_object_get(ids, o->id)) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_DUPLICATE_ID", o->id,
				      "object id used twice (seed §5.3)");
			rc = -EINVAL;
			goto out;
		}
		if (json_object_set_new(ids, o->id, json_integer((json_int_t)i))) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", o->id,
				      "id is not valid UTF-8 (seed §1)");
			rc = -EINVAL;
			goto out;
		}
		uint64_t at = end;
		if (o->tensor && !align_up_u64(end, W_ALIGN_TENSOR, &at))
			goto overflow;
		o->offset = at;
		if (!add_u64(at, o->in->bytes, &end) || end > (uint64_t)INT64_MAX)
			goto overflow;
		json_t *oj = object_json(o);
		if (!oj || json_array_append_new(objarr, oj)) {
			rc = -ENOMEM;
			goto out;
		}
	}
	p->payload_bytes = end;
	if ((rc = check_directory(dir, ids, p->objs, rep)))
		goto out;

	/* files table and JSON reservation: iterate until stable (§11.4 step 3-4) */
	uint64_t reserved = 0;
	struct wfile *cur = NULL;
	size_t ncur = 0;
	uint64_t eps = W_PAGE;
	if ((rc = split_files(p, entry_name, 0, eps, &cur, &ncur, rep)))
		goto out;
	for (int round = 0;; round++) {
		char *text = serialise(dir, objarr, cur, ncur);
		if (!text) {
			free_files(cur, ncur);
			rc = -ENOMEM;
			goto out;
		}
		uint64_t len = strlen(text), need;
		if (!align_up_u64(NF_ENTRY_HEADER_BYTES + len, W_PAGE, &need)) {
			free(text);
			free_files(cur, ncur);
			goto overflow;
		}
		need -= NF_ENTRY_HEADER_BYTES;
		if (need > reserved)
			reserved = need;
		eps = NF_ENTRY_HEADER_BYTES + reserved;
		struct wfile *next = NULL;
		size_t nnext = 0;
		rc = split_files(p, entry_name, opts->max_file_bytes, eps, &next, &nnext, rep);
		if (rc) {
			free(text);
			free_files(cur, ncur);
			goto out;
		}
		if (same_table(cur, ncur, next, nnext) && len <= reserved) {
			free_files(next, nnext);
			char *padded = realloc(text, reserved + 1);
			if (!padded) {
				free(text);
				free_files(cur, ncur);
				rc = -ENOMEM;
				goto out;
			}
			memset(padded + len, ' ', reserved - len);  /* codecs §7 reservation */
			padded[reserved] = '\0';
			p->json = padded;
			p->json_bytes = reserved;
			p->entry_payload_start = eps;
			p->files = cur;
			p->nfiles = ncur;
			break;
		}
		free(text);
		free_files(cur, ncur);
		cur = next;
		ncur = nnext;
		if (round >= W_MAX_PLAN_ROUNDS) {
			free_files(cur, ncur);
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_PLAN", "files",
				      "the files table did not converge");
			rc = -EINVAL;
			goto out;
		}
	}
	goto out;
overflow:
	nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_RECORD", "objects",
		      "the logical payload does not fit in 63 bits");
	rc = -EOVERFLOW;
out:
	json_decref(ids);
	json_decref(objarr);
	if (rc)
		plan_free(p);
	return rc;
}

int nf_write_plan(const char *entry_name, json_t *directory, const struct nf_write_object *objects, size_t nobjects,
		  const struct nf_write_opts *opts, struct nf_report *report,
		  uint64_t *offsets, uint64_t *payload_bytes, uint64_t *json_bytes,
		  struct nf_write_plan_file **files_out, size_t *nfiles_out)
{
	struct nf_report scratch;
	struct nf_report *rep = scratch_report(report, &scratch);
	struct nf_write_opts dflt = {0};
	struct plan p;
	if (!entry_name || !*entry_name || strchr(entry_name, '/'))
		entry_name = "plan.ninfer";
	int rc = make_plan(&p, entry_name, directory, objects, nobjects, opts ? opts : &dflt, rep);
	if (rc == 0) {
		if (offsets)
			for (size_t i = 0; i < p.nobjs; i++)
				offsets[i] = p.objs[i].offset;
		if (payload_bytes)
			*payload_bytes = p.payload_bytes;
		if (json_bytes)
			*json_bytes = p.json_bytes;
		if (files_out) {
			*files_out = calloc(p.nfiles, sizeof **files_out);
			if (!*files_out) {
				rc = -ENOMEM;
			} else {
				for (size_t i = 0; i < p.nfiles; i++) {
					(*files_out)[i].payload_bytes = p.files[i].payload_bytes;
					(*files_out)[i].logical_start = p.files[i].logical_start;
				}
			}
		}
		if (nfiles_out)
			*nfiles_out = p.nfiles;
		plan_free(&p);
	}
	if (rep == &scratch)
		nf_report_free(&scratch);
	return rc;
}

/* ------------------------------------------------------------------ */
/* phase 3: write */

struct copier {
	uint8_t *buf;               /* fallback buffer */
	bool write_failed;          /* the last failed copy failed writing, not reading */
	uint64_t done, total;
	uint64_t since_progress;
	const struct nf_write_opts *opts;
};

static int io_error(struct nf_report *rep, const char *where, int err, const char *what)
{
	if (err == ECANCELED)
		return -err;   /* reported once by nf_write_artifact */
	/* every file written is in the target's directory (issue 11: a full
	 * destination was blamed on the source) */
	nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_IO", where, "%s: %s%s", what,
		      strerror(err), err == ENOSPC || err == EDQUOT
					     ? ": the destination file system is full" : "");
	return -err;
}

static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

static bool cancelled(const struct copier *c)
{
	return c->opts->cancel && *c->opts->cancel;
}

static void progress_tick(struct copier *c, uint64_t n)
{
	c->done += n;
	c->since_progress += n;
	if (c->opts->progress && (c->since_progress >= W_CHUNK || c->done == c->total)) {
		c->since_progress = 0;
		c->opts->progress(c->opts->progress_arg, c->done, c->total);
	}
}

/* Copy len bytes from fd src at soff to dst at doff: copy_file_range where
 * the kernel can, pread/pwrite otherwise.  -ENODATA when the source ends
 * early. */
static int copy_fd(struct copier *c, int src, uint64_t soff, int dst, uint64_t doff, uint64_t len)
{
	bool use_cfr = true;
	c->write_failed = false;
	while (len) {
		if (cancelled(c))
			return -ECANCELED;
		size_t want = len > W_CHUNK ? (size_t)W_CHUNK : (size_t)len;
		ssize_t n;
		if (use_cfr) {
			loff_t so = (loff_t)soff, dof = (loff_t)doff;
			n = copy_file_range(src, &so, dst, &dof, want, 0);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				use_cfr = false;   /* EXDEV, EINVAL, ENOSYS, EOPNOTSUPP, ...: fall back */
				continue;
			}
			if (n == 0)
				return -ENODATA;
		} else {
			if (want > W_BUF_BYTES)
				want = W_BUF_BYTES;
			n = pread(src, c->buf, want, (off_t)soff);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			if (n == 0)
				return -ENODATA;
			int rc = pwrite_all(dst, c->buf, (size_t)n, (off_t)doff);
			if (rc) {
				c->write_failed = true;
				return rc;
			}
		}
		soff += (uint64_t)n;
		doff += (uint64_t)n;
		len -= (uint64_t)n;
		progress_tick(c, (uint64_t)n);
	}
	return 0;
}

static int copy_mem(struct copier *c, const uint8_t *src, int dst, uint64_t doff, uint64_t len)
{
	while (len) {
		if (cancelled(c))
			return -ECANCELED;
		size_t want = len > W_CHUNK ? (size_t)W_CHUNK : (size_t)len;
		int rc = pwrite_all(dst, src, want, (off_t)doff);
		if (rc)
			return rc;
		src += want;
		doff += want;
		len -= want;
		progress_tick(c, want);
	}
	return 0;
}

/* The name of file i of a source artifact, for messages. */
static const char *source_name(const struct nf_artifact *a, uint32_t i)
{
	return i < a->nfiles && a->files[i].path ? a->files[i].path : a->entry_name;
}

/* Copy from the logical payload of an open artifact through its range map
 * into dst (the file named dname). */
static int copy_artifact(struct copier *c, struct nf_artifact *a, uint64_t loff, int dst,
			 const char *dname, uint64_t doff, uint64_t len, struct nf_report *rep,
			 const char *where, const char *writing)
{
	struct nf_segment segs[16];
	while (len) {
		ssize_t ns = nf_range_map(a, loff, len, segs, 16);
		if (ns <= 0) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_SOURCE", where,
				      "the source range [%" PRIu64 ",+%" PRIu64 ") is not in the source payload",
				      loff, len);
			return -EIO;
		}
		size_t use = (size_t)ns < 16 ? (size_t)ns : 16;
		uint64_t got = 0;
		for (size_t i = 0; i < use; i++) {
			int fd = nf_file_acquire(a, segs[i].file);
			if (fd < 0) {
				nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_SOURCE", where,
					      "source file %u (%s) cannot be read: %s", segs[i].file,
					      source_name(a, segs[i].file), strerror(-fd));
				return fd;
			}
			int rc = copy_fd(c, fd, segs[i].file_offset, dst, doff + segs[i].dest_offset,
					 segs[i].length);
			nf_file_release(a, segs[i].file);
			if (rc == -ECANCELED)
				return rc;
			if (rc && c->write_failed)
				return io_error(rep, dname, -rc, writing);
			if (rc) {
				nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_SOURCE", where,
					      "reading source file %u (%s): %s", segs[i].file,
					      source_name(a, segs[i].file),
					      rc == -ENODATA ? "ends early" : strerror(-rc));
				return rc == -ENODATA ? -EIO : rc;
			}
			got = segs[i].dest_offset + segs[i].length;
		}
		loff += got;
		doff += got;
		len -= got;
	}
	return 0;
}

/* The fd of file i, opened on demand; the previously open one is closed. */
static int file_fd(struct plan *p, size_t i, struct nf_report *rep)
{
	if (p->open_idx < p->nfiles && p->open_idx != i && p->files[p->open_idx].fd >= 0) {
		close(p->files[p->open_idx].fd);
		p->files[p->open_idx].fd = -1;
	}
	struct wfile *f = &p->files[i];
	if (f->fd < 0) {
		f->fd = openat(p->tmpfd, f->name, O_WRONLY | O_CLOEXEC);
		if (f->fd < 0)
			return io_error(rep, f->name, errno, "cannot reopen");
	}
	p->open_idx = i;
	return f->fd;
}

static int write_headers(struct plan *p, const uint8_t id[16], struct nf_report *rep)
{
	for (size_t i = 0; i < p->nfiles; i++) {
		struct wfile *f = &p->files[i];
		int fd = file_fd(p, i, rep);
		if (fd < 0)
			return fd;
		uint8_t h[32];
		memcpy(h, i == 0 ? entry_magic : part_magic, 8);
		put_le64(h + 8, i == 0 ? p->json_bytes : (uint64_t)i);
		memcpy(h + 16, id, 16);
		/* the file was pre-sized with ftruncate: [32,4096) and alignment gaps read as zero */
		int rc = pwrite_all(fd, h, sizeof h, 0);
		if (!rc && i == 0)
			rc = pwrite_all(fd, p->json, (size_t)p->json_bytes, NF_ENTRY_HEADER_BYTES);
		if (rc)
			return io_error(rep, f->name, -rc, "writing the header");
	}
	return 0;
}

static int write_object(struct plan *p, struct copier *c, const struct wobj *o,
			struct nf_report *rep)
{
	char where[300], writing[320];
	snprintf(where, sizeof where, "object %s", o->id);
	snprintf(writing, sizeof writing, "writing object %s", o->id);
	int srcfd = -1, rc = 0;
	const struct nf_write_object *in = o->in;
	if (in->source == NF_SRC_FILE) {
		/* O_NONBLOCK: a FIFO (or a tty) must not block the open; only a
		 * regular file is read, and on one the flag changes nothing. */
		srcfd = open(in->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		struct stat st;
		if (srcfd < 0) {
			rc = -errno;
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_SOURCE", where,
				      "cannot open source %s: %s", in->path, strerror(-rc));
			return rc;
		}
		if (fstat(srcfd, &st) != 0) {
			rc = -errno;
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_SOURCE", where,
				      "cannot fstat source %s: %s", in->path, strerror(-rc));
			close(srcfd);
			return rc;
		}
		if (!S_ISREG(st.st_mode)) {
			/* bad input: the manifest names something that holds no bytes */
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "WRITE_SOURCE", where,
				      "source %s %s, not a regular file", in->path,
				      nf_file_kind(st.st_mode));
			close(srcfd);
			return -EINVAL;
		}
		uint64_t need;
		if (!add_u64(in->src_offset, in->bytes, &need) || (uint64_t)st.st_size < need) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_SOURCE", where,
				      "source %s is not a regular file holding [%" PRIu64 ",+%" PRIu64 ")",
				      in->path, in->src_offset, in->bytes);
			close(srcfd);
			return -EIO;
		}
	}
	uint64_t lo = o->offset, hi = o->offset + in->bytes;
	for (size_t i = 0; i < p->nfiles && !rc; i++) {
		struct wfile *f = &p->files[i];
		uint64_t a = lo > f->logical_start ? lo : f->logical_start;
		uint64_t fe = f->logical_start + f->payload_bytes;
		uint64_t b = hi < fe ? hi : fe;
		if (a >= b)
			continue;
		uint64_t doff = f->data_offset + (a - f->logical_start);
		uint64_t soff = a - lo;   /* offset inside the object */
		int dfd = file_fd(p, i, rep);
		if (dfd < 0) {
			rc = dfd;
			break;
		}
		switch (in->source) {
		case NF_SRC_MEMORY:
			rc = copy_mem(c, (const uint8_t *)in->data + soff, dfd, doff, b - a);
			if (rc)
				rc = io_error(rep, f->name, -rc, writing);
			break;
		case NF_SRC_FILE:
			rc = copy_fd(c, srcfd, in->src_offset + soff, dfd, doff, b - a);
			if (rc == -ENODATA) {
				nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_SOURCE", where,
					      "source %s ends early", in->path);
				rc = -EIO;
			} else if (rc && c->write_failed) {
				rc = io_error(rep, f->name, -rc, writing);
			} else if (rc && rc != -ECANCELED) {
				nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_SOURCE", where,
					      "reading source %s: %s", in->path, strerror(-rc));
			}
			break;
		case NF_SRC_ARTIFACT:
			rc = copy_artifact(c, in->artifact, in->src_offset + soff, dfd, f->name, doff,
					   b - a, rep, where, writing);
			break;
		}
	}
	if (srcfd >= 0)
		close(srcfd);
	return rc;
}

/* ------------------------------------------------------------------ */
/* phase 4: validate */

static int validate(struct plan *p, const char *tmppath, const uint8_t id[16],
		    const struct nf_write_opts *opts, struct nf_report *rep)
{
	(void)opts;
	struct nf_report vr;
	struct nf_artifact *a = NULL;
	nf_report_init(&vr);
	int rc = nf_artifact_open(tmppath, &vr, &a);
	if (rc == 0 && a)
		nf_artifact_check_files(a, &vr);
	if (rc < 0 || !a || nf_report_count(&vr, NF_SEV_ERROR, -1) > 0) {
		for (size_t i = 0; i < vr.count; i++) {
			const struct nf_finding *f = &vr.items[i];
			if (f->severity == NF_SEV_ERROR)
				nf_report_add(rep, NF_SEV_ERROR, f->scope, f->code, f->where ? f->where : "",
					      "the written set fails validation: %s",
					      f->evidence ? f->evidence : "");
		}
		/* the reader could not do its work (no descriptor, no memory):
		 * that is this run's failure, not the input's (issue 11) */
		bool operational = nf_report_count(&vr, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL) > 0;
		nf_report_add(rep, NF_SEV_ERROR, operational ? NF_SCOPE_OPERATIONAL : NF_SCOPE_DIRECTORY,
			      "WRITE_VALIDATION", tmppath,
			      "the reader %s the written set (%zu error findings)",
			      operational ? "could not check" : "rejects",
			      nf_report_count(&vr, NF_SEV_ERROR, -1));
		rc = operational ? -EIO : -EINVAL;
		goto out;
	}
	/* the reader's model must be the plan, byte for byte */
	const char *why = NULL;
	if (memcmp(a->artifact_id, id, 16) != 0)
		why = "artifact_id";
	else if (a->json_bytes != p->json_bytes || a->entry_payload_start != p->entry_payload_start)
		why = "json_bytes / entry_payload_start";
	else if (a->payload_bytes != p->payload_bytes)
		why = "payload_bytes";
	else if (a->nfiles != p->nfiles)
		why = "number of files";
	else if (a->nobjects != p->nobjs)
		why = "number of objects";
	for (size_t i = 0; !why && i < p->nfiles; i++) {
		const struct nf_file *f = &a->files[i];
		if (f->payload_bytes != p->files[i].payload_bytes ||
		    f->logical_start != p->files[i].logical_start ||
		    f->file_bytes != p->files[i].file_bytes ||
		    (i && (!f->path || strcmp(f->path, p->files[i].name) != 0))) {
			why = "files table";
			break;
		}
		struct nf_file_fingerprint id;
		if (nf_file_verify(a, (uint32_t)i) != 0 || nf_file_fingerprint(a, (uint32_t)i, &id) != 0 ||
		    id.size != p->files[i].file_bytes)
			why = "file length";
	}
	/* coverage: every object maps onto segments that add up to its bytes */
	for (size_t i = 0; !why && i < p->nobjs; i++) {
		const struct nf_object *o = &a->objects[i];
		if (strcmp(o->id, p->objs[i].id) != 0 || o->offset != p->objs[i].offset ||
		    o->bytes != p->objs[i].in->bytes) {
			why = "object records";
			break;
		}
		ssize_t ns = nf_range_map(a, o->offset, o->bytes, NULL, 0);
		if (ns <= 0) {
			why = "object coverage";
			break;
		}
		struct nf_segment *segs = calloc((size_t)ns, sizeof *segs);
		if (!segs) {
			rc = -ENOMEM;
			goto out;
		}
		nf_range_map(a, o->offset, o->bytes, segs, (size_t)ns);
		uint64_t sum = 0;
		for (ssize_t s = 0; s < ns; s++) {
			if (segs[s].dest_offset != sum)
				why = "object coverage";
			sum += segs[s].length;
		}
		if (sum != o->bytes)
			why = "object coverage";
		free(segs);
	}
	if (why) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_VERIFY", tmppath,
			      "the written set differs from the plan in its %s", why);
		rc = -EIO;
	}
out:
	if (a)
		nf_artifact_close(a);
	nf_report_free(&vr);
	return rc;
}

/* ------------------------------------------------------------------ */
/* phase 5: publish */

static int rename_noreplace(int odir, const char *oname, int ndir, const char *nname)
{
#ifdef SYS_renameat2
	if (syscall(SYS_renameat2, odir, oname, ndir, nname, 1u /* RENAME_NOREPLACE */) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
#endif
	/* file systems without RENAME_NOREPLACE: link() never replaces either */
	if (linkat(odir, oname, ndir, nname, 0) != 0)
		return -errno;
	unlinkat(odir, oname, 0);
	return 0;
}

static bool exists_at(int dirfd, const char *name)
{
	struct stat st;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
}

static int check_targets(struct plan *p, int dirfd, const char *entry_path, struct nf_report *rep)
{
	for (size_t i = 0; i < p->nfiles; i++) {
		if (exists_at(dirfd, p->files[i].name)) {
			nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_TARGET_EXISTS",
				      p->files[i].name,
				      "%s already exists beside %s; the writer never replaces a file",
				      p->files[i].name, entry_path);
			return -EEXIST;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */

int nf_write_artifact(const char *entry_path, json_t *directory,
		      const struct nf_write_object *objects, size_t nobjects,
		      const struct nf_write_opts *opts, struct nf_report *report)
{
	struct nf_report scratch;
	struct nf_report *rep = scratch_report(report, &scratch);
	struct nf_write_opts dflt = {0};
	if (!opts)
		opts = &dflt;
	struct plan p;
	memset(&p, 0, sizeof p);
	int rc = 0, dirfd = -1, tmpfd = -1;
	char *dirpath = NULL, *tmpdir = NULL, *tmpentry = NULL;
	struct copier c = {0};
	struct nf_write_tmp tmp = NF_WRITE_TMP_INIT;

	if (!entry_path || !*entry_path) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_TARGET", "entry",
			      "no output path");
		rc = -EINVAL;
		goto done;
	}
	/* split the path into directory and entry name */
	const char *slash = strrchr(entry_path, '/');
	const char *name = slash ? slash + 1 : entry_path;
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_TARGET", entry_path,
			      "the output path must name a file");
		rc = -EINVAL;
		goto done;
	}
	dirpath = slash ? (slash == entry_path ? strdup("/") : strndup(entry_path, (size_t)(slash - entry_path)))
			: strdup(".");
	if (!dirpath) {
		rc = -ENOMEM;
		goto done;
	}

	/* phases 1-2 */
	if ((rc = make_plan(&p, name, directory, objects, nobjects, opts, rep)))
		goto done;

	dirfd = open(dirpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		rc = io_error(rep, dirpath, errno, "cannot open the output directory");
		goto done;
	}
	/* what a killed run of this target left (issue 11), even when this
	 * run stops at the next check */
	nf_write_tmp_sweep(dirfd, dirpath, name, rep);
	if ((rc = check_targets(&p, dirfd, entry_path, rep)))
		goto done;

	/* phase 3: temporary directory beside the target, final names inside */
	if ((rc = nf_write_tmp_make(&tmp, dirpath, name, rep)))
		goto done;
	tmpdir = tmp.path;
	tmpfd = tmp.fd;
	uint8_t id[16];
	if (getrandom(id, sizeof id, 0) != (ssize_t)sizeof id) {
		rc = io_error(rep, "artifact_id", errno ? errno : EIO, "getrandom");
		goto done;
	}
	id[6] = (uint8_t)((id[6] & 0x0f) | 0x40);   /* UUIDv4 version */
	id[8] = (uint8_t)((id[8] & 0x3f) | 0x80);   /* RFC 4122 variant */

	p.tmpfd = tmpfd;
	p.open_idx = SIZE_MAX;
	for (size_t i = 0; i < p.nfiles; i++) {
		struct wfile *f = &p.files[i];
		int fd = openat(tmpfd, f->name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0) {
			rc = io_error(rep, f->name, errno, "cannot create");
			goto done;
		}
		f->in_tmp = true;
		int e = ftruncate(fd, (off_t)f->file_bytes) != 0 ? errno : 0;
		close(fd);
		if (e) {
			rc = io_error(rep, f->name, e, "cannot size");
			goto done;
		}
	}
	if ((rc = write_headers(&p, id, rep)))
		goto done;
	c.buf = malloc(W_BUF_BYTES);
	if (!c.buf) {
		rc = -ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < p.nobjs; i++)
		c.total += p.objs[i].in->bytes;   /* bytes copied: gaps are not written */
	c.opts = opts;
	for (size_t i = 0; i < p.nobjs; i++)
		if ((rc = write_object(&p, &c, &p.objs[i], rep)))
			goto done;
	for (size_t i = 0; i < p.nfiles; i++) {
		struct wfile *f = &p.files[i];
		if (f->fd >= 0) {
			close(f->fd);
			f->fd = -1;
		}
		int fd = openat(tmpfd, f->name, O_RDONLY | O_CLOEXEC);
		int e = fd < 0 ? errno : fsync(fd) != 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		if (e) {
			rc = io_error(rep, f->name, e, "fsync");
			goto done;
		}
	}

	/* phase 4 */
	size_t elen = strlen(tmpdir) + strlen(name) + 2;
	tmpentry = malloc(elen);
	if (!tmpentry) {
		rc = -ENOMEM;
		goto done;
	}
	snprintf(tmpentry, elen, "%s/%s", tmpdir, name);
	if ((rc = validate(&p, tmpentry, id, opts, rep)))
		goto done;

	/* phase 5: parts first, entry last, never replacing */
	if ((rc = check_targets(&p, dirfd, entry_path, rep)))
		goto done;
	for (size_t k = 1; k <= p.nfiles; k++) {
		size_t i = k % p.nfiles;   /* 1, 2, ..., n-1, then 0 (the entry) */
		struct wfile *f = &p.files[i];
		int r = rename_noreplace(tmpfd, f->name, dirfd, f->name);
		if (r) {
			if (r == -EEXIST)
				nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_TARGET_EXISTS",
					      f->name, "%s appeared while writing; nothing replaced", f->name);
			else
				io_error(rep, f->name, -r, "cannot publish");
			rc = r;
			goto done;
		}
		f->in_tmp = false;
		f->published = true;
	}
	fsync(dirfd);
	rc = 0;

done:
	if (rc == -ECANCELED)
		nf_report_add(rep, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "WRITE_CANCELLED", entry_path,
			      "cancelled; everything written was removed");
	for (size_t i = 0; i < p.nfiles; i++) {
		struct wfile *f = &p.files[i];
		if (f->fd >= 0)
			close(f->fd);
		f->fd = -1;
		if (f->in_tmp && tmpfd >= 0)
			unlinkat(tmpfd, f->name, 0);
		if (rc && f->published && dirfd >= 0)
			unlinkat(dirfd, f->name, 0);   /* undo: the entry was not published */
	}
	if (tmp.path) {
		char *left = rc == 0 ? strdup(tmp.path) : NULL;
		int r = nf_write_tmp_remove(&tmp);
		if (r && rc == 0)
			nf_report_add(rep, NF_SEV_WARNING, NF_SCOPE_OPERATIONAL, "WRITE_TMP_LEFT",
				      left ? left : "temporary directory",
				      "cannot remove the temporary directory: %s", strerror(-r));
		free(left);
	}
	if (dirfd >= 0)
		close(dirfd);
	free(c.buf);
	free(tmpentry);
	free(dirpath);
	plan_free(&p);
	if (rep == &scratch)
		nf_report_free(&scratch);
	return rc;
}
