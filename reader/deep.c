/* reader/deep.c — ninfer-check --deep: every present payload byte, once.
 *
 * The payload is walked in logical order: the bytes between objects (and
 * after the last one) should be zero because the writer only leaves
 * alignment there (seed §5.3, codecs §7: gaps are never written and read
 * as zero); every tensor whose codec is known and size right is loaded and
 * handed to nf_check_invariants() (codecs §2.4, §2.5, §3.4, §4.2).  The
 * header regions that the writer zeroes (seed §3.1 [32+json_bytes,
 * entry_payload_start), seed §3.2 [32, 4096) of a part) are read too.
 * Everything found is a warning: these bytes carry no load semantics, or
 * the codes are still decodable; a failing read of a present file is an
 * error of that file. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/internal.h"

#define CHUNK (4u << 20)

struct deep {
	struct nf_artifact *a;
	struct nf_report *r;
	uint8_t *buf;                 /* CHUNK bytes */
	bool *read_failed;            /* per file: DEEP_READ_FAILED reported */
	uint64_t done, total;
	uint64_t max_object;          /* largest object loaded whole */
	void (*progress)(void *, uint64_t, uint64_t);
	void *arg;
};

static void file_where(const struct nf_artifact *a, uint32_t i, char *buf, size_t n)
{
	if (i == 0)
		snprintf(buf, n, "files[0] %s", a->entry_name);
	else
		snprintf(buf, n, "files[%u] %s", i, a->files[i].path ? a->files[i].path : "");
}

/* A read of a present file failed: one finding per file.  `what` names
 * the bytes ("file offset N" or "logical payload offset N"). */
static void read_failed(struct deep *d, uint32_t file, const char *what, uint64_t off, int err)
{
	if (d->read_failed[file])
		return;
	d->read_failed[file] = true;
	char where[512];
	file_where(d->a, file, where, sizeof where);
	nf_report_add(d->r, NF_SEV_ERROR, NF_SCOPE_FILE, "DEEP_READ_FAILED", where,
		      "seed §11.2: a read of the declared bytes must get them all; reading at %s "
		      "%" PRIu64 " failed: %s", what, off,
		      err == -ENODATA ? "premature end of file" : strerror(-err));
}

/* Read logical [off, off+len) into buf.  Returns 0, or -1 when a file it
 * needs is missing, bad or failed (then the bytes are not checked; that
 * file's index is in *failed when not NULL).  A missing or bad file is
 * already a finding of nf_artifact_check_files(); a present file that
 * fails is reported here, once. */
static int read_logical(struct deep *d, uint64_t off, uint64_t len, uint8_t *buf,
			uint32_t *failed)
{
	uint32_t file = 0;
	int rc = nf_payload_read(d->a, off, len, buf, &file);

	if (rc == 0)
		return 0;
	const char *reason = NULL;
	enum nf_file_status st = rc == -ERANGE ? NF_FILE_PRESENT : nf_file_status(d->a, file, &reason);
	if (rc != -ERANGE && st == NF_FILE_PRESENT)
		read_failed(d, file, "logical payload offset", off, rc);
	else if (st == NF_FILE_BAD && reason && !d->read_failed[file] && rc == -EIO &&
		 d->a->priv->files[file].code &&
		 strcmp(d->a->priv->files[file].code, "FILE_CHANGED") == 0) {
		/* changed during the check (after nf_artifact_check_files) */
		d->read_failed[file] = true;
		char where[512];
		file_where(d->a, file, where, sizeof where);
		nf_report_add(d->r, NF_SEV_ERROR, NF_SCOPE_FILE, "FILE_CHANGED", where, "%s", reason);
	}
	if (failed)
		*failed = rc == -ERANGE ? UINT32_MAX : file;
	return -1;
}

/* Issue 11: a tensor whose codec invariants were due but whose bytes could
 * not be read is named (info), with the file that stopped it. */
