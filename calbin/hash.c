/* calbin/hash.c — integrity (seed §9 Gate A, §12): SHA-256 with OpenSSL's
 * EVP, the SHA256SUMS manifest.
 *
 * The hash manifest is SHA256SUMS at the package root in sha256sum's
 * format ("<64 hex>  <path>" or "<64 hex> *<path>", one a line), covering
 * every other file (issue 12 conventions).  --fast verifies its coverage
 * and the digests of files up to 64 MiB and names the larger ones whose
 * integrity it did not prove (HASH_NOT_VERIFIED, info); --hash verifies
 * every digest.  Size and mtime are never taken as proof (§9 Gate A). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calbin/internal.h"

struct cb_sha256 {
	EVP_MD_CTX *ctx;
	bool failed;
};

struct cb_sha256 *cb_sha256_new(void)
{
	struct cb_sha256 *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(h->ctx);
		free(h);
		return NULL;
	}
	return h;
}

void cb_sha256_update(void *arg, const void *buf, size_t len)
{
	struct cb_sha256 *h = arg;
	if (!h->failed && EVP_DigestUpdate(h->ctx, buf, len) != 1)
		h->failed = true;
}

bool cb_sha256_final(struct cb_sha256 *h, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	bool ok = !h->failed && EVP_DigestFinal_ex(h->ctx, md, &n) == 1 && n == 32;
	static const char digits[] = "0123456789abcdef";
	for (unsigned i = 0; ok && i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[ok ? 64 : 0] = '\0';
	cb_sha256_free(h);
	return ok;
}

void cb_sha256_free(struct cb_sha256 *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

/* Hash a whole file with large reads; *done advanced through progress. */
int cb_hash_fd(int fd, char hex[65], void (*tick)(void *, uint64_t), void *tick_arg)
{
	enum { BUF = 1 << 20 };
	struct cb_sha256 *h = cb_sha256_new();
	char *buf = malloc(BUF);
	if (!h || !buf) {
		cb_sha256_free(h);
		free(buf);
		return -ENOMEM;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	for (;;) {
		ssize_t n = read(fd, buf, BUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			cb_sha256_free(h);
			free(buf);
			return -e;
		}
		if (n == 0)
			break;
		cb_sha256_update(h, buf, (size_t)n);
		if (tick)
			tick(tick_arg, (uint64_t)n);
	}
	free(buf);
	return cb_sha256_final(h, hex) ? 0 : -EIO;
}

/* ---- SHA256SUMS ----------------------------------------------------------- */

static bool hex64(const char *s, char out[65])
{
	for (int i = 0; i < 64; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
		out[i] = c;
	}
	out[64] = '\0';
	return true;
}

struct sums_ctx {
	struct cb_build *b;
	struct cb_sums *sums;
	const char *file;
	size_t findings;
};

static int sums_line(void *arg, const char *line, size_t len, uint64_t lineno, bool toolong)
{
	struct sums_ctx *c = arg;
	struct cb_build *b = c->b;
	char digest[65];
	if (len == 0)
		return 0;
	if (toolong || len < 67 || line[64] != ' ' || (line[65] != ' ' && line[65] != '*') ||
	    !hex64(line, digest) || memchr(line, '\0', len) || line[0] == '\\') {
		if (c->findings++ < CB_MAX_FINDINGS_PER_FILE)
			CB_ERR(b->r, 'A', "HASH_MANIFEST_SYNTAX", c->file, lineno, NULL,
			       "seed §9 Gate A: not a sha256sum line ('<64 hex>  <path>')");
		return 0;
	}
	char *path = strndup(line + 66, len - 66);
	if (!path) {
		b->r->oom = true;
		return -ENOMEM;
	}
	const char *rel = path;
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	int i = cb_package_find(b->p, rel);
	if (i < 0 || !S_ISREG(b->p->files[i].type)) {
		if (i < 0 || !b->p->files[i].escapes)
			CB_ERR(b->r, 'A', "HASH_LISTED_MISSING", c->file, lineno, rel,
			       "seed §12: '%s' is listed in the hash manifest but is not a regular file "
			       "of the package", rel);
	} else if (b->p->files[i].sums_line) {
		CB_ERR(b->r, 'A', "HASH_MANIFEST_SYNTAX", c->file, lineno, rel,
		       "seed §9 Gate A: '%s' is listed twice (first on line %" PRIu64 ")", rel,
		       b->p->files[i].sums_line);
	} else {
		b->p->files[i].sums_line = lineno;
		memcpy(c->sums->expect[i], digest, 65);
	}
	free(path);
	return 0;
}

void cb_sums_read(struct cb_build *b, struct cb_sums *sums)
{
	struct cb_package *p = b->p;
	sums->expect = calloc(p->nfiles ? p->nfiles : 1, sizeof *sums->expect);
	if (!sums->expect) {
		b->r->oom = true;
		return;
	}
	if (p->sums_index < 0)
		return;
	const char *file = p->files[p->sums_index].path;
	int fd = cb_open_index(p, (size_t)p->sums_index);
	if (fd < 0) {
		cb_find_op(b->r, 'A', "FILE_UNREADABLE", file, "open: %s", strerror(-fd));
		return;
	}
	struct sums_ctx c = {.b = b, .sums = sums, .file = file};
	struct cb_sha256 *h = cb_sha256_new();
	if (!h) {
		b->r->oom = true;
		close(fd);
		return;
	}
	int rc = cb_read_lines(fd, 1 << 16, 8192, sums_line, &c, cb_sha256_update, h, NULL);
	close(fd);
	if (rc < 0 && rc != -ENOMEM)
		cb_find_op(b->r, 'A', "FILE_UNREADABLE", file, "read: %s", strerror(-rc));
	if (c.findings > CB_MAX_FINDINGS_PER_FILE)
		CB_ERR(b->r, 'A', "HASH_MANIFEST_SYNTAX", file, 0, NULL,
		       "%zu more lines are not sha256sum lines", c.findings - CB_MAX_FINDINGS_PER_FILE);
	if (rc == 0 && cb_sha256_final(h, p->sums_sha256)) {
		sums->read = true;
		memcpy(p->files[p->sums_index].sha256, p->sums_sha256, 65);
		p->files[p->sums_index].hash = CB_HASH_COMPUTED;
	}
	else if (rc != 0)
		cb_sha256_free(h);
}

/* After the jobs: compare, and say what was not proven. */
void cb_sums_check(struct cb_build *b, struct cb_sums *sums)
{
	struct cb_package *p = b->p;
	if (p->sums_index < 0) {
		CB_WARN(b->r, 'A', NF_CLASS_NONE, "HASH_MANIFEST_MISSING", NULL, 0, NULL,
			"seed §9 Gate A, §12: no SHA256SUMS at the package root: integrity not proven%s",
			p->hash_all ? " (the digests computed by --hash are in the report)" : "");
		return;
	}
	if (!sums->read)
		return;
	const char *sfile = p->files[p->sums_index].path;
	size_t uncovered = 0, unverified = 0;
	uint64_t unverified_bytes = 0;
	char *names = NULL;
	size_t nlen = 0;
	for (size_t i = 0; i < p->nfiles; i++) {
		struct cb_file *f = &p->files[i];
		if (!S_ISREG(f->type) || f->escapes || (int)i == p->sums_index)
			continue;
		if (!f->sums_line) {
			if (uncovered++ < CB_MAX_FINDINGS_PER_FILE)
				CB_WARN(b->r, 'A', NF_CLASS_NONE, "HASH_UNCOVERED", f->path, 0, NULL,
					"seed §12: not listed in SHA256SUMS: its integrity is not "
					"proven");
			continue;
		}
		if (f->hash == CB_HASH_FAILED || !f->sha256[0]) {
			if (f->hash != CB_HASH_FAILED) {
				unverified++;
				unverified_bytes += f->size;
				size_t add = strlen(f->path) + 2;
				if (nlen < 4096) {
					char *n = realloc(names, nlen + add + 1);
					if (n) {
						names = n;
						snprintf(names + nlen, add + 1, "%s%s", nlen ? ", " : "", f->path);
						nlen += strlen(names + nlen);
					}
				}
			}
			continue;
		}
		if (strcmp(f->sha256, sums->expect[i]) == 0) {
			f->hash = CB_HASH_OK;
		} else {
			f->hash = CB_HASH_MISMATCH;
			CB_ERR(b->r, 'A', "HASH_MISMATCH", sfile, f->sums_line, f->path,
			       "seed §9 Gate A: SHA-256 of '%s' is %s, the manifest says %s", f->path,
			       f->sha256, sums->expect[i]);
		}
	}
	if (uncovered > CB_MAX_FINDINGS_PER_FILE)
		CB_WARN(b->r, 'A', NF_CLASS_NONE, "HASH_UNCOVERED", sfile, 0, NULL,
			"%zu more files are not listed", uncovered - CB_MAX_FINDINGS_PER_FILE);
	if (unverified)
		CB_INFO(b->r, 'A', "HASH_NOT_VERIFIED", sfile, 0, NULL,
			"seed §9 Gate A: fast mode verified the digests of files up to %llu MiB; the "
			"integrity of %zu larger file%s (%" PRIu64 " bytes) is not proven: %s (run "
			"with --hash)", CB_FAST_HASH_LIMIT >> 20, unverified, unverified == 1 ? "" : "s",
			unverified_bytes, names ? names : "");
	free(names);
}
