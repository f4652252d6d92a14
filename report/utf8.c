/* report/utf8.c — bytes made valid UTF-8 for a report.
 *
 * File names and arguments are bytes, not text, but a JSON document holds
 * only UTF-8 (RFC 8259 §8.1).  Every byte that does not start a well-formed
 * sequence (RFC 3629 §4: no overlongs, no UTF-16 surrogates, nothing above
 * U+10FFFF) becomes U+FFFD and the next byte is looked at afresh, so each
 * invalid byte is one U+FFFD and every valid character stays as it was.
 * Generic: knows nothing of artifacts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

/* The length of the well-formed sequence at p[0, n), or 0. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;   /* range of the second byte */

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;   /* a continuation byte, C0/C1 (always overlong), F5..FF */
	if (c == 0xe0)
		lo = 0xa0;  /* overlong below U+0800 */
	else if (c == 0xed)
		hi = 0x9f;  /* U+D800..U+DFFF */
	else if (c == 0xf0)
		lo = 0x90;  /* overlong below U+10000 */
	else if (c == 0xf4)
		hi = 0x8f;  /* above U+10FFFF */
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

char *nf_utf8_repair(const char *s, size_t n, size_t *out_len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t k = 0;
	/* at most 3 output bytes per input byte (U+FFFD is EF BF BD) */
	char *out = n <= (SIZE_MAX - 1) / 3 ? malloc(3 * n + 1) : NULL;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq(p + i, n - i);
		if (len) {
			memcpy(out + k, p + i, len);
			k += len;
			i += len;
		} else {
			memcpy(out + k, "\xef\xbf\xbd", 3);
			k += 3;
			i++;
		}
	}
	out[k] = '\0';
	if (out_len)
		*out_len = k;
	return out;
}
