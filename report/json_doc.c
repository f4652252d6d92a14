/* report/json_doc.c — the small pieces every JSON document of ours is made
 * of (validation reports, files.json, stats, the calbin documents): U64
 * values, members that may be missing, and the document as text. */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

json_t *nf_json_u64(uint64_t v)
{
	/* jansson's integers are int64: a larger U64 (only a broken input has
	 * one) is written as a real rather than wrapped to a negative value */
	return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

int nf_json_put(json_t *obj, const char *key, json_t *v)
{
	return json_object_set_new(obj, key, v ? v : json_null());
}

char *nf_json_document(json_t *doc, size_t flags)
{
	if (!doc)
		return NULL;
	char *s = json_dumps(doc, flags | JSON_ENCODE_ANY);
	json_decref(doc);
	if (!s)
		return NULL;
	/* a file read with cat ends with a newline, as text files do */
	size_t n = strlen(s);
	char *out = realloc(s, n + 2);
	if (!out) {
		free(s);
		return NULL;
	}
	out[n] = '\n';
	out[n + 1] = '\0';
	return out;
}
