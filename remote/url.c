/* remote/url.c — the URL model: entry URLs, sibling parts, redaction.
 *
 * A part is named by a plain file name (the reader's seed §3.3 rules
 * already refused '/', "." and ".."), and its URL is the entry's
 * "directory" prefix plus that name as ONE percent-encoded path segment:
 * every byte outside RFC 3986 §2.3 unreserved (ALPHA DIGIT - . _ ~) is
 * encoded, so '/', '%', '?', '#' and '\' in a name reach the server as
 * data, never as syntax, and no name can climb out of the prefix.  The
 * result is checked again (nf_rurl_is_child) before it is used.
 *
 * s3://BUCKET/KEY becomes ENDPOINT/BUCKET/KEY (path-style) when an
 * endpoint is given, else https://BUCKET.s3.REGION.amazonaws.com/KEY
 * (virtual-hosted; path-style on AWS for bucket names with dots, which a
 * wildcard certificate cannot cover). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/internal.h"

static bool unreserved(unsigned char c)
{
	return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

char *nf_rurl_encode(const char *s, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s), cap;
	char *out, *p;

	if (__builtin_mul_overflow(n, 3, &cap) || __builtin_add_overflow(cap, 1, &cap))
		return NULL;
	out = malloc(cap);
	if (out == NULL)
		return NULL;
	p = out;
	for (const unsigned char *q = (const unsigned char *)s; *q; q++) {
		if (unreserved(*q) || (keep_slash && *q == '/')) {
			*p++ = (char)*q;
		} else {
			*p++ = '%';
			*p++ = hex[*q >> 4];
			*p++ = hex[*q & 15];
		}
	}
	*p = '\0';
	return out;
}

bool nf_rurl_is_child(const char *prefix, const char *url)
{
	size_t n = strlen(prefix);
	const char *s;

	if (n == 0 || prefix[n - 1] != '/' || strncmp(url, prefix, n) != 0)
		return false;
	s = url + n;
	if (*s == '\0' || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (; *s; s++) {
		if (unreserved((unsigned char)*s))
			continue;
		if (s[0] == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
			s += 2;
			continue;
		}
		return false;
	}
	return true;
}

char *nf_rurl_sibling(const struct nf_rurl *u, const char *name, const char **why)
{
	char *enc, *url;

	*why = NULL;
	if (name[0] == '\0')
		*why = "is empty";
	else if (strchr(name, '/'))
		*why = "contains '/'";
	else if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		*why = "is a dot entry";
	if (*why)
		return NULL;
	enc = nf_rurl_encode(name, false);
	if (enc == NULL) {
		*why = "out of memory";
		return NULL;
	}
	if (asprintf(&url, "%s%s", u->prefix, enc) < 0)
		url = NULL;
	free(enc);
	if (url == NULL) {
		*why = "out of memory";
		return NULL;
	}
	if (!nf_rurl_is_child(u->prefix, url)) {
		free(url);
		*why = "would not be one path segment under the entry's directory";
		return NULL;
	}
	return url;
}

void nf_rurl_free(struct nf_rurl *u)
{
	free(u->prefix);
	free(u->entry);
	free(u->origin);
	if (u->password)
		explicit_bzero(u->password, strlen(u->password));
	free(u->user);
	free(u->password);
	free(u->bucket);
	memset(u, 0, sizeof *u);
}

static int seterr(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int seterr(char **err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
	return -EINVAL;
}

/* splits the request URL `full` (no credentials) into prefix and entry */
static int set_prefix(struct nf_rurl *u, const char *full, char **err)
{
	const char *slash = strrchr(full, '/');
	const char *path = strstr(full, "://");
	path = path ? strchr(path + 3, '/') : NULL;
	if (path == NULL || slash == NULL || slash < path || slash[1] == '\0')
		return seterr(err, "the URL names no file (its path must not end with '/')");
	u->prefix = strndup(full, (size_t)(slash - full) + 1);
	u->entry = strdup(full);
	if (u->prefix == NULL || u->entry == NULL)
		return -ENOMEM;
	return 0;
}

static char *dup_origin(const char *url)
{
	const char *s = strstr(url, "://");
	const char *e = s ? strchr(s + 3, '/') : NULL;
	return e ? strndup(url, (size_t)(e - url)) : strdup(url);
}

