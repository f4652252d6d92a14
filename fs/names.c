/* fs/names.c — the escaping rule of names.h. */
#include "fs/names.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NF_CUT_BYTES 230

static uint64_t fnv1a64(const char *s, size_t len)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* Bytes one input byte takes once escaped. */
static size_t escaped_width(char c)
{
	return (c == '%' || c == '/') ? 3 : 1;
}

/* Long names: keep whole escapes and whole UTF-8 sequences up to
 * NF_CUT_BYTES, then "%~" and the hash of the original. */
static size_t escape_long(const char *in, size_t len, char *out)
{
	size_t o = 0, i = 0;

	while (i < len) {
		size_t seq = 1, w = 0;

		/* a UTF-8 lead byte tells the sequence length */
		unsigned char c = (unsigned char)in[i];
		if (c >= 0xF0)
			seq = 4;
		else if (c >= 0xE0)
			seq = 3;
		else if (c >= 0xC0)
			seq = 2;
		if (i + seq > len)
			seq = len - i;
		for (size_t k = 0; k < seq; k++)
			w += escaped_width(in[i + k]);
		if (o + w > NF_CUT_BYTES)
			break;
		for (size_t k = 0; k < seq; k++) {
			char ch = in[i + k];
			if (ch == '%' || ch == '/') {
				memcpy(out + o, ch == '%' ? "%25" : "%2F", 3);
				o += 3;
			} else {
				out[o++] = ch;
			}
		}
		i += seq;
	}
	o += (size_t)snprintf(out + o, NF_NAME_MAX + 1 - o, "%%~%016llx",
			      (unsigned long long)fnv1a64(in, len));
	return o;
}

size_t nf_escape_component(const char *in, size_t len, char out[NF_NAME_MAX + 1])
{
	size_t need = 0, o = 0;

	if (len == 0) {
		strcpy(out, "%");
		return 1;
	}
	if (len == 1 && in[0] == '.') {
		strcpy(out, "%2E");
		return 3;
	}
	if (len == 2 && in[0] == '.' && in[1] == '.') {
		strcpy(out, "%2E%2E");
		return 6;
	}
	for (size_t i = 0; i < len; i++)
		need += escaped_width(in[i]);
	if (need > NF_NAME_MAX)
		return escape_long(in, len, out);
	for (size_t i = 0; i < len; i++) {
		if (in[i] == '%' || in[i] == '/') {
			memcpy(out + o, in[i] == '%' ? "%25" : "%2F", 3);
			o += 3;
		} else {
			out[o++] = in[i];
		}
	}
	out[o] = '\0';
	return o;
}

bool nf_escape_is_cut(const char *esc, size_t len)
{
	return memmem(esc, len, "%~", 2) != NULL;
}
