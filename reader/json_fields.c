/* reader/json_fields.c — typed access to directory records, with findings.
 *
 * Seed §1: generic records have closed field sets, integers are exact (U64
 * or PositiveU64), IDs are non-empty UTF-8 without U+0000.  Every accessor
 * here reports what it saw and which rule it breaks, so the directory code
 * reads as a list of fields. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

char *nf_where_format(const struct nf_where *w)
{
	char *s = NULL;
	const char *tail = w->tail ? w->tail : "";
	int rc;
	if (strcmp(w->table, "objects") == 0 || strcmp(w->table, "files") == 0) {
		if (w->name)
			rc = asprintf(&s, "%s[%" PRIu64 "] %s%s", w->table, w->index, w->name, tail);
		else
			rc = asprintf(&s, "%s[%" PRIu64 "]%s", w->table, w->index, tail);
	} else if (strcmp(w->table, "uses") == 0) {
		rc = asprintf(&s, "uses[%" PRIu64 "]%s", w->index, tail);
	} else if (w->name) {
		rc = asprintf(&s, "%s[\"%s\"]%s", w->table, w->name, tail);
	} else {
		rc = asprintf(&s, "%s%s", w->table, tail);
	}
	return rc < 0 ? NULL : s;
}

void nf_finding_at(struct nf_build *b, enum nf_severity sev, enum nf_scope scope,
		   const struct nf_where *w, const char *code, const char *fmt, ...)
{
	char *ev = NULL;
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&ev, fmt, ap);
	va_end(ap);
	char *where = nf_where_format(w);
	if (rc < 0 || !where) {
		b->r->oom = true;
	} else {
		nf_report_add(b->r, sev, scope, code, where, "%s", ev);
	}
	if (rc >= 0)
		free(ev);
	free(where);
	if (sev == NF_SEV_ERROR && scope == NF_SCOPE_DIRECTORY)
		b->dir_error = true;
}

void nf_dir_error(struct nf_build *b, const struct nf_where *w, const char *code,
		  const char *fmt, ...)
{
	char *ev = NULL;
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&ev, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		b->r->oom = true;
		b->dir_error = true;
		return;
	}
	nf_finding_at(b, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, w, code, "%s", ev);
	free(ev);
}

const char *nf_json_type_name(const struct nf_build *b, const json_t *v)
{
	if (!v)
		return "nothing";
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL:
		return nf_bigint_of(&b->bigints, v) ? "an integer beyond 64 bits" : "a real number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

bool nf_rec_members(const struct nf_rec *rc, const char *const *allowed, const char *what)
{
	bool ok = true;
	const char *key;
	json_t *v;
	json_object_foreach(rc->obj, key, v) {
		bool known = false;
		for (const char *const *k = allowed; *k; k++)
			if (strcmp(*k, key) == 0) {
				known = true;
				break;
			}
		if (!known) {
			nf_dir_error(rc->b, rc->w, "FIELD_UNKNOWN",
				     "seed §1: generic records have closed field sets; \"%s\" is not a "
				     "member of %s", key, what ? what : rc->what);
			ok = false;
		}
	}
	return ok;
}

json_t *nf_rec_get(const struct nf_rec *rc, const char *key, bool required)
{
	json_t *v = json_object_get(rc->obj, key);
	if (!v && required)
		nf_dir_error(rc->b, rc->w, "FIELD_MISSING", "required member \"%s\" of %s is missing",
			     key, rc->what);
	return v;
}

/* Is the decimal literal (sign stripped) at most U64 max? */
static bool literal_fits_u64(const char *lit)
{
	static const char max[] = "18446744073709551615";
	size_t n = strlen(lit);
	return n < sizeof max - 1 || (n == sizeof max - 1 && strcmp(lit, max) <= 0);
}

