/* remote/headers.c — one response's header block, line by line.
 *
 * The lines come from the server: every value is copied bounded, every
 * number parsed with overflow checks, and what does not parse is left
 * unset (the caller then treats the response as lacking it: no
 * Content-Range is a refusal, no Retry-After the plain backoff).  Kept
 * apart from http.c so that it can be tested and fuzzed without a
 * transfer (tests/remote/test_remote.c, fuzz/fuzz_remote.c). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "remote/internal.h"

/* A Retry-After longer than this is taken as this (the retry budget, at
 * most minutes, then gives up at once). */
#define RETRY_AFTER_MAX_S 86400

void nf_rresp_reset(struct nf_rresp *r)
{
	r->status = 0;
	r->etag[0] = r->lastmod[0] = r->location[0] = '\0';
	r->has_cr = false;
	r->cr_first = r->cr_total = 0;
	r->clen = UINT64_MAX;
	r->retry_after_ms = -1;
}

/* dst = v[0..n) without trailing white space, cut to cap - 1 bytes. */
static void copy_value(char *dst, size_t cap, const char *v, size_t n)
{
	while (n > 0 && isspace((unsigned char)v[n - 1]))
		n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, v, n);
	dst[n] = '\0';
}

/* Decimal digits only (no sign, no space), no overflow. */
static bool parse_u64(const char *s, char **end, uint64_t *v)
{
	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	unsigned long long x = strtoull(s, end, 10);
	if (errno)
		return false;
	*v = x;
	return true;
}

/* Content-Range: bytes FIRST-LAST/TOTAL (TOTAL may be '*') */
static void parse_content_range(struct nf_rresp *r, const char *v)
{
	char *e;
	uint64_t first, last, total;
	if (strncasecmp(v, "bytes ", 6) != 0 || !parse_u64(v + 6, &e, &first) || *e != '-' ||
	    !parse_u64(e + 1, &e, &last) || *e != '/' || last < first)
		return;
	r->has_cr = true;
	r->cr_first = first;
	r->cr_total = parse_u64(e + 1, &e, &total) ? total : UINT64_MAX;
}

/* Retry-After: SECONDS or an HTTP-date (RFC 9110 §10.2.3), both capped. */
static void parse_retry_after(struct nf_rresp *r, const char *v, size_t n, time_t now)
{
	char tmp[64], *e;
	uint64_t s;
	copy_value(tmp, sizeof tmp, v, n);
	if (parse_u64(tmp, &e, &s) && *e == '\0') {
		r->retry_after_ms = s > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S * 1000L : (long)s * 1000;
		return;
	}
	time_t when = curl_getdate(tmp, NULL);
	if (when == -1)
		return;
	/* a date may be any year curl parses: compare before multiplying */
	if (when <= now)
		r->retry_after_ms = 0;
	else if (when - now > RETRY_AFTER_MAX_S)
		r->retry_after_ms = RETRY_AFTER_MAX_S * 1000L;
	else
		r->retry_after_ms = (long)(when - now) * 1000;
}

static void header_field(struct nf_rresp *r, const char *h, size_t n, time_t now)
{
	const char *colon = memchr(h, ':', n), *v;
	size_t klen, vlen;
	if (colon == NULL)
		return;
	klen = (size_t)(colon - h);
	v = colon + 1;
	while (v < h + n && (*v == ' ' || *v == '\t'))
		v++;
	vlen = (size_t)(h + n - v);
#define IS(k) (klen == sizeof(k) - 1 && strncasecmp(h, k, klen) == 0)
	if (IS("etag")) {
		copy_value(r->etag, sizeof r->etag, v, vlen);
	} else if (IS("last-modified")) {
		copy_value(r->lastmod, sizeof r->lastmod, v, vlen);
	} else if (IS("content-range")) {
		char tmp[128];
		copy_value(tmp, sizeof tmp, v, vlen);
		parse_content_range(r, tmp);
	} else if (IS("content-length")) {
		char tmp[32], *e;
		uint64_t c;
		copy_value(tmp, sizeof tmp, v, vlen);
		if (parse_u64(tmp, &e, &c) && *e == '\0')
			r->clen = c;
	} else if (IS("retry-after")) {
		parse_retry_after(r, v, vlen, now);
	} else if (IS("location")) {
		copy_value(r->location, sizeof r->location, v, vlen);
	}
#undef IS
}

enum nf_rhline nf_rresp_line(struct nf_rresp *r, const char *line, size_t n, time_t now)
{
	if (n >= 5 && strncmp(line, "HTTP/", 5) == 0) {
		const char *sp = memchr(line, ' ', n);
		nf_rresp_reset(r);
		/* three digits after the version (RFC 9112 §4); else 0, which
		 * no caller takes for success */
		if (sp != NULL && line + n - sp > 3 && isdigit((unsigned char)sp[1]) &&
		    isdigit((unsigned char)sp[2]) && isdigit((unsigned char)sp[3]))
			r->status = (sp[1] - '0') * 100 + (sp[2] - '0') * 10 + (sp[3] - '0');
		return NF_RH_STATUS;
	}
	if (n == 0 || (n <= 2 && (line[0] == '\r' || line[0] == '\n')))
		return NF_RH_END;
	header_field(r, line, n, now);
	return NF_RH_FIELD;
}
