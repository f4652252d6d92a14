/* fuzz/fuzz_calbin_meta.c — the calbin metadata grammar (calbin/meta.c,
 * seed 004 §4, §5) on arbitrary text.
 *
 * Input: byte 0 selects the file (even: model_memory_reserved_info.txt,
 * odd: submodel_memory_reserved_info.txt), the rest is its text, fed line
 * by line as calbin's line reader would.  Checks: every finding is a Gate B
 * META_* error of the file at a line that exists (or 0); what parsed has at
 * most one entry per line; and every parsed parameter-map line, reservation,
 * declaration and buffer, written back in the canonical form of the issue's
 * conventions, parses alone to exactly the same values with no finding. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "calbin/internal.h"
#include "fuzz_common.h"

static const char *const allowed[] = {"META_SYNTAX", "META_DUPLICATE", "META_KEY_MISSING", NULL};

static void check_findings(const struct nf_report *r, uint64_t nlines)
{
	for (size_t i = 0; i < r->count; i++) {
		const struct nf_finding *f = &r->items[i];
		bool ok = false;
		for (int k = 0; allowed[k]; k++)
			ok |= strcmp(f->code, allowed[k]) == 0;
		FUZZ_CHECK(ok, "code %s", f->code);
		FUZZ_CHECK(f->gate == 'B' && f->severity == NF_SEV_ERROR && f->klass == NF_CLASS_ERROR,
			   "%s: gate %c", f->code, f->gate);
		FUZZ_CHECK(f->file && strcmp(f->file, "fuzz.txt") == 0, "file");
		FUZZ_CHECK(f->line <= nlines, "line %" PRIu64 " of %" PRIu64, f->line, nlines);
	}
}

/* Parse one canonical line alone; no syntax finding allowed. */
static void reparse(enum cb_meta_kind kind, const char *line, struct cb_topmeta *t,
		    struct cb_reservation *res, struct cb_submeta *s, struct cb_meta_out *m,
		    struct nf_report *r)
{
	nf_report_init(r);
	*m = (struct cb_meta_out){.kind = kind, .file = "fuzz.txt", .r = r, .top = t, .res = res,
				  .sub = s};
	cb_meta_line(m, line, strlen(line), 1);
	for (size_t i = 0; i < r->count; i++)
		FUZZ_CHECK(strcmp(r->items[i].code, "META_SYNTAX") != 0 || r->oom,
			   "canonical line '%s' rejected: %s", line, r->items[i].evidence);
}

static void round_trip_top(const struct cb_meta_out *m)
{
	char line[512];
	for (size_t i = 0; i < m->nmaps; i++) {
		const struct cb_map *x = &m->maps[i];
		snprintf(line, sizeof line, "%s offset 0x%" PRIx64 " vaddr 0x%016" PRIx64 " size 0x%" PRIx64
			 " chip %08x %08x %08x", x->file, x->offset, x->vaddr, x->size, x->mask[0],
			 x->mask[1], x->mask[2]);
		if (strlen(line) > 400)
			continue;
		struct cb_topmeta t = {0};
		struct cb_reservation res[CB_DOMAIN_COUNT] = {{0}};
		struct cb_meta_out m2;
		struct nf_report r;
		reparse(CB_META_TOP, line, &t, res, NULL, &m2, &r);
		if (!r.oom) {
			FUZZ_CHECK(m2.nmaps == 1, "'%s' gave %zu maps", line, m2.nmaps);
			const struct cb_map *y = &m2.maps[0];
			FUZZ_CHECK(strcmp(y->file, x->file) == 0 && y->offset == x->offset &&
				   y->vaddr == x->vaddr && y->size == x->size && y->mask[0] == x->mask[0] &&
				   y->mask[1] == x->mask[1] && y->mask[2] == x->mask[2], "'%s' changed", line);
		}
		cb_maps_free(m2.maps, m2.nmaps);
		cb_topmeta_free(&t);
		nf_report_free(&r);
	}
	static const char *const names[CB_DOMAIN_COUNT] = {"dram_rsvd", "sram_rsvd", "sync_rsvd"};
	for (int d = 0; d < CB_DOMAIN_COUNT; d++) {
		if (!m->res[d].present)
			continue;
		snprintf(line, sizeof line, "%s vaddr 0x%" PRIx64 " size %" PRIu64, names[d],
			 m->res[d].vaddr, m->res[d].size);
		struct cb_topmeta t = {0};
		struct cb_reservation res[CB_DOMAIN_COUNT] = {{0}};
		struct cb_meta_out m2;
		struct nf_report r;
		reparse(CB_META_TOP, line, &t, res, NULL, &m2, &r);
		FUZZ_CHECK(r.oom || (res[d].present && res[d].vaddr == m->res[d].vaddr &&
				     res[d].size == m->res[d].size), "'%s' changed", line);
		cb_maps_free(m2.maps, m2.nmaps);
		cb_topmeta_free(&t);
		nf_report_free(&r);
	}
}

