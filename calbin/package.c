/* calbin/package.c — cb_package_open: the order of the work.
 *
 *   walk + classify (Gate A's listing) -> root manifest (Gate B keys) ->
 *   metadata text (§4, §5 grammar) -> op I/O YAML, profparts, tokenizer
 *   JSON, ELF, command .bin headers -> workers: command dumps and digests ->
 *   Gates A (inventory, hashes), C, D, E, service, F.
 * Each step reads only what it parses and reports what it cannot read; a
 * step whose input is missing or broken leaves its part of the model empty
 * and the later rules that need it silent (the first finding names the
 * cause).  The findings are sorted by gate at the end (stable). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calbin/internal.h"

/* ---- findings ------------------------------------------------------------ */

static enum nf_scope scope_of(char gate, enum nf_severity sev)
{
	/* Gates A–C errors refuse a mount (issue 13), like NInfer directory
	 * errors; the rest are findings about parts of the package. */
	return sev == NF_SEV_ERROR && (gate == 'A' || gate == 'B' || gate == 'C') ? NF_SCOPE_DIRECTORY
										  : NF_SCOPE_FILE;
}

static void vfind(struct nf_report *r, char gate, enum nf_severity sev, enum nf_class klass,
		  enum nf_scope scope, const char *code, const char *file, uint64_t line,
		  const char *key, const char *fmt, va_list ap)
{
	char *ev = NULL;
	if (vasprintf(&ev, fmt, ap) < 0) {
		r->oom = true;
		return;
	}
	struct nf_site site = {.file = file, .line = line, .key = key};
	nf_report_add_site(r, sev, scope, gate, klass, code, &site, "%s", ev);
	free(ev);
}

void cb_find(struct nf_report *r, char gate, enum nf_severity sev, enum nf_class klass,
	     const char *code, const char *file, uint64_t line, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfind(r, gate, sev, klass, scope_of(gate, sev), code, file, line, key, fmt, ap);
	va_end(ap);
}

void cb_find_op(struct nf_report *r, char gate, const char *code, const char *file,
		const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfind(r, gate, NF_SEV_ERROR, NF_CLASS_ERROR, NF_SCOPE_OPERATIONAL, code, file, 0, NULL, fmt,
	      ap);
	va_end(ap);
}

/* ---- small helpers ----------------------------------------------------------- */

bool cb_mask_has(const uint32_t mask[3], unsigned chip)
{
	if (chip >= CB_MAX_CHIPS)
		return false;
	return (mask[2 - chip / 32] >> (chip % 32)) & 1;
}

bool cb_mask_within(const uint32_t mask[3], unsigned chips)
{
	/* word 2 holds chips 0..31, word 1 32..63, word 0 64..95 */
	for (int w = 0; w < 3; w++) {
		unsigned lo = (unsigned)(2 - w) * 32;
		uint32_t allowed = chips <= lo ? 0 : chips - lo >= 32 ? UINT32_MAX
					       : (UINT32_C(1) << (chips - lo)) - 1;
		if (mask[w] & ~allowed)
			return false;
	}
	return true;
}

const char *cb_domain_name(enum cb_domain d)
{
	switch (d) {
	case CB_DOMAIN_DRAM: return "dram";
	case CB_DOMAIN_SRAM: return "sram";
	case CB_DOMAIN_SYNC: return "sync";
	case CB_DOMAIN_COUNT: break;
	}
	return "?";
}

const char *cb_json_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

