/* reader/directory_uses.c — Uses (seed §8).
 *
 * Each Use names an existing binding (parameter), an input position, an
 * optional activation_policy (exactly A16Only, AllowA8 or AllowA4) and
 * optional auxiliaries (role -> Binding).  (parameter, input) pairs are
 * unique: checked by sorting, so a million uses stay cheap. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

static const char *const use_fields[] = {"parameter", "input", "activation_policy",
					 "auxiliaries", NULL};
static const char *const policies[] = {"A16Only", "AllowA8", "AllowA4", NULL};

struct use_key {
	const char *parameter, *input;
	uint32_t index;  /* stored index */
	uint32_t slot;   /* index into the model array */
};

static int cmp_use(const void *x, const void *y)
{
	const struct use_key *a = x, *b = y;
	/* Most parameters are the binding's own name: one pointer. */
	int c = a->parameter == b->parameter ? 0 : strcmp(a->parameter, b->parameter);
	if (!c)
		c = strcmp(a->input, b->input);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

static bool parse_aux(struct nf_build *b, const struct nf_where *w, json_t *v, struct nf_use *u)
{
	struct nf_rec rc = {.b = b, .w = w, .what = "a Use (seed §8)", .obj = v};
	(void)rc;
	if (!json_is_object(v)) {
		nf_dir_error(b, w, "FIELD_TYPE", "seed §8: auxiliaries maps roles to Bindings; it is %s",
			     nf_json_type_name(b, v));
		return false;
	}
	size_t n = json_object_size(v);
	struct nf_binding *aux = nf_arena_calloc(b->ar, n ? n : 1, sizeof *aux);
	if (!aux)
		return false;
	bool ok = true;
	uint32_t k = 0;
	const char *role;
	json_t *bv;
	json_object_foreach(v, role, bv) {
		char tail[1024];
		snprintf(tail, sizeof tail, ".auxiliaries[\"%s\"]", role);
		struct nf_where aw = *w;
		aw.tail = tail;
		if (nf_parse_binding(b, &aw, bv, role, &aux[k]))
			k++;
		else
			ok = false;
	}
	u->naux = k;
	u->aux = aux;
	return ok;
}

/* uses.json, record by record: the same bytes as json_dumps() of the whole
 * array with JSON_INDENT(2) (each element one level deeper), plus "\n". */
static void uses_add(struct nf_build *b, const char *s, size_t n)
{
	if (b->uses_count_only) {
		b->uses_len += n;
		return;
	}
	if (b->uses_len + n + 1 > b->uses_cap) {
		size_t cap = b->uses_cap ? b->uses_cap : 4096;
		while (cap < b->uses_len + n + 1)
			cap *= 2;
		char *p = realloc(b->uses_buf, cap);
		if (!p) {
			b->ar->failed = true;
			return;
		}
		b->uses_buf = p;
		b->uses_cap = cap;
	}
	memcpy(b->uses_buf + b->uses_len, s, n);
	b->uses_len += n;
	b->uses_buf[b->uses_len] = '\0';
}

static void uses_indent(struct nf_build *b, size_t depth)
{
	static const char spaces[] = "\n                                ";
	size_t n = 2 * depth;
	uses_add(b, spaces, 1);
	while (n > 0) {
		size_t k = n < sizeof spaces - 2 ? n : sizeof spaces - 2;
		uses_add(b, spaces + 1, k);
		n -= k;
	}
}

/* The pretty form straight from the record's text, when the text has
 * nothing jansson would write differently: no escape in a string, no real
 * number, no -0 (every literal is then copied as is).  The record was
 * parsed by jansson, so the text is valid JSON.  Returns false (nothing
 * kept) otherwise. */
static bool uses_reformat(struct nf_build *b, const char *t, size_t i, size_t end)
{
	size_t mark = b->uses_len, depth = 1;
	while (i < end) {
		char c = t[i];
		switch (c) {
		case ' ': case '\t': case '\n': case '\r':
			i++;
			continue;
		case '"': {
			const char *q = memchr(t + i + 1, '"', end - i - 1);
			if (!q || memchr(t + i + 1, '\\', (size_t)(q - t) - i - 1))
				goto slow;
			size_t j = (size_t)(q - t) + 1;
			uses_add(b, t + i, j - i);
			i = j;
			continue;
		}
		case '{': case '[': {
			size_t j = i + 1;
			while (j < end && (t[j] == ' ' || t[j] == '\t' || t[j] == '\n' || t[j] == '\r'))
				j++;
			if (j < end && (t[j] == '}' || t[j] == ']')) {
				uses_add(b, c == '{' ? "{}" : "[]", 2);
				i = j + 1;
				continue;
			}
			uses_add(b, &c, 1);
			uses_indent(b, ++depth);
			i++;
			continue;
		}
		case '}': case ']':
			uses_indent(b, --depth);
			uses_add(b, &c, 1);
			i++;
			continue;
		case ',':
			uses_add(b, ",", 1);
			uses_indent(b, depth);
			i++;
			continue;
		case ':':
			uses_add(b, ": ", 2);
			i++;
			continue;
		default: {
			size_t j = i;
			while (j < end && t[j] != ',' && t[j] != '}' && t[j] != ']' && t[j] != ' ' &&
			       t[j] != '\t' && t[j] != '\n' && t[j] != '\r')
				j++;
			if (memchr(t + i, '.', j - i) || memchr(t + i, 'e', j - i) ||
			    memchr(t + i, 'E', j - i) || (j - i == 2 && t[i] == '-' && t[i + 1] == '0'))
				goto slow;
			uses_add(b, t + i, j - i);
			i = j;
		}
		}
	}
	return true;
slow:
	b->uses_len = mark;
	if (b->uses_buf)
		b->uses_buf[mark] = '\0';
	return false;
}

static void uses_add_record(struct nf_build *b, const struct nf_recs *src, json_t *rec, size_t i)
{
	if (b->ar->failed)
		return;
	uses_add(b, i == 0 ? "[\n  " : ",\n  ", 4);
	if (src->text && !src->tree && uses_reformat(b, src->text, src->cur_start, src->cur_end))
		return;
	char *s = json_dumps(rec, JSON_INDENT(2) | JSON_ENCODE_ANY);
	if (!s) {
		b->ar->failed = true;
		return;
	}
	/* One level deeper: every line break gains two spaces (strings
	 * are escaped, so a raw newline is always structure). */
	const char *p = s;
	for (const char *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		uses_add(b, p, (size_t)(nl - p) + 1);
		uses_add(b, "  ", 2);
	}
	uses_add(b, p, strlen(p));
	free(s);
}

char *nf_uses_pretty(const char *text, size_t start, size_t end, size_t count)
{
	struct nf_arena ar;
	nf_arena_init(&ar);
	bool failed = false;
	struct nf_build b = {.ar = &ar};
	struct nf_recs rs;
	nf_recs_text(&rs, text, start, end, count, &failed);
	json_t *rec;
	size_t n = 0;
	while (nf_recs_next_use(&rs, &rec) >= 1)
		uses_add_record(&b, &rs, rec, n++);
	nf_recs_done(&rs);
	uses_add(&b, n ? "\n]\n" : "[]\n", 3);
	if (failed || ar.failed) {
		free(b.uses_buf);
		b.uses_buf = NULL;
	}
	nf_arena_free(&ar);
	return b.uses_buf;
}

void nf_build_uses(struct nf_build *b, struct nf_recs *uses)
{
	struct nf_artifact *a = b->a;
	size_t n = uses->count;
	if (n > UINT32_MAX - 1) {
		struct nf_where w = {.table = "root"};
		nf_dir_error(b, &w, "USES_TOO_MANY", "%zu uses; at most %u are supported", n,
			     UINT32_MAX - 1);
		return;
	}
	struct nf_use *out = nf_arena_calloc(b->ar, n ? n : 1, sizeof *out);
	struct use_key *keys = malloc((n ? n : 1) * sizeof *keys);
	bool *drop = calloc(n ? n : 1, sizeof *drop);
	if (!out || !keys || !drop) {
		b->ar->failed = true;
		goto out;
	}
	uint32_t kept = 0;
	size_t nkeys = 0;
	json_t *rec;
	size_t nrec = 0;
	int64_t last_bi = -1;
	/* uses.json now, unless the caller asked for it later and the text
	 * alone can give it (no big integers rewritten): then only its length
	 * is counted, for st_size. */
	b->uses_count_only = (b->flags & NF_OPEN_LAZY_USES_JSON) && !uses->tree;
	for (size_t i = 0; i < n; i++) {
		int r = nf_recs_next_use(uses, &rec);
		if (r == 0)
			break;
		struct nf_where w = {.table = "uses", .index = i};
		uses_add_record(b, uses, rec, i);
		nrec = i + 1;
		struct nf_rec rc = {.b = b, .w = &w, .what = "a Use (seed §8)", .obj = rec};
		bool ok = true;
		const char *param = NULL, *input = NULL, *policy = NULL;
		int rp = 1, ri = 1;
		if (r == 2) {
			/* The plain form: valid, known members, non-empty IDs, a
			 * known policy; only the reference is left to check. */
			param = uses->plain[0];
			input = uses->plain[1];
			policy = uses->plain[2] && uses->plain[2][0] ? uses->plain[2] : NULL;
		} else {
			if (!json_is_object(rec)) {
				nf_dir_error(b, &w, "FIELD_TYPE", "seed §8: a Use is an object; it is %s",
					     nf_json_type_name(b, rec));
				continue;
			}
			ok = nf_rec_members(&rc, use_fields, NULL);
			rp = nf_rec_id(&rc, "parameter", true, &param);
			ri = nf_rec_id(&rc, "input", true, &input);
		}
		ok &= rp == 1 && ri == 1;
		int64_t bi = -1;
		if (rp == 1) {
			/* Uses of one parameter are usually listed together. */
			if (last_bi >= 0 && strcmp(a->bindings[last_bi].name, param) == 0)
				bi = last_bi;
			else
				bi = last_bi = nf_binding_find(a, param);
			if (bi < 0 && !nf_build_binding_named(b, param)) {
				nf_dir_error(b, &w, "USE_PARAMETER_MISSING", "seed §8: parameter names an "
					     "existing root binding; there is no binding \"%s\"", param);
			}
			/* A binding left out for its own error takes its uses along. */
			if (bi < 0)
				ok = false;
		}
		json_t *pv = r == 2 ? NULL : nf_rec_get(&rc, "activation_policy", false);
		if (pv) {
			if (!json_is_string(pv)) {
				nf_dir_error(b, &w, "FIELD_TYPE", "seed §8: activation_policy is one of "
					     "A16Only, AllowA8, AllowA4; it is %s", nf_json_type_name(b, pv));
				ok = false;
			} else {
				policy = json_string_value(pv);
				bool known = false;
				for (const char *const *p = policies; *p; p++)
					known |= strcmp(*p, policy) == 0;
				if (!known) {
					nf_dir_error(b, &w, "USE_POLICY_UNKNOWN", "seed §8: activation_policy "
						     "is exactly A16Only, AllowA8 or AllowA4; it is \"%s\"",
						     policy);
					ok = false;
				}
			}
		}
		struct nf_use *u = &out[kept];
		*u = (struct nf_use){0}; /* the slot may hold a left-out use */
		json_t *av = r == 2 ? NULL : nf_rec_get(&rc, "auxiliaries", false);
		if (av && !parse_aux(b, &w, av, u))
			ok = false;
		/* The record is freed at the next one: keep the key's strings. */
		const char *kparam = bi >= 0 ? a->bindings[bi].name : NULL;
		const char *kinput = NULL;
		if (ok) {
			u->parameter = a->bindings[bi].name;
			u->binding = (uint32_t)bi;
			u->input = kinput = nf_arena_strdup(b->ar, input);
			u->activation_policy = nf_intern(b, policy);
		}
		if (rp == 1 && ri == 1) {
			if (!kparam)
				kparam = nf_arena_strdup(&b->scratch, param);
			if (!kinput)
				kinput = nf_arena_strdup(&b->scratch, input);
			if (!kparam || !kinput) {
				b->ar->failed = true;
				continue;
			}
			keys[nkeys++] = (struct use_key){kparam, kinput, (uint32_t)i,
							 ok ? kept : UINT32_MAX};
		}
		if (ok)
			kept++;
	}
	uses_add(b, nrec ? "\n]\n" : "[]\n", 3);

	/* seed §8: each (parameter, input) combination is unique. */
	qsort(keys, nkeys, sizeof *keys, cmp_use);
	for (size_t k = 1; k < nkeys; k++) {
		if (strcmp(keys[k].parameter, keys[k - 1].parameter) ||
		    strcmp(keys[k].input, keys[k - 1].input))
			continue;
		size_t first = k - 1;
		while (first > 0 && !strcmp(keys[first - 1].parameter, keys[k].parameter) &&
		       !strcmp(keys[first - 1].input, keys[k].input))
			first--;
		struct nf_where w = {.table = "uses", .index = keys[k].index};
		nf_dir_error(b, &w, "USE_DUPLICATE", "seed §8: (parameter, input) is unique; uses[%u] "
			     "has the same (\"%s\", \"%s\")", keys[first].index, keys[k].parameter,
			     keys[k].input);
		if (keys[k].slot != UINT32_MAX)
			drop[keys[k].slot] = true;
	}
	uint32_t m = 0;
	for (uint32_t i = 0; i < kept; i++)
		if (!drop[i])
			out[m++] = out[i];
	a->uses = out;
	a->nuses = m;
out:
	free(keys);
	free(drop);
}
