/* fs/attrs.c — the cut of long string attribute values (attrs.h). */
#include "fs/attrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *nf_attr_string(const char *s, size_t *len)
{
	size_t n = strlen(s), k = NF_XATTR_STRING_KEEP;
	char *out;

	if (n <= NF_XATTR_STRING_MAX) {
		*len = n;
		return strdup(s);
	}
	/* back to the start of a UTF-8 sequence */
	while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
		k--;
	if (asprintf(&out, "%.*s...[cut: %zu bytes]", (int)k, s, n) < 0)
		return NULL;
	*len = strlen(out);
	return out;
}