bool cb_json_u64(const json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

json_t *cb_json_hex(uint64_t v)
{
	char s[24];
	snprintf(s, sizeof s, "0x%" PRIx64, v);
	return json_string(s);
}

json_t *cb_json_dims(uint32_t rank, const uint64_t *dims)
{
	json_t *a = json_array();
	for (uint32_t i = 0; a && i < rank; i++)
		json_array_append_new(a, nf_json_u64(dims[i]));
	return a;
}

const struct cb_file *cb_file_at(const struct cb_package *p, int i)
{
	return i >= 0 && (size_t)i < p->nfiles ? &p->files[i] : NULL;
}

static bool readable(const struct cb_package *p, int i)
{
	const struct cb_file *f = cb_file_at(p, i);
	return f && S_ISREG(f->type) && !f->escapes && f->size > 0;
}

/* ---- readers ------------------------------------------------------------------ */

static int load_yaml(struct cb_build *b, int index, struct cb_yaml_doc *doc)
{
	struct cb_package *p = b->p;
	const char *file = p->files[index].path;
	int fd = cb_open_index(p, (size_t)index);
	if (fd < 0) {
		cb_find_op(b->r, 'A', "FILE_UNREADABLE", file, "open: %s", strerror(-fd));
		return -1;
	}
	int rc = cb_yaml_load(fd, file, NULL, b->r, doc);
	close(fd);
	return rc;
}

static void read_manifest(struct cb_build *b)
{
	struct cb_package *p = b->p;
	if (!readable(p, p->manifest_index))
		return;
	b->manifest_file = p->files[p->manifest_index].path;
	if (load_yaml(b, p->manifest_index, &b->manifest_doc) == 0)
		p->manifest = json_incref(b->manifest_doc.root);
	cb_gate_manifest(b);
}

static void read_hparam(struct cb_build *b)
{
	struct cb_package *p = b->p;
	struct cb_yaml_doc doc;
	if (!readable(p, p->hparam_index))
		return;
	if (load_yaml(b, p->hparam_index, &doc) == 0) {
		p->hparam = doc.root;
		cb_yaml_free(&doc, false);
	}
}

static int meta_line(void *arg, const char *line, size_t len, uint64_t lineno, bool toolong)
{
	struct cb_meta_out *m = arg;
	if (toolong) {
		CB_ERR(m->r, 'B', "META_SYNTAX", m->file, lineno, NULL,
		       "a line longer than 4096 bytes");
		return 0;
	}
	cb_meta_line(m, line, len, lineno);
	return m->oom ? -ENOMEM : 0;
}

static bool read_meta(struct cb_build *b, int index, struct cb_meta_out *m)
{
	struct cb_package *p = b->p;
	m->file = p->files[index].path;
	m->r = b->r;
	int fd = cb_open_index(p, (size_t)index);
	if (fd < 0) {
		cb_find_op(b->r, 'A', "FILE_UNREADABLE", m->file, "open: %s", strerror(-fd));
		return false;
	}
	int rc = cb_read_lines(fd, 1 << 16, 4096, meta_line, m, NULL, NULL, NULL);
	close(fd);
	if (rc < 0 && rc != -ENOMEM) {
		cb_find_op(b->r, 'A', "FILE_UNREADABLE", m->file, "read: %s", strerror(-rc));
		return false;
	}
	cb_meta_finish(m);
	return rc == 0;
}

static void read_top_meta(struct cb_build *b)
{
	struct cb_package *p = b->p;
	if (!readable(p, p->top_meta_index))
		return;
	struct cb_meta_out m = {.kind = CB_META_TOP, .top = &p->top, .res = p->reservations};
	p->top_ok = read_meta(b, p->top_meta_index, &m);
	p->maps = m.maps;
	p->nmaps = m.nmaps;
}

static void read_submodel(struct cb_build *b, struct cb_submodel *s)
{
	struct cb_package *p = b->p;
	if (readable(p, s->meta_index)) {
		struct cb_meta_out m = {.kind = CB_META_SUB, .sub = &s->meta};
		s->meta_ok = read_meta(b, s->meta_index, &m);
	}
	if (readable(p, s->opio_index)) {
		struct cb_yaml_doc doc;
		if (load_yaml(b, s->opio_index, &doc) == 0) {
			s->ops_json = doc.root;
			cb_opio_build(b, s, &doc, p->files[s->opio_index].path);
			cb_yaml_free(&doc, false);  /* the lines are in the ops now */
		}
	}
	/* profparts and command dumps, by chip (from the names). */
	unsigned chips = p->chips;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct cb_file *f = &p->files[i];
		if (f->submodel >= 0 && &p->submodels[f->submodel] == s && f->chip >= 0 &&
		    (unsigned)f->chip + 1 > chips && f->chip < CB_MAX_CHIPS &&
		    (f->kind == CB_KIND_PROFPARTS))
			chips = (unsigned)f->chip + 1;
	}
	s->nprofparts = chips;
	s->profparts = chips ? calloc(chips, sizeof *s->profparts) : NULL;
	if (chips && !s->profparts) {
		b->r->oom = true;
		return;
	}
	for (size_t c = 0; c < chips; c++)
		s->profparts[c].file_index = -1;
	size_t ncmd = 0;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct cb_file *f = &p->files[i];
		if (f->submodel < 0 || &p->submodels[f->submodel] != s)
			continue;
		if (f->kind == CB_KIND_PROFPARTS && f->chip >= 0 && (size_t)f->chip < chips)
			s->profparts[f->chip].file_index = (int)i;
		if (f->kind == CB_KIND_CMD_TEXT && S_ISREG(f->type) && !f->escapes)
			ncmd++;
	}
	cb_profparts_read(b, s);
	s->commands = ncmd ? calloc(ncmd, sizeof *s->commands) : NULL;
	if (ncmd && !s->commands) {
		b->r->oom = true;
		return;
	}
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct cb_file *f = &p->files[i];
		if (f->submodel < 0 || &p->submodels[f->submodel] != s || f->kind != CB_KIND_CMD_TEXT ||
		    !S_ISREG(f->type) || f->escapes)
			continue;
		struct cb_commands *c = &s->commands[s->ncommands++];
		*c = (struct cb_commands){.file_index = (int)i, .bin_index = -1, .engine = f->engine,
					  .chip = f->chip, .pong = f->pong};
		char *bin = strdup(f->path);
		if (!bin) {
			b->r->oom = true;
			return;
		}
		memcpy(bin + strlen(bin) - 3, "bin", 3);
		c->bin_index = cb_package_find(p, bin);
		free(bin);
	}
}

