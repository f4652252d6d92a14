/* report/json_text.c — JSON strings of arbitrary bytes.
 *
 * File names, argv and quoted input are bytes, not necessarily UTF-8, and
 * jansson refuses a string that is not valid UTF-8.  Keep every well-formed
 * sequence (RFC 3629 §4: no overlongs, no surrogates, nothing above
 * U+10FFFF) and turn each byte that does not start one into U+FFFD, so a
 * report always stays a valid JSON document and still shows what it can
 * (the rule itself: nf_utf8_repair, report/utf8.c). */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

json_t *nf_json_text(const char *s)
{
	if (!s)
		return json_null();
	size_t n = strlen(s), k = 0;
	/* jansson checks UTF-8 itself: repair only what it refuses */
	json_t *v = json_stringn(s, n);
	if (v)
		return v;
	char *out = nf_utf8_repair(s, n, &k);
	if (!out)
		return NULL;
	v = json_stringn(out, k);
	free(out);
	return v;
}
