/* calbin/gate_memory.c — Gate D: capacity (seed §4.2, §4.3 rule 6, §6,
 * §9 Gate D).
 *
 *   parameter bytes by chip, domain and file (valid map lines only);
 *   uncovered and duplicate file ranges of each parameter block;
 *   KV bytes = layers * kv_heads * 2 (K, V) * head_dim * max_seq *
 *     dtype_bytes, and per chip when the KV heads split evenly;
 *   the op I/O address union per submodel (static coverage, not peak live
 *     memory; refused with the capacity report on an unknown dtype);
 *   device_memory_required is never used: an implausible unit is
 *     WARNING_VENDOR (§4.1, §10). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calbin/internal.h"

static bool u64_of(const json_t *obj, const char *key, uint64_t *v)
{
	return cb_json_u64(json_object_get(obj, key), v);
}

static void parameter_bytes(struct cb_build *b)
{
	struct cb_package *p = b->p;
	struct cb_memory *mem = &p->memory;
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct cb_map *m = &p->maps[i];
		if (!m->valid)
			continue;
		for (unsigned c = 0; c < p->chips && c < CB_MAX_CHIPS; c++)
			if (cb_mask_has(m->mask, c)) {
				mem->param_bytes_by_chip[c] += m->size;
				mem->param_bytes_by_chip_domain[c][m->domain] += m->size;
			}
	}
}

static int by_begin(const void *a, const void *b)
{
	const struct cb_range *x = a, *y = b;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static void block_cover(struct cb_build *b, size_t fi, struct cb_range *v)
{
	struct cb_package *p = b->p;
	struct cb_memory *mem = &p->memory;
	const struct cb_file *f = &p->files[fi];
	struct cb_block_cover c = {.file_index = (int)fi, .file_bytes = f->size};
	size_t n = 0;
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct cb_map *m = &p->maps[i];
		if (m->valid && m->file_index == (int)fi && m->size) {
			v[n++] = (struct cb_range){m->offset, m->offset + m->size, i};
			c.mapped_bytes += m->size;
		}
	}
	if (n > 1)
		qsort(v, n, sizeof *v, by_begin);
	uint64_t pos = 0, reach = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].begin > reach) {
			c.uncovered_ranges++;
			c.uncovered_bytes += v[i].begin - reach;
		} else if (i && v[i].begin < reach) {
			c.duplicate_ranges++;
			uint64_t end = v[i].end < reach ? v[i].end : reach;
			c.duplicate_bytes += end - v[i].begin;
		}
		if (v[i].end > reach)
			reach = v[i].end;
		pos = reach;
	}
	if (pos < f->size) {
		c.uncovered_ranges++;
		c.uncovered_bytes += f->size - pos;
	}
	c.covered_bytes = f->size - c.uncovered_bytes;
	struct cb_block_cover *x = reallocarray(mem->blocks, mem->nblocks + 1, sizeof *x);
	if (!x) {
		b->r->oom = true;
		return;
	}
	mem->blocks = x;
	x[mem->nblocks++] = c;
	if (c.uncovered_bytes || c.duplicate_bytes)
		CB_INFO(b->r, 'D', "MAP_COVERAGE", f->path, 0, NULL,
			"seed §4.3 rule 6: %" PRIu64 " of %" PRIu64 " bytes in %" PRIu64 " range%s are "
			"mapped by no line; %" PRIu64 " bytes in %" PRIu64 " range%s are mapped more "
			"than once (counted, not judged)", c.uncovered_bytes, f->size, c.uncovered_ranges,
			c.uncovered_ranges == 1 ? "" : "s", c.duplicate_bytes, c.duplicate_ranges,
			c.duplicate_ranges == 1 ? "" : "s");
}

static void blocks(struct cb_build *b)
{
	struct cb_package *p = b->p;
	struct cb_range *v = p->nmaps ? malloc(p->nmaps * sizeof *v) : NULL;
	if (p->nmaps && !v) {
		b->r->oom = true;
		return;
	}
	for (size_t i = 0; i < p->nfiles; i++) {
		bool used = p->files[i].kind == CB_KIND_PARAM_BLOCK;
		for (size_t m = 0; !used && m < p->nmaps; m++)
			used = p->maps[m].valid && p->maps[m].file_index == (int)i;
		if (used && S_ISREG(p->files[i].type) && !p->files[i].escapes)
			block_cover(b, i, v);
	}
	free(v);
}

static void kv(struct cb_build *b)
{
	struct cb_package *p = b->p;
	struct cb_memory *mem = &p->memory;
	const json_t *mi = json_object_get(b->cfg[0], "model_info");
	if (!mi)
		mi = json_object_get(b->cfg[1], "model_info");
	uint64_t L = 0, H = 0, D = 0, S = 0, T = 0;
	bool hl = u64_of(p->hf_config, "num_hidden_layers", &L);
	for (size_t i = 0; !hl && i < p->nsubmodels; i++)
		if (p->submodels[i].graph_layers)
			L = p->submodels[i].graph_layers, hl = true;
	bool hh = u64_of(mi, "k0_head_num", &H);
	bool hd = u64_of(mi, "k0_head_dim", &D) || u64_of(p->hf_config, "head_dim", &D);
	bool hs = u64_of(mi, "max_seq_len", &S);
	/* The KV inputs' dtype as the graph reads them: decode first. */
	for (int pass = 1; pass >= 0 && !T; pass--)
		for (size_t i = 0; i < p->nsubmodels && !T; i++)
			if ((int)p->submodels[i].kind == pass)
				T = p->submodels[i].kv_dtype_bytes;
	const char *missing = !hl ? "the layer count (config.json num_hidden_layers)"
			      : !hh ? "model_info.k0_head_num" : !hd ? "model_info.k0_head_dim"
			      : !hs ? "model_info.max_seq_len"
			      : !T ? "the dtype of the KV inputs in the op I/O YAML" : NULL;
	if (missing) {
		if (b->manifest_file || p->hf_config)
			CB_WARN(b->r, 'D', NF_CLASS_NONE, "KV_UNKNOWN", NULL, 0, NULL,
				"seed §9 Gate D: the KV figure cannot be computed: %s is unknown", missing);
		return;
	}
	uint64_t x = L;
	if (__builtin_mul_overflow(x, H, &x) || __builtin_mul_overflow(x, 2, &x) ||
	    __builtin_mul_overflow(x, D, &x) || __builtin_mul_overflow(x, S, &x) ||
	    __builtin_mul_overflow(x, T, &x)) {
		CB_WARN(b->r, 'D', NF_CLASS_NONE, "KV_UNKNOWN", NULL, 0, NULL,
			"seed §9 Gate D: the KV figure overflows 64 bits");
		return;
	}
	mem->kv_valid = true;
	mem->kv_layers = L;
	mem->kv_heads = H;
	mem->kv_head_dim = D;
	mem->kv_max_seq = S;
	mem->kv_dtype_bytes = T;
	mem->kv_bytes = x;
	if (p->chips && H % p->chips == 0)
		mem->kv_bytes_per_chip = x / p->chips;
	else if (p->chips)
		CB_WARN(b->r, 'D', NF_CLASS_NONE, "KV_SPLIT", NULL, 0, NULL,
			"seed §9 Gate D: %" PRIu64 " KV heads do not split evenly over %u chips: no "
			"per-chip KV figure", H, p->chips);
}

