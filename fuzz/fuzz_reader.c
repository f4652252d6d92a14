/* fuzz-reader: nf_artifact_open and everything a tool does after it, on an
 * arbitrary artifact set.
 *
 * Input: one or more files, separated by the marker NF_FUZZ_MARKER:
 *     NAME '\n' BYTES  [ MARKER NAME '\n' BYTES ]...
 * The first file is the entry (named "e.ninfer" when NAME is not a plain
 * file name), the others are written beside it under their NAME (skipped
 * when NAME is not [A-Za-z0-9._-]{1,64} or starts with '.'), so the files
 * table can name them.  Files go to a per-process directory under /dev/shm
 * (tmpfs), emptied after each input.
 *
 * Then: nf_artifact_open, nf_artifact_check_files, nf_artifact_check_deep,
 * nf_report_to_json, nf_report_print_text (to /dev/null), nf_files_json,
 * nf_object_find/nf_binding_find of every record, and per object the range
 * map of its bytes (segments contiguous, each inside its file's payload) and
 * a pread of every segment through nf_file_acquire; nf_artifact_close.
 * ASan/UBSan and the leak checker catch the rest. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz/fuzz_common.h"
#include "reader/artifact.h"

#define NF_FUZZ_MARKER "\nNF-FUZZ-FILE:"
#define MAX_FILES 64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static FILE *devnull;

static void cleanup_dir(void)
{
	if (dir[0])
		rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(dir, sizeof dir, "/dev/shm/nf-fuzz-reader.XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof dir, "/tmp/nf-fuzz-reader.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	atexit(cleanup_dir);
	devnull = fopen("/dev/null", "w");
	return 0;
}

static bool plain_name(const char *s, size_t n)
{
	if (n == 0 || n > 64 || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

static void write_file(const char *name, const uint8_t *p, size_t n)
{
	char path[160];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			break;
		p += w;
		n -= (size_t)w;
	}
	close(fd);
}

static void exercise(struct nf_artifact *a, struct nf_report *rep, const char *entry)
{
	nf_artifact_check_files(a, rep);
	nf_artifact_check_deep(a, rep, NULL, NULL);

	char *argv[] = {(char *)"fuzz-reader", (char *)entry, NULL};
	char *j = nf_report_to_json(rep, a, entry, "fuzz-reader", 2, argv);
	free(j);
	j = nf_files_json(a);
	free(j);
	if (devnull)
		nf_report_print_text(devnull, rep, a, entry);

	for (uint32_t i = 0; i < a->nfiles; i++) {
		const char *reason = NULL;
		(void)nf_file_status(a, i, &reason);
	}
	for (uint32_t i = 0; i < a->nobjects; i++) {
		const struct nf_object *o = &a->objects[i];
		if (a->directory_ok)
			FUZZ_CHECK(nf_object_find(a, o->id) == (int64_t)i, "object %u not found", i);
		struct nf_segment segs[MAX_FILES + 2];
		ssize_t n = nf_range_map(a, o->offset, o->bytes, segs, MAX_FILES + 2);
		if (n < 0) {
			FUZZ_CHECK(!a->directory_ok, "object %u outside the payload", i);
			continue;
		}
		uint64_t dest = 0;
		for (ssize_t k = 0; k < n && k < MAX_FILES + 2; k++) {
			const struct nf_segment *s = &segs[k];
			FUZZ_CHECK(s->file < a->nfiles && s->dest_offset == dest && s->length > 0,
				   "object %u segment %zd", i, k);
			const struct nf_file *f = &a->files[s->file];
			FUZZ_CHECK(s->file_offset >= f->data_offset &&
				   s->file_offset - f->data_offset <= f->payload_bytes &&
				   s->length <= f->payload_bytes - (s->file_offset - f->data_offset),
				   "object %u segment %zd outside file %u", i, k, s->file);
			dest += s->length;
			int fd = nf_file_acquire(a, s->file);
			if (fd >= 0 && s->length <= (1u << 20)) {
				uint8_t *buf = malloc(s->length);
				if (buf && pread(fd, buf, s->length, (off_t)s->file_offset) < 0)
					(void)errno;
				free(buf);
			}
			if (fd >= 0)
				nf_file_release(a, s->file);
		}
		if (n <= MAX_FILES + 2)
			FUZZ_CHECK(dest == o->bytes, "object %u segments cover %llu of %llu bytes", i,
				   (unsigned long long)dest, (unsigned long long)o->bytes);
	}
	if (a->directory_ok)
		for (uint32_t i = 0; i < a->nbindings; i++)
			FUZZ_CHECK(nf_binding_find(a, a->bindings[i].name) == (int64_t)i,
				   "binding %u not found", i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t mlen = sizeof NF_FUZZ_MARKER - 1;
	char names[MAX_FILES][72];
	unsigned nnames = 0;
	const uint8_t *p = data, *end = data + size;
	while (p <= end && nnames < MAX_FILES) {
		const uint8_t *next = memmem(p, (size_t)(end - p), NF_FUZZ_MARKER, mlen);
		const uint8_t *chunk_end = next ? next : end;
		const uint8_t *nl = memchr(p, '\n', (size_t)(chunk_end - p));
		const uint8_t *body = nl ? nl + 1 : chunk_end;
		size_t nlen = nl ? (size_t)(nl - p) : 0;
		bool ok = nl && plain_name((const char *)p, nlen);
		if (nnames == 0 && !ok) {
			strcpy(names[0], "e.ninfer");
			ok = true;
		} else if (ok) {
			memcpy(names[nnames], p, nlen);
			names[nnames][nlen] = 0;
			for (unsigned k = 0; k < nnames; k++)
				if (strcmp(names[k], names[nnames]) == 0)
					ok = false;
		}
		if (ok) {
			write_file(names[nnames], body, (size_t)(chunk_end - body));
			nnames++;
		}
		if (!next)
			break;
		p = next + mlen;
	}

	char entry[160];
	snprintf(entry, sizeof entry, "%s/%s", dir, names[0]);
	struct nf_report rep;
	nf_report_init(&rep);
	struct nf_artifact *a = NULL;
	int rc = nf_artifact_open(entry, &rep, &a);
	if (rc == 0) {
		FUZZ_CHECK(a != NULL, "open 0 without an artifact");
		exercise(a, &rep, entry);
		nf_artifact_close(a);
	} else {
		FUZZ_CHECK(rc < 0 && a == NULL, "open rc %d", rc);
		char *argv[] = {(char *)"fuzz-reader", entry, NULL};
		char *j = nf_report_to_json(&rep, NULL, entry, "fuzz-reader", 2, argv);
		free(j);
	}
	FUZZ_CHECK(rep.count > 0 || rc == 0, "failed open without a finding");
	nf_report_free(&rep);

	for (unsigned k = 0; k < nnames; k++) {
		char path[160];
		snprintf(path, sizeof path, "%s/%s", dir, names[k]);
		unlink(path);
	}
	return 0;
}
