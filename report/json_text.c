/* report/json_text.c — JSON strings of arbitrary bytes.
 *
 * File names, argv and quoted input are bytes, not necessarily UTF-8, and
 * jansson refuses a string that is not valid UTF-8.  Keep every well-formed
 * sequence (RFC 3629 §4: no overlongs, no surrogates, nothing above
 * U+10FFFF) and turn each byte that does not start one into U+FFFD, so a
 * report always stays a valid JSON document and still shows what it can. */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

/* The length of the well-formed UTF-8 sequence at p[0..n), or 0. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;        /* overlong */
		else if (c == 0xed)
			hi = 0x9f;        /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;        /* overlong */
		else if (c == 0xf4)
			hi = 0x8f;        /* above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

json_t *nf_json_text(const char *s)
{
	if (!s)
		return json_null();
	size_t n = strlen(s);
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		size_t l = utf8_seq(p + i, n - i);
		if (!l)
			break;
		i += l;
	}
	if (i == n)
		return json_stringn(s, n);
	size_t cap;
	if (__builtin_mul_overflow(n, (size_t)3, &cap) || __builtin_add_overflow(cap, 1, &cap))
		return NULL;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	memcpy(out, s, i);
	size_t k = i;
	while (i < n) {
		size_t l = utf8_seq(p + i, n - i);
		if (l) {
			memcpy(out + k, p + i, l);
			k += l;
			i += l;
		} else {
			memcpy(out + k, "\xef\xbf\xbd", 3);
			k += 3;
			i++;
		}
	}
	json_t *v = json_stringn(out, k);
	free(out);
	return v;
}