bool nf_val_u64(const struct nf_rec *rc, const char *field, const json_t *v, bool positive,
		uint64_t *out)
{
	const char *rule = positive ? "PositiveU64" : "U64";
	const struct nf_bigint *big = json_is_real(v) ? nf_bigint_of(&rc->b->bigints, v) : NULL;
	if (big) {
		if (big->literal[0] == '-')
			nf_dir_error(rc->b, rc->w, "INT_NEGATIVE",
				     "seed §1: %s of %s is a %s; it is %s", field, rc->what, rule,
				     big->literal);
		else if (literal_fits_u64(big->literal))
			nf_dir_error(rc->b, rc->w, "INT_OUT_OF_RANGE",
				     "%s of %s is %s: a U64, but above 9223372036854775807, the "
				     "largest size or offset a file can have, so no artifact can use it",
				     field, rc->what, big->literal);
		else
			nf_dir_error(rc->b, rc->w, "INT_OUT_OF_RANGE",
				     "seed §1: %s of %s is a %s (at most 18446744073709551615); it is %s",
				     field, rc->what, rule, big->literal);
		return false;
	}
	if (!json_is_integer(v)) {
		if (json_is_real(v))
			nf_dir_error(rc->b, rc->w, "FIELD_TYPE",
				     "seed §1: %s of %s must be a JSON integer (%s); it is the real %.17g",
				     field, rc->what, rule, json_real_value(v));
		else
			nf_dir_error(rc->b, rc->w, "FIELD_TYPE",
				     "seed §1: %s of %s must be a JSON integer (%s); it is %s", field,
				     rc->what, rule, nf_json_type_name(rc->b, v));
		return false;
	}
	json_int_t i = json_integer_value(v);
	if (i < 0) {
		nf_dir_error(rc->b, rc->w, "INT_NEGATIVE", "seed §1: %s of %s is a %s; it is %lld",
			     field, rc->what, rule, (long long)i);
		return false;
	}
	if (i == 0 && positive) {
		nf_dir_error(rc->b, rc->w, "INT_ZERO", "seed §1: %s of %s is a PositiveU64; it is 0",
			     field, rc->what);
		return false;
	}
	*out = (uint64_t)i;
	return true;
}

int nf_rec_u64(const struct nf_rec *rc, const char *key, bool required, bool positive,
	       uint64_t *out)
{
	json_t *v = nf_rec_get(rc, key, required);
	if (!v)
		return required ? -1 : 0;
	return nf_val_u64(rc, key, v, positive, out) ? 1 : -1;
}

bool nf_val_id(const struct nf_rec *rc, const char *field, const json_t *v, const char **out)
{
	if (!json_is_string(v)) {
		nf_dir_error(rc->b, rc->w, "FIELD_TYPE", "seed §1: %s of %s must be an ID string; it is %s",
			     field, rc->what, nf_json_type_name(rc->b, v));
		return false;
	}
	/* The parser refused U+0000 (no JSON_ALLOW_NUL) and invalid UTF-8. */
	if (json_string_length(v) == 0) {
		nf_dir_error(rc->b, rc->w, "ID_EMPTY", "seed §1: %s of %s is an ID, a non-empty string; "
			     "it is \"\"", field, rc->what);
		return false;
	}
	*out = json_string_value(v);
	return true;
}

int nf_rec_id(const struct nf_rec *rc, const char *key, bool required, const char **out)
{
	json_t *v = nf_rec_get(rc, key, required);
	if (!v)
		return required ? -1 : 0;
	return nf_val_id(rc, key, v, out) ? 1 : -1;
}

const char *nf_intern(struct nf_build *b, const char *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < b->ninterned; i++)
		if (strcmp(b->interned[i], s) == 0)
			return b->interned[i];
	char *c = nf_arena_strdup(b->ar, s);
	if (c && b->ninterned < sizeof b->interned / sizeof *b->interned)
		b->interned[b->ninterned++] = c;
	return c;
}

char *nf_pretty(struct nf_build *b, const json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY);
	if (!s) {
		b->ar->failed = true;
		return NULL;
	}
	size_t n = strlen(s);
	char *out = nf_arena_calloc(b->ar, n + 2, 1);
	if (out) {
		memcpy(out, s, n);
		out[n] = '\n';
	}
	free(s);
	return out;
}