static void object_unread(struct deep *d, const char *where, uint32_t file)
{
	char fw[512];
	const char *state = "could not be read";
	if (file == UINT32_MAX) {
		snprintf(fw, sizeof fw, "the payload");
	} else {
		file_where(d->a, file, fw, sizeof fw);
		enum nf_file_status st = nf_file_status(d->a, file, NULL);
		state = st == NF_FILE_MISSING ? "is missing" : st == NF_FILE_BAD ? "is bad"
			: "failed to read";
	}
	nf_report_add(d->r, NF_SEV_INFO, NF_SCOPE_FILE, "DEEP_OBJECT_UNREAD", where,
		      "its bytes lie on %s, which %s: its codec invariants were not checked", fw,
		      state);
}

static void advance(struct deep *d, uint64_t n)
{
	d->done += n;
	if (d->progress)
		d->progress(d->arg, d->done, d->total);
}

/* The first non-zero byte of buf[0, n), or n. */
static uint64_t first_nonzero(const uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i])
			return i;
	return n;
}

/* Logical [begin, end) holds no object: it should read as zero. */
static void check_gap(struct deep *d, uint64_t begin, uint64_t end, bool tail)
{
	bool reported = false;
	for (uint64_t x = begin; x < end;) {
		uint64_t n = end - x < CHUNK ? end - x : CHUNK;
		if (read_logical(d, x, n, d->buf, NULL) == 0 && !reported) {
			uint64_t k = first_nonzero(d->buf, n);
			if (k < n) {
				char where[96];
				snprintf(where, sizeof where, "payload [%" PRIu64 ", %" PRIu64 ")", begin, end);
				nf_report_add(d->r, NF_SEV_WARNING, NF_SCOPE_FILE, "PAYLOAD_GAP_NONZERO", where,
					      "seed §5.3: bytes %s carry no data and are left zero by the "
					      "writer; logical byte %" PRIu64 " is 0x%02x",
					      tail ? "after the last object" : "between objects", x + k,
					      d->buf[k]);
				reported = true;
			}
		}
		advance(d, n);
		x += n;
	}
}

static void check_object(struct deep *d, const struct nf_object *o)
{
	bool decode = o->kind == NF_OBJ_TENSOR && o->codec_status == NF_CODEC_OK && o->size_ok;
	if (!decode) {
		/* Still read it once: a short or failing file shows up. */
		for (uint64_t x = 0; x < o->bytes;) {
			uint64_t n = o->bytes - x < CHUNK ? o->bytes - x : CHUNK;
			read_logical(d, o->offset + x, n, d->buf, NULL);
			advance(d, n);
			x += n;
		}
		return;
	}
	char where[64 + 1024];
	snprintf(where, sizeof where, "objects[%u] %.1024s", o->index, o->id);
	/* nf_check_invariants() wants the whole object in memory; with
	 * overcommit a huge malloc can succeed and then fail while being
	 * filled, so objects above half the RAM are skipped (and said so). */
	uint8_t *obj = o->bytes <= d->max_object ? malloc((size_t)o->bytes) : NULL;
	if (!obj) {
		nf_report_add(d->r, NF_SEV_INFO, NF_SCOPE_OPERATIONAL, "DEEP_OBJECT_SKIPPED", where,
			      "the %" PRIu64 "-byte object is too large to load (limit %" PRIu64
			      " bytes, half the RAM); its codec invariants were not checked",
			      o->bytes, d->max_object);
		for (uint64_t x = 0; x < o->bytes;) {
			uint64_t n = o->bytes - x < CHUNK ? o->bytes - x : CHUNK;
			read_logical(d, o->offset + x, n, d->buf, NULL);
			advance(d, n);
			x += n;
		}
		return;
	}
	uint32_t failed = 0;
	int rc = read_logical(d, o->offset, o->bytes, obj, &failed);
	advance(d, o->bytes);
	if (rc < 0)
		object_unread(d, where, failed);
	if (rc == 0) {
		struct nf_violation v;
		memset(&v, 0, sizeof v);
		if (!nf_check_invariants(&o->geom, obj, &v))
			nf_report_add(d->r, NF_SEV_WARNING, NF_SCOPE_OBJECT,
				      v.code ? v.code : "CODEC_INVARIANT", where,
				      "codecs (%s, %s): %s; first offending element or byte %" PRIu64,
				      o->format, o->layout, v.detail, v.element);
	}
	free(obj);
}

