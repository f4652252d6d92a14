/* tests/remote/test_remote.c — unit tests of the remote engine's pure
 * parts: the URL model (entry URLs, sibling parts and their encoding,
 * redaction), options, credentials, backoff bounds, the S3 error code,
 * response header lines (headers.c),
 * the block cache's format (a corrupted or foreign block is a miss), and
 * the chunks' copy (copy.c). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote/internal.h"

static char *sibling(const char *entry, const char *name, const char **why)
{
	struct nf_rurl u;
	char *err = NULL, *s;
	ck_assert_int_eq(nf_rurl_parse(&u, entry, NULL, "us-east-1", &err), 0);
	s = nf_rurl_sibling(&u, name, why);
	nf_rurl_free(&u);
	return s;
}

START_TEST(http_entry_and_siblings)
{
	struct nf_rurl u;
	char *err = NULL, *s;
	const char *why;

	ck_assert_int_eq(nf_rurl_parse(&u, "http://127.0.0.1:8080/sets/a/m.ninfer", NULL, "x", &err), 0);
	ck_assert_str_eq(u.prefix, "http://127.0.0.1:8080/sets/a/");
	ck_assert_str_eq(u.entry, "http://127.0.0.1:8080/sets/a/m.ninfer");
	ck_assert_str_eq(u.origin, "http://127.0.0.1:8080");
	ck_assert(!u.s3 && u.scheme == NF_RS_HTTP && u.user == NULL);
	s = nf_rurl_sibling(&u, "m.ninfer.part-0001", &why);
	ck_assert_str_eq(s, "http://127.0.0.1:8080/sets/a/m.ninfer.part-0001");
	free(s);
	nf_rurl_free(&u);
	/* IPv6 literals, an encoded directory, dot segments resolved first */
	ck_assert_int_eq(nf_rurl_parse(&u, "http://[::1]:8080/a%20b/./c/../e", NULL, "x", &err), 0);
	ck_assert_str_eq(u.prefix, "http://[::1]:8080/a%20b/");
	ck_assert_str_eq(u.origin, "http://[::1]:8080");
	nf_rurl_free(&u);

	/* every byte outside unreserved is encoded: nothing can climb out */
	s = sibling("https://h/d/e.ninfer", "..%2Fsecret", &why);
	ck_assert_str_eq(s, "https://h/d/..%252Fsecret");
	free(s);
	s = sibling("https://h/d/e.ninfer", "a b?c#d\\e%", &why);
	ck_assert_str_eq(s, "https://h/d/a%20b%3Fc%23d%5Ce%25");
	free(s);
	s = sibling("https://h/d/e.ninfer", "...", &why);
	ck_assert_str_eq(s, "https://h/d/...");
	free(s);
	s = sibling("https://h/d/e.ninfer", "\xc3\xa9", &why);
	ck_assert_str_eq(s, "https://h/d/%C3%A9");
	free(s);
	ck_assert_ptr_null(sibling("https://h/d/e.ninfer", "../x", &why));
	ck_assert_str_eq(why, "contains '/'");
	ck_assert_ptr_null(sibling("https://h/d/e.ninfer", "..", &why));
	ck_assert_str_eq(why, "is a dot entry");
	ck_assert_ptr_null(sibling("https://h/d/e.ninfer", ".", &why));
	ck_assert_ptr_null(sibling("https://h/d/e.ninfer", "", &why));
	ck_assert_str_eq(why, "is empty");
}
END_TEST

START_TEST(is_child)
{
	ck_assert(nf_rurl_is_child("http://h/d/", "http://h/d/a%2Fb"));
	ck_assert(!nf_rurl_is_child("http://h/d/", "http://h/d/a/b"));
	ck_assert(!nf_rurl_is_child("http://h/d/", "http://h/d/.."));
	ck_assert(!nf_rurl_is_child("http://h/d/", "http://h/d/%zz"));
	ck_assert(!nf_rurl_is_child("http://h/d/", "http://h/d/a?b"));
	ck_assert(!nf_rurl_is_child("http://h/d/", "http://h/e/a"));
	ck_assert(!nf_rurl_is_child("http://h/d/", "http://h/d/"));
}
END_TEST

