/* fuzz/fuzz_remote.c — what a server or a set's JSON hands the remote
 * engine (issue 14): response header lines (remote/headers.c), entry URLs
 * and the part names the set's JSON gives (remote/url.c), redaction, and
 * S3 error bodies.
 *
 * Input: byte 0 selects the mode, the rest is its text.
 *   0: header lines, split after each '\n', fed to nf_rresp_line(); after
 *      every line the response is well formed (strings terminated and in
 *      bounds, status 0..999, Retry-After -1 or 0..one day, a Content-Range
 *      first byte only with has_cr), and a status line reset it.
 *   1: "URL\0NAME\0ENDPOINT" (the endpoint optional): when the URL parses,
 *      a sibling URL for NAME, if given, is the prefix plus one segment of
 *      unreserved bytes and upper-case %XX that decodes to NAME exactly
 *      (a part can never leave the entry's directory), nf_rurl_is_child()
 *      says so, and the redacted URL keeps no userinfo (only the ***@
 *      marker, present when the URL had a password) and no query, and
 *      redacts to itself.
 *   2: an S3 error body: a code, when found, is 1..cap-1 bytes of
 *      [A-Za-z0-9._-]. */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "remote/internal.h"
#include "fuzz_common.h"

static void check_resp(const struct nf_rresp *r)
{
	FUZZ_CHECK(memchr(r->etag, 0, sizeof r->etag) != NULL, "etag unterminated");
	FUZZ_CHECK(memchr(r->lastmod, 0, sizeof r->lastmod) != NULL, "lastmod unterminated");
	FUZZ_CHECK(memchr(r->location, 0, sizeof r->location) != NULL, "location unterminated");
	FUZZ_CHECK(r->status >= 0 && r->status <= 999, "status %ld", r->status);
	FUZZ_CHECK(r->retry_after_ms >= -1 && r->retry_after_ms <= 86400000L, "retry %ld",
		   r->retry_after_ms);
	FUZZ_CHECK(r->has_cr || (r->cr_first == 0 && r->cr_total == 0), "range without has_cr");
}

static void fuzz_headers(const char *p, size_t n)
{
	struct nf_rresp r;
	const time_t now = 1735689600;   /* a fixed clock: runs repeat */

	nf_rresp_reset(&r);
	for (size_t at = 0; at < n;) {
		const char *nl = memchr(p + at, '\n', n - at);
		size_t len = nl ? (size_t)(nl - (p + at)) + 1 : n - at;
		/* libcurl hands each line in its own buffer: copy, so ASan
		 * sees a read past the line */
		char *line = malloc(len ? len : 1);
		if (line == NULL)
			return;
		memcpy(line, p + at, len);
		enum nf_rhline k = nf_rresp_line(&r, line, len, now);
		if (k == NF_RH_STATUS)
			FUZZ_CHECK(!r.has_cr && r.etag[0] == '\0' && r.clen == UINT64_MAX,
				   "a status line kept the last response's fields");
		free(line);
		check_resp(&r);
		at += len;
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The segment after the prefix decodes to name, and is only unreserved
 * bytes and upper-case escapes. */
static void check_segment(const char *seg, const char *name)
{
	size_t k = 0;
	for (const char *s = seg; *s; k++) {
		char c;
		if (*s == '%') {
			int hi = hexval(s[1]), lo = hi < 0 ? -1 : hexval(s[2]);
			FUZZ_CHECK(hi >= 0 && lo >= 0, "bad escape in %s", seg);
			c = (char)(hi * 16 + lo);
			FUZZ_CHECK(c != 0 && !(isalnum((unsigned char)c) || strchr("-._~", c)),
				   "unreserved byte escaped in %s", seg);
			s += 3;
		} else {
			c = *s++;
			FUZZ_CHECK(isalnum((unsigned char)c) || strchr("-._~", c),
				   "reserved byte %#x unescaped in %s", (unsigned char)c, seg);
		}
		FUZZ_CHECK(name[k] == c, "segment %s does not decode to the name", seg);
	}
	FUZZ_CHECK(name[k] == '\0', "segment %s is short of the name", seg);
}

static void fuzz_url(const char *p, size_t n)
{
	/* up to three NUL-separated strings */
	char *buf = malloc(n + 3);
	if (buf == NULL)
		return;
	memcpy(buf, p, n);
	buf[n] = buf[n + 1] = buf[n + 2] = '\0';
	const char *url = buf, *name = url + strlen(url) + 1;
	const char *endpoint = name <= buf + n ? name + strlen(name) + 1 : NULL;
	if (endpoint && (endpoint > buf + n || *endpoint == '\0'))
		endpoint = NULL;

	struct nf_rurl u;
	char *err = NULL;
	if (nf_rurl_parse(&u, url, endpoint, "us-east-1", &err) != 0) {
		FUZZ_CHECK(err != NULL, "a refusal without a message");
		free(err);
		free(buf);
		return;
	}
	if (name <= buf + n && *name) {
		const char *why = NULL;
		char *s = nf_rurl_sibling(&u, name, &why);
		if (s) {
			size_t pl = strlen(u.prefix);
			FUZZ_CHECK(strncmp(s, u.prefix, pl) == 0, "%s outside %s", s, u.prefix);
			check_segment(s + pl, name);
			FUZZ_CHECK(nf_rurl_is_child(u.prefix, s), "%s not a child of %s", s, u.prefix);
			free(s);
		} else {
			FUZZ_CHECK(why != NULL, "a refused name without a reason");
		}
	}
	char *red = nf_remote_redact(url);
	if (red) {
		char *again = nf_remote_redact(red);
		FUZZ_CHECK(again == NULL || strcmp(again, red) == 0, "redaction not idempotent");
		free(again);
		/* the authority holds no userinfo but the marker, and no
		 * query survives: the path is the user's own text */
		const char *sch = strstr(red, "://");
		const char *auth = sch ? sch + 3 + strspn(sch + 3, "/") : red;
		size_t alen = strcspn(auth, "/?#");
		const char *at = memchr(auth, '@', alen);
		FUZZ_CHECK(at == NULL || (at == auth + 3 && strncmp(auth, "***@", 4) == 0 &&
					  memchr(at + 1, '@', alen - 4) == NULL),
			   "userinfo left in %s", red);
		const char *q = strchr(red, '?');
		FUZZ_CHECK(q == NULL || strcmp(q, "?***") == 0, "query left in %s", red);
		if (u.password && *u.password && u.user)
			FUZZ_CHECK(at != NULL, "userinfo %s not marked in %s", u.user, red);
		free(red);
	}
	nf_rurl_free(&u);
	free(buf);
}

static void fuzz_s3code(const char *p, size_t n)
{
	char out[64];
	const char *c = nf_rhttp_s3code(p, n, out, sizeof out);
	if (c == NULL)
		return;
	size_t len = strlen(c);
	FUZZ_CHECK(len > 0 && len < sizeof out, "code length %zu", len);
	for (size_t i = 0; i < len; i++)
		FUZZ_CHECK(isalnum((unsigned char)c[i]) || strchr("._-", c[i]), "code byte %#x",
			   (unsigned char)c[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	const char *p = (const char *)data + 1;
	size_t n = size - 1;
	switch (data[0] % 3) {
	case 0:
		fuzz_headers(p, n);
		break;
	case 1:
		fuzz_url(p, n);
		break;
	default:
		fuzz_s3code(p, n);
		break;
	}
	return 0;
}