static int cmp_by_offset(const void *x, const void *y, void *ctx)
{
	const struct nf_object *objs = ctx;
	uint64_t a = objs[*(const uint32_t *)x].offset, b = objs[*(const uint32_t *)y].offset;
	return (a > b) - (a < b);
}

static void check_header_zeros(struct deep *d, uint32_t file, uint64_t begin, uint64_t end,
			       const char *code, const char *rule)
{
	if (begin >= end)
		return;
	if (nf_file_verify(d->a, file) < 0)
		return;   /* missing or bad: already a finding */
	uint64_t n = end - begin; /* < 4096 */
	int rc = nf_file_pread(d->a, file, d->buf, n, begin);
	if (rc < 0) {
		read_failed(d, file, "file offset", begin, rc);
		return;
	}
	uint64_t k = first_nonzero(d->buf, n);
	if (k < n) {
		char where[512];
		file_where(d->a, file, where, sizeof where);
		nf_report_add(d->r, NF_SEV_WARNING, NF_SCOPE_FILE, code, where,
			      "%s: [%" PRIu64 ", %" PRIu64 ") is written as zeros; file byte %" PRIu64
			      " is 0x%02x", rule, begin, end, begin + k, d->buf[k]);
	}
}

int nf_artifact_check_deep(struct nf_artifact *a, struct nf_report *report,
			   void (*progress)(void *arg, uint64_t done, uint64_t total),
			   void *progress_arg)
{
	if (!a || a->nfiles == 0)
		return 0;
	struct deep d = {.a = a, .r = report, .total = a->payload_bytes, .progress = progress,
			 .arg = progress_arg};
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	d.max_object = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize / 2 : (1ull << 30);
	if (d.max_object > SIZE_MAX)
		d.max_object = SIZE_MAX;
	d.buf = malloc(CHUNK);
	d.read_failed = calloc(a->nfiles, sizeof *d.read_failed);
	uint32_t *order = malloc((a->nobjects ? a->nobjects : 1) * sizeof *order);
	if (!d.buf || !d.read_failed || !order) {
		free(d.buf);
		free(d.read_failed);
		free(order);
		nf_report_add(report, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY", "deep",
			      "cannot allocate the deep check's buffers");
		return -ENOMEM;
	}
	check_header_zeros(&d, 0, NF_ENTRY_HEADER_BYTES + a->json_bytes, a->entry_payload_start,
			   "ENTRY_PADDING_NONZERO", "seed §3.1");
	for (uint32_t i = 1; i < a->nfiles; i++)
		check_header_zeros(&d, i, NF_ENTRY_HEADER_BYTES, NF_PART_PAYLOAD_START,
				   "PART_PADDING_NONZERO", "seed §3.2");

	/* Objects in offset order (the model keeps stored order, which may
	 * differ when the directory was wrong); the model has no overlaps. */
	for (uint32_t i = 0; i < a->nobjects; i++)
		order[i] = i;
	qsort_r(order, a->nobjects, sizeof *order, cmp_by_offset, (void *)a->objects);
	uint64_t x = 0;
	for (uint32_t k = 0; k < a->nobjects; k++) {
		const struct nf_object *o = &a->objects[order[k]];
		if (o->offset > a->payload_bytes || o->bytes > a->payload_bytes - o->offset)
			continue; /* only in a lenient model without a files table */
		if (o->offset > x)
			check_gap(&d, x, o->offset, false);
		check_object(&d, o);
		x = o->offset + o->bytes;
	}
	if (x < a->payload_bytes)
		check_gap(&d, x, a->payload_bytes, true);
	free(d.buf);
	free(d.read_failed);
	free(order);
	return 0;
}