/* The host right after "://".  libcurl also takes "http:///host" (any
 * number of slashes, as browsers do), but everything that shows a URL
 * (nf_remote_redact) finds the userinfo after exactly two: such a URL
 * would show its password. */
static bool host_follows(const char *url)
{
	const char *s = strstr(url, "://");
	return s != NULL && s[3] != '\0' && s[3] != '/';
}

static int parse_http(struct nf_rurl *u, const char *url, char **err)
{
	CURLU *h = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *q = NULL, *frag = NULL;
	char *full = NULL;
	int rc = 0;

	if (h == NULL)
		return -ENOMEM;
	if (!host_follows(url)) {
		rc = seterr(err, "not a valid URL: the host must follow \"://\"");
		goto out;
	}
	if (curl_url_set(h, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK) {
		rc = seterr(err, "not a valid URL");
		goto out;
	}
	curl_url_get(h, CURLUPART_SCHEME, &scheme, 0);
	curl_url_get(h, CURLUPART_HOST, &host, 0);
	curl_url_get(h, CURLUPART_PORT, &port, 0);
	curl_url_get(h, CURLUPART_PATH, &path, 0);
	curl_url_get(h, CURLUPART_USER, &u->user, CURLU_URLDECODE);
	curl_url_get(h, CURLUPART_PASSWORD, &u->password, CURLU_URLDECODE);
	if (curl_url_get(h, CURLUPART_QUERY, &q, 0) == CURLUE_OK && q) {
		rc = seterr(err, "a query string is not supported: parts are found beside the entry");
		goto out;
	}
	if (curl_url_get(h, CURLUPART_FRAGMENT, &frag, 0) == CURLUE_OK && frag) {
		rc = seterr(err, "a fragment ('#') is not supported");
		goto out;
	}
	if (scheme == NULL || host == NULL || host[0] == '\0' || path == NULL) {
		rc = seterr(err, "not a valid URL");
		goto out;
	}
	u->scheme = strcmp(scheme, "https") == 0 ? NF_RS_HTTPS : NF_RS_HTTP;
	if (asprintf(&full, "%s://%s%s%s%s", scheme, host, port ? ":" : "", port ? port : "",
		     path) < 0) {
		full = NULL;
		rc = -ENOMEM;
		goto out;
	}
	rc = set_prefix(u, full, err);
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_free(q);
	curl_free(frag);
	free(full);
	curl_url_cleanup(h);
	return rc;
}

/* S3 bucket names: 3-63 of [a-z0-9.-], starting and ending alphanumeric */
static bool bucket_ok(const char *b, size_t n)
{
	if (n < 3 || n > 63 || !isalnum((unsigned char)b[0]) || !isalnum((unsigned char)b[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)b[i]) || isdigit((unsigned char)b[i]) || b[i] == '.' ||
		      b[i] == '-'))
			return false;
	return true;
}

static int parse_s3(struct nf_rurl *u, const char *url, const char *endpoint, const char *region,
		    char **err)
{
	const char *b = url + 5, *slash = strchr(b, '/');
	char *key = NULL, *full = NULL;
	int rc;

	if (slash == NULL || slash[1] == '\0')
		return seterr(err, "an s3 URL is s3://BUCKET/KEY");
	if (!bucket_ok(b, (size_t)(slash - b)))
		return seterr(err, "not a valid S3 bucket name (3-63 of a-z 0-9 . -)");
	u->s3 = true;
	u->bucket = strndup(b, (size_t)(slash - b));
	key = nf_rurl_encode(slash + 1, true);
	if (u->bucket == NULL || key == NULL) {
		free(key);
		return -ENOMEM;
	}
	if (endpoint && endpoint[0]) {
		size_t n = strlen(endpoint);
		while (n > 0 && endpoint[n - 1] == '/')
			n--;
		if ((strncmp(endpoint, "http://", 7) != 0 && strncmp(endpoint, "https://", 8) != 0) ||
		    !host_follows(endpoint)) {
			free(key);
			return seterr(err, "the endpoint must be an http:// or https:// URL");
		}
		if (memchr(endpoint, '@', n) || memchr(endpoint, '?', n)) {
			free(key);
			return seterr(err, "the endpoint must not hold credentials or a query");
		}
		u->scheme = strncmp(endpoint, "https://", 8) == 0 ? NF_RS_HTTPS : NF_RS_HTTP;
		rc = asprintf(&full, "%.*s/%s/%s", (int)n, endpoint, u->bucket, key);
	} else {
		u->scheme = NF_RS_HTTPS;
		if (strchr(u->bucket, '.'))
			rc = asprintf(&full, "https://s3.%s.amazonaws.com/%s/%s", region, u->bucket,
				      key);
		else
			rc = asprintf(&full, "https://%s.s3.%s.amazonaws.com/%s", u->bucket, region,
				      key);
	}
	free(key);
	if (rc < 0)
		return -ENOMEM;
	rc = set_prefix(u, full, err);
	free(full);
	return rc;
}