START_TEST(http_refusals)
{
	struct nf_rurl u;
	char *err = NULL;
	const char *bad[] = {"http://h/dir/", "http://h/a?x=1", "http://h/a#f", "ftp://h/a",
			     "file:///etc/passwd", "http:///a", "s3://ab/k", "s3://Bucket/k",
			     "s3://bucket/", "s3://bucket",
			     /* libcurl reads the authority after any number of
			      * slashes; the redaction (and a reader) after two:
			      * found by fuzz/fuzz_remote.c, the password shown */
			     "http:///er:pw@ho/x.ninfer", "https:////u:p@h/x.ninfer", "http://"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		ck_assert_msg(nf_rurl_parse(&u, bad[i], NULL, "us-east-1", &err) == -EINVAL, "%s", bad[i]);
		ck_assert_ptr_nonnull(err);
		free(err);
		err = NULL;
	}
	const char *bad_ep[] = {"http:///h", "https:///h:7480", "http://", "http:h"};
	for (size_t i = 0; i < sizeof bad_ep / sizeof *bad_ep; i++) {
		ck_assert_msg(nf_rurl_parse(&u, "s3://bucket/k", bad_ep[i], "us-east-1", &err) == -EINVAL,
			      "%s", bad_ep[i]);
		ck_assert_ptr_nonnull(err);
		free(err);
		err = NULL;
	}
}
END_TEST

START_TEST(userinfo_is_kept_apart)
{
	struct nf_rurl u;
	char *err = NULL;
	ck_assert_int_eq(nf_rurl_parse(&u, "https://al%40ice:s3cr%2Ft@h:9/d/e", NULL, "x", &err), 0);
	ck_assert_str_eq(u.user, "al@ice");
	ck_assert_str_eq(u.password, "s3cr/t");
	ck_assert_ptr_null(strstr(u.entry, "s3cr"));
	ck_assert_str_eq(u.entry, "https://h:9/d/e");
	nf_rurl_free(&u);
}
END_TEST

START_TEST(s3_urls)
{
	struct nf_rurl u;
	char *err = NULL;
	const char *why;
	char *s;

	ck_assert_int_eq(nf_rurl_parse(&u, "s3://my-bucket/sets/a b/m.ninfer", NULL, "eu-west-1", &err), 0);
	ck_assert(u.s3 && u.scheme == NF_RS_HTTPS);
	ck_assert_str_eq(u.entry, "https://my-bucket.s3.eu-west-1.amazonaws.com/sets/a%20b/m.ninfer");
	s = nf_rurl_sibling(&u, "m.ninfer.part-0001", &why);
	ck_assert_str_eq(s, "https://my-bucket.s3.eu-west-1.amazonaws.com/sets/a%20b/m.ninfer.part-0001");
	free(s);
	nf_rurl_free(&u);
	ck_assert_int_eq(nf_rurl_parse(&u, "s3://my.bucket/k", NULL, "us-east-1", &err), 0);
	ck_assert_str_eq(u.entry, "https://s3.us-east-1.amazonaws.com/my.bucket/k");
	nf_rurl_free(&u);
	ck_assert_int_eq(nf_rurl_parse(&u, "s3://bkt/d/k.ninfer", "http://127.0.0.1:7480/", "x", &err), 0);
	ck_assert(u.scheme == NF_RS_HTTP);
	ck_assert_str_eq(u.entry, "http://127.0.0.1:7480/bkt/d/k.ninfer");
	ck_assert_str_eq(u.prefix, "http://127.0.0.1:7480/bkt/d/");
	ck_assert_str_eq(u.origin, "http://127.0.0.1:7480");
	nf_rurl_free(&u);
	ck_assert_int_eq(nf_rurl_parse(&u, "s3://bkt/k", "http://u:p@h/", "x", &err), -EINVAL);
	free(err);
}
END_TEST