static void round_trip_sub(const struct cb_submeta *s)
{
	char line[1024];
	for (size_t i = 0; i < s->nbufs; i++) {
		const struct cb_buf *b = &s->bufs[i];
		int n = snprintf(line, sizeof line, "%s %s shape [", b->out ? "obuf" : "ibuf", b->name);
		for (uint32_t k = 0; k < b->rank && n < 900; k++)
			n += snprintf(line + n, sizeof line - (size_t)n, "%s%" PRIu64, k ? "," : "", b->dims[k]);
		if (n > 900 || strlen(b->name) + strlen(b->dtype) > 60)
			continue;
		snprintf(line + n, sizeof line - (size_t)n, "] type %s vaddr 0x%" PRIx64 " 0x%" PRIx64
			 " size %" PRIu64, b->dtype, b->ping, b->pong, b->size);
		struct cb_submeta s2 = {0};
		struct cb_meta_out m2;
		struct nf_report r;
		reparse(CB_META_SUB, line, NULL, NULL, &s2, &m2, &r);
		if (!r.oom) {
			FUZZ_CHECK(s2.nbufs == 1, "'%s' gave %zu buffers", line, s2.nbufs);
			const struct cb_buf *c = &s2.bufs[0];
			bool same = c->out == b->out && c->rank == b->rank && c->ping == b->ping &&
				    c->pong == b->pong && c->size == b->size && strcmp(c->name, b->name) == 0 &&
				    strcmp(c->dtype, b->dtype) == 0 && c->dtype_bytes == b->dtype_bytes;
			for (uint32_t k = 0; same && k < b->rank; k++)
				same = c->dims[k] == b->dims[k];
			FUZZ_CHECK(same, "'%s' changed", line);
		}
		cb_submeta_free(&s2);
		nf_report_free(&r);
	}
	for (size_t i = 0; i < s->ndecls; i++) {
		const struct cb_decl *d = &s->decls[i];
		if (strlen(d->file) > 200 || (d->location && strlen(d->location) > 200))
			continue;
		if (d->elf)
			snprintf(line, sizeof line, "%s location %s chip %08x %08x %08x", d->file, d->location,
				 d->mask[0], d->mask[1], d->mask[2]);
		else
			snprintf(line, sizeof line, "%s chip %08x %08x %08x", d->file, d->mask[0], d->mask[1],
				 d->mask[2]);
		struct cb_submeta s2 = {0};
		struct cb_meta_out m2;
		struct nf_report r;
		reparse(CB_META_SUB, line, NULL, NULL, &s2, &m2, &r);
		if (!r.oom) {
			FUZZ_CHECK(s2.ndecls == 1 && s2.decls[0].elf == d->elf &&
				   strcmp(s2.decls[0].file, d->file) == 0 &&
				   memcmp(s2.decls[0].mask, d->mask, sizeof d->mask) == 0, "'%s' changed", line);
		}
		cb_submeta_free(&s2);
		nf_report_free(&r);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1 << 20))
		return 0;
	enum cb_meta_kind kind = data[0] & 1 ? CB_META_SUB : CB_META_TOP;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	struct nf_report r;
	nf_report_init(&r);
	struct cb_topmeta top = {0};
	struct cb_reservation res[CB_DOMAIN_COUNT] = {{0}};
	struct cb_submeta sub = {0};
	struct cb_meta_out m = {.kind = kind, .file = "fuzz.txt", .r = &r, .top = &top, .res = res,
				.sub = &sub};
	uint64_t lineno = 0;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
		cb_meta_line(&m, text + i, n > 4096 ? 4096 : n, ++lineno);
		i += n + 1;
	}
	cb_meta_finish(&m);
	check_findings(&r, lineno);
	FUZZ_CHECK(m.nmaps <= lineno && sub.nbufs + sub.ndecls + sub.nicsrs <= lineno,
		   "more entries than lines");
	if (!r.oom) {
		if (kind == CB_META_TOP)
			round_trip_top(&m);
		else
			round_trip_sub(&sub);
	}
	cb_maps_free(m.maps, m.nmaps);
	cb_topmeta_free(&top);
	cb_submeta_free(&sub);
	nf_report_free(&r);
	return 0;
}
