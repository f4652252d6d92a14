/* reader/directory_uses.c — Uses (seed §8).
 *
 * Each Use names an existing binding (parameter), an input position, an
 * optional activation_policy (exactly A16Only, AllowA8 or AllowA4) and
 * optional auxiliaries (role -> Binding).  (parameter, input) pairs are
 * unique: checked by sorting, so a million uses stay cheap. */
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
	int c = strcmp(a->parameter, b->parameter);
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

void nf_build_uses(struct nf_build *b, json_t *uses)
{
	struct nf_artifact *a = b->a;
	size_t n = json_array_size(uses);
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
	for (size_t i = 0; i < n; i++) {
		json_t *rec = json_array_get(uses, i);
		struct nf_where w = {.table = "uses", .index = i};
		struct nf_rec rc = {.b = b, .w = &w, .what = "a Use (seed §8)", .obj = rec};
		if (!json_is_object(rec)) {
			nf_dir_error(b, &w, "FIELD_TYPE", "seed §8: a Use is an object; it is %s",
				     nf_json_type_name(b, rec));
			continue;
		}
		bool ok = nf_rec_members(&rc, use_fields, NULL);
		const char *param = NULL, *input = NULL, *policy = NULL;
		int rp = nf_rec_id(&rc, "parameter", true, &param);
		int ri = nf_rec_id(&rc, "input", true, &input);
		ok &= rp == 1 && ri == 1;
		int64_t bi = -1;
		if (rp == 1) {
			bi = nf_binding_find(a, param);
			if (bi < 0 && !json_object_get(b->bindings_json, param)) {
				nf_dir_error(b, &w, "USE_PARAMETER_MISSING", "seed §8: parameter names an "
					     "existing root binding; there is no binding \"%s\"", param);
			}
			/* A binding left out for its own error takes its uses along. */
			if (bi < 0)
				ok = false;
		}
		json_t *pv = nf_rec_get(&rc, "activation_policy", false);
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
		json_t *av = nf_rec_get(&rc, "auxiliaries", false);
		if (av && !parse_aux(b, &w, av, u))
			ok = false;
		if (rp == 1 && ri == 1)
			keys[nkeys++] = (struct use_key){param, input, (uint32_t)i,
							 ok ? kept : UINT32_MAX};
		if (!ok)
			continue;
		u->parameter = a->bindings[bi].name;
		u->binding = (uint32_t)bi;
		u->input = nf_arena_strdup(b->ar, input);
		u->activation_policy = nf_arena_strdup(b->ar, policy);
		kept++;
	}

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