START_TEST(redact)
{
	struct { const char *in, *out; } v[] = {
		{"http://h/a/b", "http://h/a/b"},
		{"https://user:pw@h:1/a", "https://***@h:1/a"},
		{"https://u:p@ss@h/a", "https://***@h/a"},
		{"http://h/a?X-Amz-Signature=abc&X-Amz-Credential=AKIA", "http://h/a?***"},
		{"http://h/a#frag", "http://h/a"},
		{"s3://b/k", "s3://b/k"},
		{"/relative?token=1", "/relative?***"},
		{"http://h/p@x", "http://h/p@x"},
		/* libcurl's authority after extra slashes: redacted too */
		{"http:///er:secretpw@h:1/x.ninfer", "http:///***@h:1/x.ninfer"},
		{"https:////u:p@h/a", "https:////***@h/a"},
	};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		char *s = nf_remote_redact(v[i].in);
		ck_assert_str_eq(s, v[i].out);
		free(s);
	}
}
END_TEST

START_TEST(options)
{
	struct nf_remote_opts o;
	char *err = NULL;
	char a[] = "prefetch_mem=64M", b[] = "tries=0", c[] = "redirects=same-host",
	     d[] = "cache_size=2G", e[] = "allow_other", f[] = "retry_ms=1500", g[] = "max_request=1k";
	nf_remote_opts_init(&o);
	ck_assert_uint_eq(o.max_tries, 5);
	ck_assert_uint_eq(o.retry_total_ms, 30000);
	ck_assert_uint_eq(o.prefetch_mem, 256u << 20);
	ck_assert_int_eq(nf_remote_opts_set(&o, a, &err), 0);
	ck_assert_uint_eq(o.prefetch_mem, 64u << 20);
	ck_assert_int_eq(nf_remote_opts_set(&o, b, &err), -EINVAL);
	ck_assert_str_eq(err, "option tries: bad value \"0\"");
	free(err);
	ck_assert_int_eq(nf_remote_opts_set(&o, c, &err), 0);
	ck_assert_int_eq(o.redirects, NF_REDIRECT_SAME_HOST);
	ck_assert_int_eq(nf_remote_opts_set(&o, d, &err), 0);
	ck_assert_uint_eq(o.cache_size, (uint64_t)2 << 30);
	ck_assert_int_eq(nf_remote_opts_set(&o, e, &err), -ENOENT);
	ck_assert_int_eq(nf_remote_opts_set(&o, f, &err), 0);
	ck_assert_uint_eq(o.retry_total_ms, 1500);
	ck_assert_int_eq(nf_remote_opts_set(&o, g, &err), -EINVAL);
	free(err);
	/* offline: a flag ("offline", "offline=1"; "offline=0" clears it) that
	 * needs a cache */
	char h[] = "offline", i[] = "offline=0", j[] = "cache=/tmp/x";
	ck_assert_int_eq(nf_remote_opts_check(&o, &err), 0);
	ck_assert_int_eq(nf_remote_opts_set(&o, h, &err), 0);
	ck_assert(o.offline);
	ck_assert_int_eq(nf_remote_opts_check(&o, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "offline needs cache=DIR"));
	free(err);
	ck_assert_int_eq(nf_remote_opts_set(&o, j, &err), 0);
	ck_assert_int_eq(nf_remote_opts_check(&o, &err), 0);
	ck_assert_int_eq(nf_remote_opts_set(&o, i, &err), 0);
	ck_assert(!o.offline);
}
END_TEST

START_TEST(backoff_is_bounded)
{
	uint64_t rng = 12345, max[6] = {0};
	for (int i = 0; i < 20000; i++)
		for (unsigned t = 1; t <= 5; t++) {
			uint64_t d = nf_rhttp_backoff(&rng, t, 100, 1000);
			ck_assert_uint_le(d, t == 1 ? 100 : t == 2 ? 200 : t == 3 ? 400 : t == 4 ? 800 : 1000);
			if (d > max[t])
				max[t] = d;
		}
	/* full jitter reaches (close to) its ceiling */
	ck_assert_uint_ge(max[1], 95);
	ck_assert_uint_ge(max[5], 950);
}
END_TEST

START_TEST(s3_error_code)
{
	char out[64];
	const char *b = "<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code>"
			"<Message></Message></Error>";
	ck_assert_str_eq(nf_rhttp_s3code(b, strlen(b), out, sizeof out), "SignatureDoesNotMatch");
	ck_assert_ptr_null(nf_rhttp_s3code("<html>nope</html>", 17, out, sizeof out));
	ck_assert_ptr_null(nf_rhttp_s3code("<Code>a b</Code>", 16, out, sizeof out));
	ck_assert_ptr_null(nf_rhttp_s3code("<Code>unterminated", 18, out, sizeof out));
}
END_TEST