static int domain_of(const struct cb_package *p, uint64_t begin, uint64_t end)
{
	for (int d = 0; d < CB_DOMAIN_COUNT; d++) {
		const struct cb_reservation *r = &p->reservations[d];
		if (r->present && begin >= r->vaddr && end - r->vaddr <= r->size)
			return d;
	}
	return -1;
}

static void unions(struct cb_build *b)
{
	struct cb_package *p = b->p;
	if (p->memory.capacity_refused)
		return;
	bool have_res = false;
	for (int d = 0; d < CB_DOMAIN_COUNT; d++)
		have_res |= p->reservations[d].present;
	for (size_t i = 0; i < p->nsubmodels; i++) {
		struct cb_submodel *s = &p->submodels[i];
		size_t n = 0, outside = 0;
		for (size_t o = 0; o < s->nops; o++)
			n += s->ops[o].ntensors;
		if (!s->nops)
			continue;
		struct cb_range *v = n ? malloc(n * sizeof *v) : NULL;
		if (n && !v) {
			b->r->oom = true;
			return;
		}
		size_t k = 0;
		const char *file = p->files[s->opio_index].path;
		for (size_t o = 0; o < s->nops; o++)
			for (size_t t = 0; t < s->ops[o].ntensors; t++) {
				const struct cb_tensor *x = &s->ops[o].tensors[t];
				uint64_t end;
				if (!x->bytes || __builtin_add_overflow(x->vaddr, x->bytes, &end))
					continue;
				v[k++] = (struct cb_range){x->vaddr, end, o};
				if (have_res && domain_of(p, x->vaddr, end) < 0 &&
				    outside++ < CB_MAX_FINDINGS_PER_FILE) {
					char *key = NULL;
					if (asprintf(&key, "%s.%s_%" PRIu32, s->ops[o].name,
						     x->out ? "outs" : "args", x->index) < 0)
						key = NULL;
					CB_WARN(b->r, 'D', NF_CLASS_NONE, "OPIO_OUTSIDE", file, x->line, key,
						"seed §6, §4.2: [0x%" PRIx64 ", +%" PRIu64 ") lies in no "
						"reservation", x->vaddr, x->bytes);
					free(key);
				}
			}
		if (outside > CB_MAX_FINDINGS_PER_FILE)
			CB_WARN(b->r, 'D', NF_CLASS_NONE, "OPIO_OUTSIDE", file, 0, NULL,
				"%zu more tensors lie in no reservation", outside - CB_MAX_FINDINGS_PER_FILE);
		s->union_bytes = cb_union_bytes(v, k);
		s->union_valid = true;
		free(v);
	}
}

