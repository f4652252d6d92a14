/* reader/directory_components.c — components (seed §4.2, §9).
 *
 * components maps a component ID to {config, target?, resources?,
 * proposal?}.  config is open (the architecture's), target names another
 * component, resources maps roles to resource objects, and proposal
 * ({domain: full|indexed, rows: PositiveU64 only with indexed}) belongs to
 * the text component alone (seed §9.2). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

static const char *const component_fields[] = {"config", "target", "resources", "proposal", NULL};
static const char *const proposal_fields[] = {"domain", "rows", NULL};

static void parse_resources(struct nf_build *b, const struct nf_where *w, json_t *v,
			    struct nf_component *c)
{
	struct nf_rec rc = {.b = b, .w = w, .what = "a component (seed §4.2)", .obj = v};
	if (!json_is_object(v)) {
		nf_dir_error(b, w, "FIELD_TYPE", "seed §4.2: resources maps roles to resource object "
			     "IDs; it is %s", nf_json_type_name(b, v));
		return;
	}
	size_t n = json_object_size(v);
	struct nf_resource_ref *refs = nf_arena_calloc(b->ar, n ? n : 1, sizeof *refs);
	if (!refs)
		return;
	uint32_t k = 0;
	const char *role;
	json_t *idv;
	json_object_foreach(v, role, idv) {
		char tail[1024];
		snprintf(tail, sizeof tail, ".resources[\"%s\"]", role);
		struct nf_where rw = *w;
		rw.tail = tail;
		rc.w = &rw;
		const char *id;
		if (!nf_val_id(&rc, "the resource reference", idv, &id))
			continue;
		int64_t oi = nf_object_find(b->a, id);
		if (oi < 0) {
			if (!nf_build_id_known(b, id))
				nf_dir_error(b, &rw, "RESOURCE_REF_MISSING", "seed §9.1: resources reference "
					     "resource objects; there is no object \"%s\"", id);
			continue;
		}
		if (b->a->objects[oi].kind != NF_OBJ_RESOURCE) {
			nf_dir_error(b, &rw, "RESOURCE_REF_KIND", "seed §9.1: resources reference resource "
				     "objects; \"%s\" is a tensor", id);
			continue;
		}
		refs[k].role = nf_arena_strdup(b->ar, role);
		refs[k].object = (uint32_t)oi;
		k++;
	}
	c->resources = refs;
	c->nresources = k;
}

static void parse_proposal(struct nf_build *b, const struct nf_where *w, const char *id, json_t *v,
			   struct nf_component *c)
{
	char tail[] = ".proposal";
	struct nf_where pw = *w;
	pw.tail = tail;
	struct nf_rec rc = {.b = b, .w = &pw, .what = "a proposal record (seed §9.2)", .obj = v};
	if (strcmp(id, "text") != 0) {
		nf_dir_error(b, &pw, "PROPOSAL_NOT_TEXT", "seed §4.2: proposal is only allowed on the "
			     "text component; it is on \"%s\"", id);
		return;
	}
	if (!json_is_object(v)) {
		nf_dir_error(b, &pw, "FIELD_TYPE", "seed §9.2: proposal is an object; it is %s",
			     nf_json_type_name(b, v));
		return;
	}
	bool ok = nf_rec_members(&rc, proposal_fields, NULL);
	json_t *dv = nf_rec_get(&rc, "domain", true);
	json_t *rv = nf_rec_get(&rc, "rows", false);
	uint64_t rows;
	if (rv && !nf_val_u64(&rc, "rows", rv, true, &rows))
		ok = false;
	if (!dv)
		return;
	if (!json_is_string(dv)) {
		nf_dir_error(b, &pw, "FIELD_TYPE", "seed §9.2: domain is \"full\" or \"indexed\"; it is %s",
			     nf_json_type_name(b, dv));
		return;
	}
	const char *domain = json_string_value(dv);
	if (strcmp(domain, "full") == 0) {
		if (rv) {
			nf_dir_error(b, &pw, "PROPOSAL_ROWS", "seed §9.2: rows is only given with domain "
				     "indexed; domain is full");
			ok = false;
		}
	} else if (strcmp(domain, "indexed") == 0) {
		if (!rv) {
			nf_dir_error(b, &pw, "PROPOSAL_ROWS", "seed §9.2: domain indexed needs rows "
				     "(PositiveU64); it is missing");
			ok = false;
		}
	} else {
		nf_dir_error(b, &pw, "PROPOSAL_DOMAIN", "seed §9.2: domain is \"full\" or \"indexed\"; "
			     "it is \"%s\"", domain);
		ok = false;
	}
	if (ok)
		c->proposal_json = nf_pretty(b, v);
}

void nf_build_components(struct nf_build *b, json_t *components)
{
	struct nf_artifact *a = b->a;
	size_t n = json_object_size(components);
	struct nf_component *out = nf_arena_calloc(b->ar, n ? n : 1, sizeof *out);
	if (!out)
		return;
	uint32_t kept = 0;
	const char *id;
	json_t *rec;
	json_object_foreach(components, id, rec) {
		struct nf_where w = {.table = "components", .name = id};
		struct nf_rec rc = {.b = b, .w = &w, .what = "a component (seed §4.2)", .obj = rec};
		if (id[0] == '\0') {
			nf_dir_error(b, &w, "ID_EMPTY", "seed §4.2: a component ID is a non-empty ID; it "
				     "is \"\"");
			continue;
		}
		if (!json_is_object(rec)) {
			nf_dir_error(b, &w, "FIELD_TYPE", "seed §4.2: a component record is an object; it "
				     "is %s", nf_json_type_name(b, rec));
			continue;
		}
		nf_rec_members(&rc, component_fields, NULL);
		struct nf_component *c = &out[kept];
		json_t *cv = nf_rec_get(&rc, "config", true);
		if (!cv)
			continue;
		if (!json_is_object(cv)) {
			nf_dir_error(b, &w, "FIELD_TYPE", "seed §4.2: config is an object; it is %s",
				     nf_json_type_name(b, cv));
			continue;
		}
		c->id = nf_arena_strdup(b->ar, id);
		c->config_json = nf_pretty(b, cv);
		const char *target;
		if (nf_rec_id(&rc, "target", false, &target) == 1) {
			json_t *tv = json_object_get(components, target);
			if (!tv)
				nf_dir_error(b, &w, "COMPONENT_TARGET_MISSING", "seed §4.2: target names a "
					     "component; there is no component \"%s\"", target);
			else
				c->target = nf_arena_strdup(b->ar, target);
		}
		json_t *rv = json_object_get(rec, "resources");
		if (rv)
			parse_resources(b, &w, rv, c);
		json_t *pv = json_object_get(rec, "proposal");
		if (pv)
			parse_proposal(b, &w, id, pv, c);
		kept++;
	}
	a->components = out;
	a->ncomponents = kept;
}