static json_t *read_json(struct cb_build *b, const char *path)
{
	struct cb_package *p = b->p;
	int i = cb_package_find(p, path);
	if (!readable(p, i))
		return NULL;
	if (p->files[i].size > CB_FAST_HASH_LIMIT) {
		CB_WARN(b->r, 'S', NF_CLASS_NONE, "JSON_TOO_LARGE", path, 0, NULL,
			"larger than %llu MiB: not parsed", CB_FAST_HASH_LIMIT >> 20);
		return NULL;
	}
	int fd = cb_open_index(p, (size_t)i);
	if (fd < 0) {
		cb_find_op(b->r, 'A', "FILE_UNREADABLE", path, "open: %s", strerror(-fd));
		return NULL;
	}
	FILE *fp = fdopen(fd, "r");
	if (!fp) {
		close(fd);
		b->r->oom = true;
		return NULL;
	}
	json_error_t e;
	json_t *v = json_loadf(fp, JSON_REJECT_DUPLICATES, &e);
	fclose(fp);
	if (!v)
		CB_ERR(b->r, 'B', "JSON_SYNTAX", path, e.line > 0 ? (uint64_t)e.line : 0, NULL,
		       "not one JSON document: %s", e.text);
	else if (!json_is_object(v)) {
		CB_ERR(b->r, 'B', "JSON_SYNTAX", path, 1, NULL, "not a JSON object");
		json_decref(v);
		v = NULL;
	}
	return v;
}

static void read_binaries(struct cb_build *b)
{
	struct cb_package *p = b->p;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct cb_file *f = &p->files[i];
		if (!S_ISREG(f->type) || f->escapes)
			continue;
		if (f->kind == CB_KIND_CCU_ELF || f->kind == CB_KIND_HELPER_SO)
			cb_elf_read(b, i);
	}
	for (size_t s = 0; s < p->nsubmodels; s++) {
		struct cb_submodel *sm = &p->submodels[s];
		for (size_t c = 0; c < sm->ncommands; c++) {
			struct cb_commands *cmd = &sm->commands[c];
			if (cmd->bin_index < 0 || !S_ISREG(p->files[cmd->bin_index].type) ||
			    p->files[cmd->bin_index].escapes)
				continue;
			int64_t n = cb_command_bin_count(p, cmd->bin_index, b->r);
			cmd->bin_count = n >= 0 ? (uint64_t)n : UINT64_MAX;
		}
	}
}

/* The chip count everything per chip is checked against: device_cfg when
 * the manifest gives one, else what the file names say. */
static void settle_chips(struct cb_build *b)
{
	struct cb_package *p = b->p;
	uint64_t v;
	for (int k = 0; k < 2 && !p->chips; k++) {
		const json_t *dc = json_object_get(b->cfg[k], "device_cfg");
		if (cb_json_u64(json_object_get(dc, "chip_nums"), &v) && v >= 1 && v <= CB_MAX_CHIPS)
			p->chips = (unsigned)v;
		if (cb_json_u64(json_object_get(dc, "calcore_num"), &v) && v >= 1 && v <= 64)
			p->cores = (unsigned)v;
	}
	if (!p->chips)
		for (size_t i = 0; i < p->nfiles; i++)
			if (p->files[i].chip >= 0 && p->files[i].chip < CB_MAX_CHIPS &&
			    (unsigned)p->files[i].chip + 1 > p->chips)
				p->chips = (unsigned)p->files[i].chip + 1;
	if (!p->cores)
		for (size_t i = 0; i < p->nfiles; i++)
			if (p->files[i].core >= 0 && p->files[i].core < 64 &&
			    (unsigned)p->files[i].core + 1 > p->cores)
				p->cores = (unsigned)p->files[i].core + 1;
}

static int gate_rank(char g)
{
	static const char order[] = "ABCDESF";
	const char *at = g ? strchr(order, g) : NULL;
	return at ? (int)(at - order) : 7;
}