/* One header line through nf_rresp_line(), CRLF added. */
static enum nf_rhline hline(struct nf_rresp *r, const char *text, time_t now)
{
	char buf[2048];
	int n = snprintf(buf, sizeof buf, "%s\r\n", text);
	ck_assert(n > 0 && (size_t)n < sizeof buf);
	return nf_rresp_line(r, buf, (size_t)n, now);
}

START_TEST(response_headers)
{
	struct nf_rresp r;
	char big[400];
	/* Wed, 01 Jan 2025 00:00:00 GMT */
	const time_t now = 1735689600;

	nf_rresp_reset(&r);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(r.clen, UINT64_MAX);
	ck_assert_int_eq(r.retry_after_ms, -1);
	/* status lines */
	ck_assert_int_eq(hline(&r, "HTTP/1.1 206 Partial Content", now), NF_RH_STATUS);
	ck_assert_int_eq(r.status, 206);
	ck_assert_int_eq(hline(&r, "HTTP/2 200 ", now), NF_RH_STATUS);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(hline(&r, "HTTP/1.1 2x6 Odd", now), NF_RH_STATUS);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(hline(&r, "HTTP/1.1", now), NF_RH_STATUS);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(nf_rresp_line(&r, "HTTP/1.1 20", 11, now), NF_RH_STATUS);
	ck_assert_int_eq(r.status, 0);   /* two digits at the end of the line */
	ck_assert_int_eq(hline(&r, "", now), NF_RH_END);
	ck_assert_int_eq(nf_rresp_line(&r, "\n", 1, now), NF_RH_END);

	/* fields: values trimmed, names case-insensitive, bounded */
	ck_assert_int_eq(hline(&r, "ETag:   \"abc\"  ", now), NF_RH_FIELD);
	ck_assert_str_eq(r.etag, "\"abc\"");
	hline(&r, "last-MODIFIED: Wed, 01 Jan 2025 00:00:00 GMT", now);
	ck_assert_str_eq(r.lastmod, "Wed, 01 Jan 2025 00:00:00 GMT");
	memset(big, 'e', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	char line[512];
	snprintf(line, sizeof line, "etag: %s", big);
	hline(&r, line, now);
	ck_assert_uint_eq(strlen(r.etag), sizeof r.etag - 1);
	hline(&r, "Location: http://127.0.0.1:1/x", now);
	ck_assert_str_eq(r.location, "http://127.0.0.1:1/x");
	hline(&r, "no colon here", now);
	hline(&r, "X-ETag: \"other\"", now);
	ck_assert_uint_eq(strlen(r.etag), sizeof r.etag - 1);
	/* a new status line forgets the last response's fields */
	hline(&r, "HTTP/1.1 503 Busy", now);
	ck_assert_str_eq(r.etag, "");
	ck_assert_str_eq(r.location, "");

	/* Content-Range */
	hline(&r, "Content-Range: bytes 0-99/1000", now);
	ck_assert(r.has_cr && r.cr_first == 0 && r.cr_total == 1000);
	nf_rresp_reset(&r);
	hline(&r, "content-range: Bytes 5-9/*", now);
	ck_assert(r.has_cr && r.cr_first == 5 && r.cr_total == UINT64_MAX);
	const char *bad_cr[] = {"bytes 9-5/10", "bytes -5/10", "bytes 5-/10", "bytes 5-9",
				"items 0-1/2", "bytes 18446744073709551616-18446744073709551617/2",
				"bytes +1-2/3", "bytes  1-2/3"};
	for (size_t i = 0; i < sizeof bad_cr / sizeof *bad_cr; i++) {
		nf_rresp_reset(&r);
		snprintf(line, sizeof line, "Content-Range: %s", bad_cr[i]);
		hline(&r, line, now);
		ck_assert_msg(!r.has_cr, "%s", bad_cr[i]);
	}
	nf_rresp_reset(&r);
	hline(&r, "Content-Range: bytes 7-8/18446744073709551616", now);
	ck_assert(r.has_cr && r.cr_first == 7 && r.cr_total == UINT64_MAX); /* total unknown */

	/* Content-Length: digits only */
	hline(&r, "Content-Length:  42 ", now);
	ck_assert_uint_eq(r.clen, 42);
	const char *bad_cl[] = {"42abc", "-1", "+3", "", "99999999999999999999", "0x10"};
	for (size_t i = 0; i < sizeof bad_cl / sizeof *bad_cl; i++) {
		nf_rresp_reset(&r);
		snprintf(line, sizeof line, "Content-Length: %s", bad_cl[i]);
		hline(&r, line, now);
		ck_assert_msg(r.clen == UINT64_MAX, "%s", bad_cl[i]);
	}

	/* Retry-After: seconds or a date, never more than a day */
	const struct { const char *v; long ms; } ra[] = {
		{"0", 0}, {"120", 120000}, {"86400", 86400000}, {"86401", 86400000},
		{"18446744073709551615", 86400000}, {"99999999999999999999999", -1},
		{"Wed, 01 Jan 2025 00:00:30 GMT", 30000},
		{"Tue, 31 Dec 2024 23:59:00 GMT", 0},
		{"Thu, 02 Jan 2025 00:00:01 GMT", 86400000},
		/* curl parses years this far out: seconds x 1000 would overflow */
		{"Wed, 01 Jan 2147483647 00:00:00 GMT", 86400000},
		{"soon", -1}, {"-5", -1},
	};
	for (size_t i = 0; i < sizeof ra / sizeof *ra; i++) {
		nf_rresp_reset(&r);
		snprintf(line, sizeof line, "Retry-After: %s", ra[i].v);
		hline(&r, line, now);
		ck_assert_msg(r.retry_after_ms == ra[i].ms, "%s: %ld, want %ld", ra[i].v,
			      r.retry_after_ms, ra[i].ms);
	}
}
END_TEST

static char tmpl[64];

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void clear_aws_env(void)
{
	const char *v[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
			   "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE",
			   "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++)
		unsetenv(v[i]);
}

START_TEST(credentials)
{
	struct nf_rcreds c;
	char *err = NULL, path[128], cfg[128];

	clear_aws_env();
	snprintf(tmpl, sizeof tmpl, "/tmp/nfr-creds.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	setenv("HOME", tmpl, 1);
	/* nothing anywhere: anonymous, us-east-1 */
	ck_assert_int_eq(nf_rcreds_load(&c, NULL, NULL, &err), 0);
	ck_assert_ptr_null(c.key);
	ck_assert_str_eq(c.region, "us-east-1");
	nf_rcreds_free(&c);
	/* ~/.aws/credentials, profile from AWS_PROFILE, region from ~/.aws/config */
	snprintf(path, sizeof path, "%s/.aws", tmpl);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/.aws/credentials", tmpl);
	write_text(path, "[default]\naws_access_key_id = DKEY\naws_secret_access_key = dsecret\n"
			 "# comment\n[work]\n aws_access_key_id=WKEY \naws_secret_access_key= wsec\n"
			 "aws_session_token = wtok\n[half]\naws_access_key_id = H\n");
	snprintf(cfg, sizeof cfg, "%s/.aws/config", tmpl);
	write_text(cfg, "[default]\nregion = eu-west-1\n[profile work]\nregion = ap-south-1\n");
	ck_assert_int_eq(nf_rcreds_load(&c, NULL, NULL, &err), 0);
	ck_assert_str_eq(c.key, "DKEY");
	ck_assert_str_eq(c.secret, "dsecret");
	ck_assert_ptr_null(c.token);
	ck_assert_str_eq(c.region, "eu-west-1");
	nf_rcreds_free(&c);
	setenv("AWS_PROFILE", "work", 1);
	ck_assert_int_eq(nf_rcreds_load(&c, NULL, NULL, &err), 0);
	ck_assert_str_eq(c.key, "WKEY");
	ck_assert_str_eq(c.secret, "wsec");
	ck_assert_str_eq(c.token, "wtok");
	ck_assert_str_eq(c.region, "ap-south-1");
	nf_rcreds_free(&c);
	/* a profile with half a key pair is an error naming the file */
	ck_assert_int_eq(nf_rcreds_load(&c, "half", NULL, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "credentials: profile half lacks"));
	free(err);
	err = NULL;
	/* the environment wins over the file; AWS_REGION over AWS_DEFAULT_REGION */
	setenv("AWS_ACCESS_KEY_ID", "EKEY", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "esec", 1);
	setenv("AWS_DEFAULT_REGION", "us-west-2", 1);
	ck_assert_int_eq(nf_rcreds_load(&c, NULL, NULL, &err), 0);
	ck_assert_str_eq(c.key, "EKEY");
	ck_assert_str_eq(c.region, "us-west-2");
	nf_rcreds_free(&c);
	setenv("AWS_REGION", "ca-central-1", 1);
	ck_assert_int_eq(nf_rcreds_load(&c, NULL, NULL, &err), 0);
	ck_assert_str_eq(c.region, "ca-central-1");
	nf_rcreds_free(&c);
	ck_assert_int_eq(nf_rcreds_load(&c, NULL, "bad/region", &err), -EINVAL);
	free(err);
	/* AWS_SHARED_CREDENTIALS_FILE */
	unsetenv("AWS_ACCESS_KEY_ID");
	snprintf(path, sizeof path, "%s/other", tmpl);
	write_text(path, "[work]\naws_access_key_id = OKEY\naws_secret_access_key = osec\n");
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	ck_assert_int_eq(nf_rcreds_load(&c, NULL, NULL, &err), 0);
	ck_assert_str_eq(c.key, "OKEY");
	nf_rcreds_free(&c);
	clear_aws_env();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpl);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The secret never reaches a message: a set opened with credentials and a
 * password in the URL shows neither anywhere. */
START_TEST(no_secret_in_stats)
{
	struct nf_remote_opts o;
	struct nf_remote *r;
	struct nf_remote_file_stats st;
	char *err = NULL;
	nf_remote_opts_init(&o);
	ck_assert_int_eq(nf_remote_open("http://bob:HUNTER2@127.0.0.1:1/d/e.ninfer", &o, &r, &err), 0);
	ck_assert_int_eq(nf_remote_file_stats(r, 0, &st), 0);
	ck_assert_str_eq(st.url, "http://127.0.0.1:1/d/e.ninfer");
	nf_remote_close(r);
	ck_assert_int_eq(nf_remote_open("http://bob:HUNTER2@127.0.0.1:1/d/?q", &o, &r, &err), -EINVAL);
	ck_assert_ptr_null(strstr(err, "HUNTER2"));
	ck_assert_ptr_nonnull(strstr(err, "http://***@127.0.0.1:1/d/?***"));
	free(err);
}
END_TEST

START_TEST(cache_blocks)
{
	struct nf_rcache *c;
	char dir[] = "/tmp/nfr-cache.XXXXXX", *err = NULL, buf[5000], got[5000];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (char)(i * 7 + 3);
	ck_assert_int_eq(nf_rcache_open(&c, dir, 1 << 20, "set-A", false, &err), 0);
	ck_assert_int_eq(nf_rcache_get(c, 1, 0, "\"e1\"", got, sizeof got), -ENOENT);
	ck_assert_int_eq(nf_rcache_put(c, 1, 0, "\"e1\"", buf, sizeof buf), 0);
	memset(got, 0, sizeof got);
	ck_assert_int_eq(nf_rcache_get(c, 1, 0, "\"e1\"", got, sizeof got), 0);
	ck_assert_mem_eq(got, buf, sizeof buf);
	/* another validator, block, file or length: a miss */
	ck_assert_int_eq(nf_rcache_get(c, 1, 0, "\"e2\"", got, sizeof got), -ENOENT);
	ck_assert_int_eq(nf_rcache_get(c, 1, 1, "\"e1\"", got, sizeof got), -ENOENT);
	ck_assert_int_eq(nf_rcache_get(c, 2, 0, "\"e1\"", got, sizeof got), -ENOENT);
	ck_assert_int_eq(nf_rcache_get(c, 1, 0, "\"e1\"", got, 4999), -ENOENT);
	/* that length check removed the block: it is gone now */
	ck_assert_int_eq(nf_rcache_get(c, 1, 0, "\"e1\"", got, sizeof got), -ENOENT);
	ck_assert_int_eq(nf_rcache_put(c, 1, 0, "\"e1\"", buf, sizeof buf), 0);
	nf_rcache_close(c);
	/* another set's cache in the same directory does not see it, until it
	 * is renamed to the first set's key */
	ck_assert_int_eq(nf_rcache_open(&c, dir, 1 << 20, "set-B", false, &err), 0);
	ck_assert_int_eq(nf_rcache_get(c, 1, 0, "\"e1\"", got, sizeof got), -ENOENT);
	ck_assert_int_eq(nf_rcache_set_key(c, "set-A"), 0);
	ck_assert_int_eq(nf_rcache_get(c, 1, 0, "\"e1\"", got, sizeof got), 0);
	nf_rcache_close(c);
	/* flip one data byte of the block file: detected, removed, a miss */
	char cmd[512];
	snprintf(cmd, sizeof cmd,
		 "f=$(ls %s/b-*.blk) && printf '\\xff' | dd of=$f bs=1 seek=4000 conv=notrunc status=none",
		 dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(nf_rcache_open(&c, dir, 1 << 20, "set-A", false, &err), 0);
	ck_assert_int_eq(nf_rcache_get(c, 1, 0, "\"e1\"", got, sizeof got), -ENOENT);
	snprintf(cmd, sizeof cmd, "test -z \"$(ls %s/b-*.blk 2>/dev/null)\"", dir);
	ck_assert_int_eq(system(cmd), 0);
	/* the size limit: 300 blocks of 5000 bytes in a 1 MiB cache stay under it */
	for (uint64_t b = 0; b < 300; b++)
		ck_assert_int_eq(nf_rcache_put(c, 1, b, "\"e1\"", buf, sizeof buf), 0);
	snprintf(cmd, sizeof cmd, "test $(cat %s/b-*.blk | wc -c) -le 1048576", dir);
	ck_assert_int_eq(system(cmd), 0);
	/* the newest survive, the oldest went */
	ck_assert_int_eq(nf_rcache_get(c, 1, 299, "\"e1\"", got, sizeof got), 0);
	ck_assert_int_eq(nf_rcache_get(c, 1, 0, "\"e1\"", got, sizeof got), -ENOENT);
	nf_rcache_close(c);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* a file's record (size and validator, for -o offline): round trip, per
 * set and file, refused values, a corrupt one removed */
START_TEST(cache_file_records)
{
	struct nf_rcache *c;
	char dir[] = "/tmp/nfr-rec.XXXXXX", *err = NULL, v[128], cmd[512], kind = 0;
	char longv[200];
	uint64_t size = 0;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(nf_rcache_open(&c, dir, 1 << 20, "set-A", false, &err), 0);
	ck_assert_int_eq(nf_rcache_get_file(c, 0, &size, &kind, v), -ENOENT);
	ck_assert_int_eq(nf_rcache_put_file(c, 0, 5000000, 'E', "\"5f-4c4b40\""), 0);
	ck_assert_int_eq(nf_rcache_put_file(c, 3, 12, 'L', "Tue, 01 Dec 2026 10:00:00 GMT"), 0);
	ck_assert_int_eq(nf_rcache_get_file(c, 0, &size, &kind, v), 0);
	ck_assert_uint_eq(size, 5000000);
	ck_assert_int_eq(kind, 'E');
	ck_assert_str_eq(v, "\"5f-4c4b40\"");
	ck_assert_int_eq(nf_rcache_get_file(c, 3, &size, &kind, v), 0);
	ck_assert_uint_eq(size, 12);
	ck_assert_int_eq(kind, 'L');
	ck_assert_str_eq(v, "Tue, 01 Dec 2026 10:00:00 GMT");
	ck_assert_int_eq(nf_rcache_get_file(c, 1, &size, &kind, v), -ENOENT);
	/* a record is no block of the file, and the other way round */
	ck_assert_int_eq(nf_rcache_get(c, 0, 0, "", v, 10), -ENOENT);
	/* refused: another kind, an empty or too long validator */
	memset(longv, 'x', sizeof longv - 1);
	longv[sizeof longv - 1] = 0;
	ck_assert_int_eq(nf_rcache_put_file(c, 1, 1, 'X', "\"a\""), -EINVAL);
	ck_assert_int_eq(nf_rcache_put_file(c, 1, 1, 'E', ""), -EINVAL);
	ck_assert_int_eq(nf_rcache_put_file(c, 1, 1, 'E', longv), -EINVAL);
	/* a newer record replaces the older */
	ck_assert_int_eq(nf_rcache_put_file(c, 0, 6000000, 'E', "\"60-5b8d80\""), 0);
	ck_assert_int_eq(nf_rcache_get_file(c, 0, &size, &kind, v), 0);
	ck_assert_uint_eq(size, 6000000);
	ck_assert_str_eq(v, "\"60-5b8d80\"");
	/* records are f-*.rec beside the b-*.blk blocks */
	snprintf(cmd, sizeof cmd, "test $(ls %s/f-*.rec | wc -l) = 2 && test -z \"$(ls %s/b-* 2>/dev/null)\"",
		 dir, dir);
	ck_assert_int_eq(system(cmd), 0);
	nf_rcache_close(c);
	/* another set: none; then every record file's last byte flipped: the
	 * digest catches it, the record is removed */
	ck_assert_int_eq(nf_rcache_open(&c, dir, 1 << 20, "set-B", false, &err), 0);
	ck_assert_int_eq(nf_rcache_get_file(c, 0, &size, &kind, v), -ENOENT);
	ck_assert_int_eq(nf_rcache_set_key(c, "set-A"), 0);
	snprintf(cmd, sizeof cmd,
		 "for f in %s/f-*.rec; do printf '\\x01' | dd of=$f bs=1 seek=$(($(stat -c %%s $f) - 1)) "
		 "conv=notrunc status=none; done", dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(nf_rcache_get_file(c, 0, &size, &kind, v), -ENOENT);
	ck_assert_int_eq(nf_rcache_get_file(c, 3, &size, &kind, v), -ENOENT);
	snprintf(cmd, sizeof cmd, "test -z \"$(ls %s/f-* 2>/dev/null)\"", dir);
	ck_assert_int_eq(system(cmd), 0);
	nf_rcache_close(c);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* nf_rcopy_cold (copy.c) is memcpy: every length around its threshold
 * and its 64-byte loop, every alignment of either side, a whole chunk;
 * the bytes before and after the destination are untouched */
START_TEST(cold_copy)
{
	static const size_t lens[] = {0, 1, 15, 16, 63, 64, 4095, 4096, 4097, 4096 + 63,
				      4096 + 64, 131072, 131072 + 17, (1u << 20) + 5};
	size_t max = (1u << 20) + 5 + 64;
	unsigned char *src = malloc(max), *dst = malloc(max + 64);
	ck_assert_ptr_nonnull(src);
	ck_assert_ptr_nonnull(dst);
	for (size_t i = 0; i < max; i++)
		src[i] = (unsigned char)(i * 131 + (i >> 8) * 7 + 1);
	for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
		for (size_t d = 0; d < 17; d++) {
			for (size_t so = 0; so < 4; so++) {
				size_t n = lens[l];
				memset(dst, 0xA5, n + d + 32);
				nf_rcopy_cold(dst + d, src + so, n);
				for (size_t i = 0; i < d; i++)
					ck_assert_uint_eq(dst[i], 0xA5);
				ck_assert_int_eq(memcmp(dst + d, src + so, n), 0);
				for (size_t i = 0; i < 16; i++)
					ck_assert_uint_eq(dst[d + n + i], 0xA5);
			}
		}
	}
	free(src);
	free(dst);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("remote");
	TCase *t = tcase_create("pure");
	tcase_add_test(t, http_entry_and_siblings);
	tcase_add_test(t, is_child);
	tcase_add_test(t, http_refusals);
	tcase_add_test(t, userinfo_is_kept_apart);
	tcase_add_test(t, s3_urls);
	tcase_add_test(t, redact);
	tcase_add_test(t, options);
	tcase_add_test(t, backoff_is_bounded);
	tcase_add_test(t, s3_error_code);
	tcase_add_test(t, response_headers);
	tcase_add_test(t, credentials);
	tcase_add_test(t, no_secret_in_stats);
	tcase_add_test(t, cache_blocks);
	tcase_add_test(t, cache_file_records);
	tcase_add_test(t, cold_copy);
	suite_add_tcase(s, t);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
