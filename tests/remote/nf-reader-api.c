/* tests/remote/nf-reader-api.c — the reader's API on a remote set, held
 * against the same set opened from the local directory nginx serves it
 * from (driven by check.sh).
 *
 *   nf-reader-api DIR/ENTRY URL
 *
 * URL must be the URL of DIR/ENTRY itself.  Checks, in order, and prints
 * "ok: ..." for each; the first that fails prints "FAIL: ..." and exits 1:
 *   - a URL without NF_OPEN_REMOTE is a local path (no such file);
 *   - both open; same artifact id, files, payload, objects; both check clean;
 *   - nf_artifact_remote: NULL for the local set, the engine's handle (with
 *     as many files) for the remote one; nf_file_url: NULL locally, the
 *     entry's URL and each part's URL beside it;
 *   - nf_file_acquire and nf_file_fingerprint: -EREMOTE for the remote set;
 *   - nf_file_pread of every file, whole: the local file's bytes; a bad
 *     index or span: -EINVAL;
 *   - every object through nf_payload_read: the same bytes both ways, and
 *     through the engine itself (nf_range_map's segments to nf_remote_read
 *     on nf_artifact_remote's handle, as the daemon will read);
 *   - uses.json the same both ways, also after nf_artifact_drop_json_text
 *     (the remote one read from the server again);
 *   - part 1 touched on disk (nginx's ETag changes): the next remote read
 *     of it fails with -EIO, the file becomes bad, FILE_CHANGED, the change
 *     hook is called exactly once, nf_file_verify says -EIO. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "reader/artifact.h"
#include "report/report.h"
#include "remote/remote.h"

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("FAIL: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	exit(1);
}

static void ok(const char *what)
{
	printf("ok: %s\n", what);
}

static struct nf_artifact *open_set(const char *entry, unsigned flags)
{
	struct nf_report r;
	struct nf_artifact *a = NULL;
	struct nf_open_opts o = {.flags = flags};
	nf_report_init(&r);
	int rc = nf_artifact_open_opts(entry, &o, &r, &a);
	if (rc == 0)
		nf_artifact_check_files(a, &r);
	if (rc != 0 || r.count != 0) {
		for (size_t i = 0; i < r.count; i++)
			printf("  %s %s: %s\n", r.items[i].code, r.items[i].where, r.items[i].evidence);
		fail("%s: open %d, %zu findings", entry, rc, r.count);
	}
	nf_report_free(&r);
	return a;
}

static char *slurp(const char *path, uint64_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail("%s: %s", path, strerror(errno));
	struct stat st;
	fstat(fileno(f), &st);
	char *buf = malloc((size_t)st.st_size + 1);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		fail("%s: read", path);
	fclose(f);
	*n = (uint64_t)st.st_size;
	return buf;
}

static void hook(void *arg, uint32_t file)
{
	unsigned *calls = arg;
	calls[file < 8 ? file : 7]++;
}

/* object o of `a`, read through the engine of a remote set as the daemon
 * will: the range map's segments handed to nf_remote_read unchanged */
