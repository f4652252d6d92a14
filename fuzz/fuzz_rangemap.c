/* fuzz-rangemap: nf_range_map against an independent model of seed §2.2.
 *
 * Input: a files table (1..9 files, payload sizes up to 2^40), then
 * (offset, length) queries.  The target writes a valid entry (header, a
 * minimal directory with that files table, the entry's payload as a sparse
 * tmpfs file; parts are never opened by the range map, so they are not
 * written), opens it, and checks:
 *   - the reader accepts the set and its files table is the model's
 *     (P_i = sum of earlier B_j, data_offset = entry_payload_start or 4096);
 *   - a query outside [0, payload_bytes] gives -ERANGE;
 *   - otherwise the segments are in file order, consecutive files, each
 *     non-empty and inside its file's payload, contiguous (dest_offset =
 *     bytes so far, logical position = offset + dest_offset), and cover the
 *     range exactly; the count equals the model's; a smaller `max` gives the
 *     same count and the same first segments. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/fuzz_common.h"
#include "reader/artifact.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FILES 9
static char path[96];

static void cleanup(void)
{
	unlink(path);
	char *slash = strrchr(path, '/');
	if (slash) {
		*slash = 0;
		rmdir(path);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	char dir[64];
	snprintf(dir, sizeof dir, "/dev/shm/nf-fuzz-rangemap.XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof dir, "/tmp/nf-fuzz-rangemap.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	snprintf(path, sizeof path, "%s/r.ninfer", dir);
	atexit(cleanup);
	return 0;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Write the entry; returns entry_payload_start, or 0 on failure. */
static uint64_t write_entry(unsigned nfiles, const uint64_t *b)
{
	char json[2048];
	int n = snprintf(json, sizeof json,
		"{\"components\":{\"text\":{\"config\":{}}},"
		"\"objects\":[{\"id\":\"r\",\"kind\":\"resource\",\"encoding\":\"raw_bytes_v1\","
		"\"offset\":0,\"bytes\":1}],"
		"\"bindings\":{},\"uses\":[],\"metadata\":{},\"provenance\":{},"
		"\"files\":[{\"path\":null,\"payload_bytes\":%llu}", (unsigned long long)b[0]);
	for (unsigned i = 1; i < nfiles; i++)
		n += snprintf(json + n, sizeof json - (size_t)n,
			      ",{\"path\":\"r.ninfer.part-%04u\",\"payload_bytes\":%llu}", i,
			      (unsigned long long)b[i]);
	n += snprintf(json + n, sizeof json - (size_t)n, "]}");
	uint64_t jb = (32 + (uint64_t)n + 4095) / 4096 * 4096 - 32;
	uint64_t eps = 32 + jb;
	uint8_t *head = malloc(eps);
	FUZZ_CHECK(head != NULL, "oom");
	memcpy(head, "NINFER\0\3", 8);
	put_le64(head + 8, jb);
	for (int i = 0; i < 16; i++)
		head[16 + i] = (uint8_t)i;
	memcpy(head + 32, json, (size_t)n);
	memset(head + 32 + n, ' ', jb - (uint64_t)n);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	FUZZ_CHECK(fd >= 0, "cannot create %s", path);
	bool ok = write(fd, head, eps) == (ssize_t)eps && ftruncate(fd, (off_t)(eps + b[0])) == 0;
	close(fd);
	free(head);
	return ok ? eps : 0;
}

