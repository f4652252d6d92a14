/* reader/json_fetch.c — the JSON directory of an entry that cannot be
 * mapped (a remote one), read in chunks with bounded waste.
 *
 * A local entry's JSON is mapped (source_local.c, issue 11 item 5): pages
 * are read as the parser reaches them, so a directory broken at byte 6 of
 * a claimed 3 GiB costs one page.  A remote entry cannot be mapped, and
 * fetching the whole claim first would download 3 GiB to report byte 6.
 * So the text is fetched in chunks (64 KiB, doubling up to 16 MiB) into an
 * anonymous reservation of json_bytes + 1 bytes (untouched pages cost no
 * memory), and each chunk is fed to yajl, a streaming JSON parser with no
 * tree (memory: the nesting depth), as it arrives.  When yajl finds a
 * syntax error, the prefix fetched so far is parsed the way the reader
 * will parse it (big integers rewritten, then jansson, artifact.c); if
 * that parse also fails there, at least MARGIN bytes before the end of
 * the prefix, the rest is never fetched: it stays zero bytes, which the
 * reader never reaches, because its scan and jansson both stop at that
 * first error.  The reader then reports exactly what it reports for the
 * whole text (same code, line, column and byte), since neither parser
 * looks past the byte where it fails.  Only the evidence's note "(big
 * integers rewritten)" can differ, when the only big integers of the text
 * lie after the error, in what was never fetched.  If jansson does not
 * agree with yajl (yajl accepts \v and \f as whitespace, jansson does not,
 * and the like: they differ only where yajl is more lenient, but the check
 * is cheap), the fetch goes on to the end without yajl.
 *
 * Bound: at most one chunk past the first syntax error (so about twice the
 * error's offset, at least 64 KiB) is fetched; a valid directory is
 * fetched whole, once, and held in memory (json_bytes, under the caller's
 * --max-json / -o max_json ceiling).  Cost on a valid directory: yajl runs
 * at about 200 MB/s (0.2 s of CPU for the 44 MB directory of a
 * 100k-object set, against 1.3 s for the whole check), on every chunk but
 * the last. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

#include "reader/internal.h"

#define FIRST_CHUNK ((uint64_t)64 << 10)
#define MAX_CHUNK ((uint64_t)16 << 20)
/* bytes jansson may read past the one it reports an error at (a UTF-8
 * sequence, a \uXXXX\uXXXX pair), with room to spare */
#define MARGIN 64

/* Does the prefix text[0, n) hold a syntax error of the whole text, where
 * the reader's own parse would find it? */
static bool error_in_prefix(const char *text, size_t n)
{
	struct nf_bigints bi;
	size_t rlen = 0;
	int err = 0;
	char *rw = nf_json_rewrite_bigints(text, n, &rlen, &bi, &err);
	if (err)
		return false;
	const char *t = rw ? rw : text;
	size_t len = rw ? rlen : n;
	json_error_t e;
	json_t *root = json_loadb(t, len, JSON_REJECT_DUPLICATES, &e);
	enum json_error_code code = json_error_code(&e);
	bool found = !root && code != json_error_premature_end_of_input &&
		     code != json_error_out_of_memory && e.position >= 0 &&
		     (size_t)e.position + MARGIN <= len;
	json_decref(root);
	free(rw);
	nf_bigints_free(&bi);
	return found;
}

int nf_json_fetch(struct nf_artifact *a, int (*fetch)(void *ctx, void *buf, uint64_t len,
						      uint64_t off, const char **why),
		  void *ctx, struct nf_report *r)
{
	struct nf_artifact_private *p = a->priv;
	uint64_t n = a->json_bytes;   /* <= the ceiling, < SIZE_MAX (nf_entry_header) */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t map_len = (NF_ENTRY_HEADER_BYTES + (size_t)n + 1 + page - 1) / page * page;
	char *base = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	yajl_handle y = yajl_alloc(NULL, NULL, NULL);
	if (base == MAP_FAILED || !y) {
		if (base != MAP_FAILED)
			munmap(base, map_len);
		if (y)
			yajl_free(y);
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY", "header",
			      "cannot hold the %llu-byte JSON directory", (unsigned long long)n);
		return -ENOMEM;
	}
	char *text = base + NF_ENTRY_HEADER_BYTES;
	uint64_t done = 0, chunk = FIRST_CHUNK;
	bool watch = true;   /* yajl still agrees with the reader so far */
	int rc = 0;
	while (done < n) {
		uint64_t k = n - done < chunk ? n - done : chunk;
		const char *why = NULL;
		rc = fetch(ctx, text + done, k, NF_ENTRY_HEADER_BYTES + done, &why);
		if (rc < 0) {
			nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "ENTRY_UNREADABLE", "header",
				      "%s: reading the JSON failed at byte %llu of %llu: %s",
				      a->entry_path, (unsigned long long)done, (unsigned long long)n,
				      why && *why ? why : strerror(-rc));
			break;
		}
		/* (the last chunk is not fed: nothing is left to spare) */
		if (watch && done + k < n &&
		    yajl_parse(y, (const unsigned char *)text + done, (size_t)k) == yajl_status_error) {
			watch = false;
			if (error_in_prefix(text, (size_t)(done + k)))
				break;   /* the rest stays zero and unread */
		}
		done += k;
		if (chunk < MAX_CHUNK)
			chunk *= 2;
	}
	yajl_free(y);
	if (rc < 0) {
		munmap(base, map_len);
		return rc;
	}
	text[n] = '\0';
	mprotect(base, map_len, PROT_READ);
	p->json_map = base;
	p->json_map_len = map_len;
	a->json_text = text;
	return 0;
}