static int engine_read(struct nf_artifact *a, const struct nf_object *o, char *buf)
{
	struct nf_remote_thread *t;
	struct nf_segment segs[64];
	struct nf_io ios[64];
	ssize_t n = nf_range_map(a, o->offset, o->bytes, segs, 64);
	if (n < 0 || n > 64 || nf_remote_thread_new(nf_artifact_remote(a), &t) < 0)
		return -EINVAL;
	for (ssize_t k = 0; k < n; k++)
		ios[k] = (struct nf_io){.file = segs[k].file, .offset = segs[k].file_offset,
					.length = segs[k].length, .dst = buf + segs[k].dest_offset};
	int rc = nf_remote_read(t, ios, (size_t)n);
	nf_remote_thread_free(t);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: nf-reader-api DIR/ENTRY URL\n");
		return 2;
	}
	const char *path = argv[1], *url = argv[2];
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';

	/* without the flag a URL is what it always was: a path */
	struct nf_report r;
	struct nf_artifact *none = NULL;
	nf_report_init(&r);
	int rc = nf_artifact_open(url, &r, &none);
	if (rc != -ENOENT || none || !nf_report_has_code(&r, "ENTRY_UNREADABLE"))
		fail("a URL opened without NF_OPEN_REMOTE: %d", rc);
	nf_report_free(&r);
	ok("without NF_OPEN_REMOTE a URL is a local path (ENOENT)");

	struct nf_artifact *L = open_set(path, NF_OPEN_LAZY_USES_JSON);
	struct nf_artifact *R = open_set(url, NF_OPEN_REMOTE | NF_OPEN_LAZY_USES_JSON);
	if (strcmp(L->artifact_id_hex, R->artifact_id_hex) || L->nfiles != R->nfiles ||
	    L->payload_bytes != R->payload_bytes || L->nobjects != R->nobjects ||
	    L->json_bytes != R->json_bytes || strcmp(L->entry_name, R->entry_name))
		fail("the two models differ");
	if (strcmp(R->entry_path, url) != 0)
		fail("entry_path %s, want %s", R->entry_path, url);
	ok("local and remote open and check clean: same id, files, payload, objects, entry name");

	struct nf_remote *h = nf_artifact_remote(R);
	if (nf_artifact_remote(L) != NULL || !h || nf_remote_nfiles(h) != R->nfiles)
		fail("nf_artifact_remote");
	char want[8192];
	const char *slash = strrchr(url, '/');
	for (uint32_t i = 0; i < R->nfiles; i++) {
		if (nf_file_url(L, i) != NULL)
			fail("nf_file_url of a local file");
		if (i == 0)
			snprintf(want, sizeof want, "%s", url);
		else
			snprintf(want, sizeof want, "%.*s%s", (int)(slash + 1 - url), url, R->files[i].path);
		const char *got = nf_file_url(R, i);
		if (!got || strcmp(got, want) != 0)
			fail("nf_file_url(%u) = %s, want %s", i, got ? got : "NULL", want);
	}
	if (nf_file_url(R, R->nfiles) != NULL)
		fail("nf_file_url out of range");
	ok("nf_artifact_remote: the engine's handle (NULL locally); nf_file_url: the entry and its siblings");

	struct nf_file_fingerprint fp;
	if (nf_file_acquire(R, 0) != -EREMOTE || nf_file_acquire(R, R->nfiles - 1) != -EREMOTE ||
	    nf_file_fingerprint(R, 0, &fp) != -EREMOTE)
		fail("acquire/fingerprint of a remote file");
	int fd = nf_file_acquire(L, 0);
	if (fd < 0)
		fail("local acquire: %d", fd);
	nf_file_release(L, 0);
	ok("nf_file_acquire, nf_file_fingerprint: -EREMOTE for a remote set");

	for (uint32_t i = 0; i < R->nfiles; i++) {
		char name[8192];
		uint64_t n;
		snprintf(name, sizeof name, "%s/%s", dir, i ? R->files[i].path : R->entry_name);
		char *disk = slurp(name, &n), *a = malloc(n), *b = malloc(n);
		if (nf_file_pread(R, i, a, n, 0) != 0 || nf_file_pread(L, i, b, n, 0) != 0 ||
		    memcmp(a, disk, n) || memcmp(b, disk, n))
			fail("nf_file_pread of file %u", i);
		if (nf_file_pread(R, i, a, 1, n) != -EIO || nf_file_pread(L, i, a, 1, n) != -ENODATA)
			fail("a read past the end of file %u", i);
		free(disk);
		free(a);
		free(b);
	}
	char c;
	if (nf_file_pread(R, R->nfiles, &c, 1, 0) != -EINVAL ||
	    nf_file_pread(R, 0, &c, 2, UINT64_MAX - 1) != -EINVAL || nf_file_pread(R, 0, NULL, 1, 0) != -EINVAL)
		fail("bad index or span accepted");
	ok("nf_file_pread: every file whole = the bytes on disk, both ways; past the end -EIO (remote), -ENODATA (local); bad index or span -EINVAL");

	for (uint32_t k = 0; k < R->nobjects; k++) {
		const struct nf_object *o = &R->objects[k];
		char *a = malloc(o->bytes + 1), *b = malloc(o->bytes + 1), *e = malloc(o->bytes + 1);
		if (nf_payload_read(R, o->offset, o->bytes, a, NULL) != 0 ||
		    nf_payload_read(L, o->offset, o->bytes, b, NULL) != 0 || memcmp(a, b, o->bytes))
			fail("object %s differs", o->id);
		if (engine_read(R, o, e) != 0 || memcmp(e, b, o->bytes))
			fail("object %s through the engine", o->id);
		free(a);
		free(b);
		free(e);
	}
	ok("every object: the same bytes through nf_payload_read both ways and through the engine's nf_remote_read");

	char *ul = nf_uses_json(L), *ur = nf_uses_json(R);
	if (!ul || !ur || strcmp(ul, ur))
		fail("uses.json differs");
	free(ur);
	nf_artifact_drop_json_text(R);
	ur = nf_uses_json(R);
	if (!ur || strcmp(ul, ur))
		fail("uses.json differs after the text was dropped");
	free(ul);
	free(ur);
	ok("uses.json the same, also rebuilt from the server after nf_artifact_drop_json_text");

	/* part 1 touched: nginx's ETag is mtime-size, so it changes */
	unsigned calls[8] = {0};
	nf_files_set_change_hook(R, hook, calls);
	char part[8192];
	snprintf(part, sizeof part, "%s/%s", dir, R->files[1].path);
	struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = time(NULL) + 3600}};
	if (utimensat(AT_FDCWD, part, ts, 0) != 0)
		fail("touch %s", part);
	rc = nf_file_pread(R, 1, &c, 1, 100);
	const char *reason = NULL;
	enum nf_file_status st = nf_file_status(R, 1, &reason);
	if (rc != -EIO || st != NF_FILE_BAD || !reason || !strstr(reason, "changed on the server") ||
	    !strstr(reason, "412"))
		fail("after the change: rc %d status %d reason %s", rc, st, reason ? reason : "NULL");
	if (nf_file_verify(R, 1) != -EIO || nf_file_pread(R, 1, &c, 1, 0) != -EIO || calls[1] != 1)
		fail("after the change: verify, hook calls %u", calls[1]);
	struct nf_files_stats fst;
	nf_files_stats(R, &fst);
	if (fst.changes != 1 || fst.open != 0)
		fail("stats after the change: changes %" PRIu64, fst.changes);
	printf("  reason: %s\n", reason);
	ok("a part changed on the server: -EIO, bad (FILE_CHANGED, naming 412), the hook once, verify -EIO");

	nf_artifact_close(L);
	nf_artifact_close(R);
	return 0;
}