static void capacity(struct cb_build *b)
{
	struct cb_package *p = b->p;
	const struct cb_memory *mem = &p->memory;
	const struct cb_reservation *dram = &p->reservations[CB_DOMAIN_DRAM];
	if (mem->capacity_refused || !dram->present)
		return;
	for (unsigned c = 0; c < p->chips; c++) {
		uint64_t need = mem->param_bytes_by_chip_domain[c][CB_DOMAIN_DRAM];
		if (mem->kv_valid)
			need += mem->kv_bytes_per_chip;
		if (need > dram->size)
			CB_ERR(b->r, 'D', "MEM_CAPACITY", p->files[p->top_meta_index].path, dram->line,
			       "dram_rsvd", "seed §9 Gate D: chip %u needs %" PRIu64 " bytes of DRAM for "
			       "parameters and KV; dram_rsvd reserves %" PRIu64, c, need, dram->size);
	}
}

static void unit(struct cb_build *b)
{
	struct cb_package *p = b->p;
	if (!p->top.has_mem_required)
		return;
	uint64_t mb = p->top.mem_required_mb, bytes;
	uint64_t dram = p->reservations[CB_DOMAIN_DRAM].present ? p->reservations[CB_DOMAIN_DRAM].size : 0;
	/* Plausible: at least the DRAM reservation, at most 1 TiB per device. */
	if (__builtin_mul_overflow(mb, (uint64_t)1 << 20, &bytes) || bytes > (1ull << 40) ||
	    bytes < dram)
		CB_WARN(b->r, 'D', NF_CLASS_WARNING_VENDOR, "MEM_UNIT",
			p->files[p->top_meta_index].path, p->top.line_mem_required,
			"device_memory_required",
			"seed §4.1, §10: device_memory_required %" PRIu64 " MB is not a plausible "
			"device memory (the DRAM reservation is %" PRIu64 " bytes): not used for any "
			"capacity decision, the vendor must confirm the unit", mb, dram);
}

void cb_gate_memory(struct cb_build *b)
{
	parameter_bytes(b);
	blocks(b);
	kv(b);
	unions(b);
	capacity(b);
	unit(b);
}