static uint64_t file_size_pick(struct fuzz_in *in)
{
	uint8_t k = fuzz_u8(in);
	uint64_t v = fuzz_u64(in);
	switch (k & 3) {
	case 0: return 1 + (v & 0xff);
	case 1: return 1 + (v & 0xffff);
	case 2: return 1 + (v & ((1ull << 40) - 1));
	default: return (uint64_t)1 << (v % 41);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size, 0};
	unsigned nfiles = 1 + fuzz_u8(&in) % MAX_FILES;
	uint64_t b[MAX_FILES], p[MAX_FILES + 1];
	p[0] = 0;
	for (unsigned i = 0; i < nfiles; i++) {
		b[i] = file_size_pick(&in);
		if (i == 0 && b[0] > (1ull << 32))
			b[0] &= (1ull << 32) - 1, b[0] += 1;  /* the entry is a real (sparse) file */
		p[i + 1] = p[i] + b[i];
	}
	uint64_t total = p[nfiles];
	uint64_t eps = write_entry(nfiles, b);
	if (!eps)
		return 0;

	struct nf_report rep;
	nf_report_init(&rep);
	struct nf_artifact *a = NULL;
	int rc = nf_artifact_open(path, &rep, &a);
	FUZZ_CHECK(rc == 0 && a, "open of a valid set failed: %d", rc);
	FUZZ_CHECK(a->directory_ok && nf_report_count(&rep, NF_SEV_ERROR, -1) == 0,
		   "valid set has errors: %s %s", rep.count ? rep.items[0].code : "",
		   rep.count ? rep.items[0].evidence : "");
	FUZZ_CHECK(a->nfiles == nfiles && a->payload_bytes == total && a->entry_payload_start == eps,
		   "files table differs from the model");
	for (unsigned i = 0; i < nfiles; i++)
		FUZZ_CHECK(a->files[i].payload_bytes == b[i] && a->files[i].logical_start == p[i] &&
			   a->files[i].data_offset == (i ? NF_PART_PAYLOAD_START : eps),
			   "file %u differs from the model", i);

	while (fuzz_left(&in) >= 2) {
		uint8_t mode = fuzz_u8(&in);
		uint64_t off, len;
		if (mode & 1) {
			off = fuzz_u64(&in);
			len = fuzz_u64(&in);
		} else {
			off = (mode & 2) ? p[fuzz_u8(&in) % (nfiles + 1)] : fuzz_upto(&in, total);
			uint64_t to = p[fuzz_u8(&in) % (nfiles + 1)];
			len = (mode & 4) && to >= off ? to - off : fuzz_upto(&in, total - off);
			if (mode & 8)
				len += (mode & 16) ? (uint64_t)-1 : 1; /* one past (or short of) the end; may wrap */
		}
		struct nf_segment segs[MAX_FILES + 1], few[2];
		ssize_t n = nf_range_map(a, off, len, segs, MAX_FILES + 1);
		if (off > total || len > total - off) {
			FUZZ_CHECK(n == -ERANGE, "[%llu,+%llu) outside %llu mapped to %zd",
				   (unsigned long long)off, (unsigned long long)len,
				   (unsigned long long)total, n);
			continue;
		}
		/* the model: files whose payload meets [off, off+len) */
		ssize_t want = 0;
		for (unsigned i = 0; i < nfiles; i++)
			if (len && p[i] < off + len && off < p[i + 1])
				want++;
		FUZZ_CHECK(n == want, "[%llu,+%llu) gave %zd segments, model %zd",
			   (unsigned long long)off, (unsigned long long)len, n, want);
		uint64_t dest = 0;
		for (ssize_t k = 0; k < n; k++) {
			const struct nf_segment *s = &segs[k];
			FUZZ_CHECK(s->file < nfiles && (k == 0 || s->file == segs[k - 1].file + 1),
				   "segment %zd file %u", k, s->file);
			uint64_t base = s->file ? NF_PART_PAYLOAD_START : eps;
			FUZZ_CHECK(s->length > 0 && s->file_offset >= base &&
				   s->file_offset - base <= b[s->file] &&
				   s->length <= b[s->file] - (s->file_offset - base),
				   "segment %zd outside file %u", k, s->file);
			FUZZ_CHECK(s->dest_offset == dest && p[s->file] + (s->file_offset - base) == off + dest,
				   "segment %zd not contiguous", k);
			dest += s->length;
		}
		FUZZ_CHECK(dest == len, "segments cover %llu of %llu", (unsigned long long)dest,
			   (unsigned long long)len);
		size_t max = mode >> 7;
		ssize_t m = nf_range_map(a, off, len, few, max);
		FUZZ_CHECK(m == n, "max %zu changed the count %zd -> %zd", max, n, m);
		for (size_t k = 0; k < max && (ssize_t)k < n; k++)
			FUZZ_CHECK(few[k].file == segs[k].file && few[k].file_offset == segs[k].file_offset &&
				   few[k].length == segs[k].length && few[k].dest_offset == segs[k].dest_offset,
				   "max changed segment %zu", k);
	}
	nf_artifact_close(a);
	nf_report_free(&rep);
	return 0;
}