int nf_rurl_parse(struct nf_rurl *u, const char *url, const char *endpoint, const char *region,
		  char **err)
{
	int rc;

	memset(u, 0, sizeof *u);
	*err = NULL;
	if (strncmp(url, "s3://", 5) == 0) {
		/* u->scheme is then the scheme of the requests (the endpoint's) */
		rc = parse_s3(u, url, endpoint, region, err);
	} else if (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0) {
		rc = parse_http(u, url, err);
	} else {
		rc = seterr(err, "not an http://, https:// or s3:// URL");
	}
	if (rc == 0) {
		u->origin = dup_origin(u->entry);
		if (u->origin == NULL)
			rc = -ENOMEM;
	}
	if (rc < 0)
		nf_rurl_free(u);
	return rc;
}

bool nf_remote_is_url(const char *s)
{
	return strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0 ||
	       strncmp(s, "s3://", 5) == 0;
}

/* Userinfo (everything between "://" and the last '@' before the path)
 * becomes "***@"; a query string becomes "?***".  Works on any text that
 * looks like a URL, also a Location header the server sent; slashes
 * right after "://" are skipped, as libcurl skips them. */
char *nf_remote_redact(const char *url)
{
	const char *s = strstr(url, "://");
	const char *auth = s ? s + 3 + strspn(s + 3, "/") : url;
	size_t alen = strcspn(auth, "/?#");
	const char *at = NULL;
	char *out;
	size_t cap;

	for (size_t i = 0; i < alen; i++)
		if (auth[i] == '@')
			at = auth + i;
	if (__builtin_add_overflow(strlen(url), 8, &cap))
		return NULL;
	out = malloc(cap);
	if (out == NULL)
		return NULL;
	size_t o = 0;
	memcpy(out, url, (size_t)(auth - url));
	o = (size_t)(auth - url);
	const char *rest = auth;
	if (at) {
		memcpy(out + o, "***@", 4);
		o += 4;
		rest = at + 1;
	}
	size_t plen = strcspn(rest, "?#");
	memcpy(out + o, rest, plen);
	o += plen;
	if (rest[plen] == '?') {
		memcpy(out + o, "?***", 4);
		o += 4;
	}
	out[o] = '\0';
	return out;
}

char *nf_remote_redact_arg(const char *s)
{
	if (!strstr(s, "://"))
		return strdup(s);
	if (nf_remote_is_url(s))
		return nf_remote_redact(s);
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	bool ok = m != NULL;
	for (const char *item = s; ok && item;) {
		const char *comma = strchr(item, ',');
		char *it = strndup(item, comma ? (size_t)(comma - item) : strlen(item));
		char *eq = it ? strchr(it, '=') : NULL, *val = eq ? eq + 1 : it;
		char *shown = it && strstr(val, "://") ? nf_remote_redact(val) : NULL;
		ok = it && (shown || !strstr(val, "://")) &&
		     fprintf(m, "%s%.*s%s", item == s ? "" : ",", (int)(val - it), it,
			     shown ? shown : val) >= 0;
		free(shown);
		free(it);
		item = comma ? comma + 1 : NULL;
	}
	if (m && fclose(m) != 0)
		ok = false;
	if (!ok) {
		free(out);
		return NULL;
	}
	return out;
}