/* Stable sort of the findings from `from` on by gate. */
static void sort_findings(struct nf_report *r, size_t from)
{
	size_t n = r->count - from;
	if (n < 2)
		return;
	/* A pass per gate keeps each gate's findings in the order found. */
	struct nf_finding *tmp = malloc(n * sizeof *tmp);
	if (!tmp)
		return;
	size_t k = 0;
	for (int g = 0; g <= 7; g++)
		for (size_t i = from; i < r->count; i++)
			if (gate_rank(r->items[i].gate) == g)
				tmp[k++] = r->items[i];
	memcpy(r->items + from, tmp, n * sizeof *tmp);
	free(tmp);
}

int cb_package_open(const char *dir, const struct cb_options *opt, struct nf_report *r,
		    struct cb_package **out)
{
	*out = NULL;
	struct cb_package *p = calloc(1, sizeof *p);
	if (!p)
		return -ENOMEM;
	p->rootfd = -1;
	p->manifest_index = p->top_meta_index = p->hparam_index = p->sums_index = -1;
	size_t from = r->count;
	if (!(p->root_path = strdup(dir))) {
		free(p);
		return -ENOMEM;
	}
	/* The package name: the last component of the real path ("." and
	 * trailing slashes name the directory they stand for). */
	char *real = realpath(dir, NULL);
	const char *full = real ? real : dir;
	size_t len = strlen(full);
	while (len > 1 && full[len - 1] == '/')
		len--;
	size_t start = len;
	while (start > 0 && full[start - 1] != '/')
		start--;
	p->name = strndup(full + start, len - start);
	free(real);
	if (!p->name) {
		cb_package_close(p);
		return -ENOMEM;
	}
	p->hash_all = opt && opt->hash_all;
	struct cb_build b = {.p = p, .r = r, .opt = opt};
	elf_version(EV_CURRENT);

	p->rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (p->rootfd < 0) {
		cb_find_op(r, 'A', "PKG_UNREADABLE", NULL,
			   "seed §9 Gate A: the package directory cannot be opened: %s",
			   strerror(errno));
		*out = p;
		return 0;
	}
	cb_walk(&b);
	if (!p->readable) {
		*out = p;
		return 0;
	}
	cb_classify(&b);
	read_manifest(&b);
	settle_chips(&b);
	read_hparam(&b);
	read_top_meta(&b);
	for (size_t s = 0; s < p->nsubmodels; s++)
		read_submodel(&b, &p->submodels[s]);
	p->hf_config = read_json(&b, "__Tokenizer/config.json");
	p->tokenizer_config = read_json(&b, "__Tokenizer/tokenizer_config.json");
	p->generation_config = read_json(&b, "__Tokenizer/generation_config.json");
	read_binaries(&b);

	struct cb_sums sums = {0};
	cb_sums_read(&b, &sums);
	cb_run_jobs(&b);

	cb_gate_inventory(&b);
	cb_sums_check(&b, &sums);
	free(sums.expect);
	cb_gate_cross(&b);
	cb_gate_memory(&b);
	cb_gate_supply(&b);
	cb_gate_service(&b);
	cb_gate_runtime(&b);
	cb_yaml_free(&b.manifest_doc, true);
	sort_findings(r, from);
	*out = p;
	return 0;
}

static void submodel_free(struct cb_submodel *s)
{
	free(s->dir);
	cb_submeta_free(&s->meta);
	cb_opio_free(s);
	for (size_t c = 0; c < s->nprofparts; c++) {
		for (size_t i = 0; i < s->profparts[c].count; i++)
			free(s->profparts[c].ops[i]);
		free(s->profparts[c].ops);
		free(s->profparts[c].lines);
	}
	free(s->profparts);
	for (size_t c = 0; c < s->ncommands; c++) {
		for (size_t t = 0; t < s->commands[c].ntypes; t++)
			free(s->commands[c].types[t].type);
		free(s->commands[c].types);
	}
	free(s->commands);
}

void cb_package_close(struct cb_package *p)
{
	if (!p)
		return;
	if (p->rootfd >= 0)
		close(p->rootfd);
	for (size_t i = 0; i < p->nfiles; i++) {
		free(p->files[i].path);
		cb_elf_free(p->files[i].elf);
	}
	free(p->files);
	json_decref(p->manifest);
	json_decref(p->hparam);
	json_decref(p->hf_config);
	json_decref(p->tokenizer_config);
	json_decref(p->generation_config);
	cb_topmeta_free(&p->top);
	cb_maps_free(p->maps, p->nmaps);
	for (size_t s = 0; s < p->nsubmodels; s++)
		submodel_free(&p->submodels[s]);
	free(p->submodels);
	free(p->memory.blocks);
	free(p->memory.overlaps);
	free(p->root_path);
	free(p->name);
	free(p);
}
