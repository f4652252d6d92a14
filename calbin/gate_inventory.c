/* calbin/gate_inventory.c — Gate A: required files, empty files, counts,
 * unknown files (seed §2, §9 Gate A "required files -> size>0 -> 文件数量/
 * 未知文件报告").
 *
 * What is required comes from §2's "生产是否必需" column: required for
 * production (and for this static acceptance: the op I/O YAML) is an
 * error when missing or empty; runner, diagnostics, profiling and service
 * files are warnings (service files with the WARNING_SERVICE class).  The
 * per-chip and per-core files follow device_cfg.chip_nums and calcore_num.
 * File counts are reported, never judged (the seed's header says 67 files,
 * its rows add up to 68). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calbin/internal.h"

struct inv {
	struct cb_build *b;
	bool *expected;        /* [nfiles] */
};

enum need { REQUIRED, OPTIONAL, SERVICE };

static void expect(struct inv *v, const char *path, enum need need, const char *what)
{
	struct cb_package *p = v->b->p;
	int i = cb_package_find(p, path);
	struct nf_report *r = v->b->r;
	if (i >= 0)
		v->expected[i] = true;
	const struct cb_file *f = cb_file_at(p, i);
	if (!f) {
		if (need == REQUIRED)
			CB_ERR(r, 'A', "FILE_MISSING", path, 0, NULL,
			       "seed §2, §10: %s is required and missing", what);
		else
			CB_WARN(r, 'A', need == SERVICE ? NF_CLASS_WARNING_SERVICE : NF_CLASS_NONE,
				"FILE_OPTIONAL_MISSING", path, 0, NULL, "seed §2%s: %s is missing",
				need == SERVICE ? ", §8" : "", what);
		return;
	}
	if (f->escapes)
		return;     /* the walk reported it */
	if (!S_ISREG(f->type)) {
		CB_ERR(r, 'A', "PKG_NOT_REGULAR", path, 0, NULL, "seed §2: %s is not a regular file",
		       what);
		return;
	}
	if (f->size == 0) {
		if (need == REQUIRED)
			CB_ERR(r, 'A', "FILE_EMPTY", path, 0, NULL, "seed §2, §10: %s is empty", what);
		else
			CB_WARN(r, 'A', need == SERVICE ? NF_CLASS_WARNING_SERVICE : NF_CLASS_NONE,
				"FILE_OPTIONAL_EMPTY", path, 0, NULL, "seed §2: %s is empty", what);
	}
}

static void expectf(struct inv *v, enum need need, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void expectf(struct inv *v, enum need need, const char *what, const char *fmt, ...)
{
	char *path = NULL;
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&path, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		v->b->r->oom = true;
		return;
	}
	expect(v, path, need, what);
	free(path);
}

/* Any file of the directory `dir` whose name ends with suffix. */
static int find_suffix(const struct cb_package *p, const char *dir, const char *suffix)
{
	size_t ld = strlen(dir), ls = strlen(suffix);
	for (size_t i = 0; i < p->nfiles; i++) {
		const char *s = p->files[i].path;
		size_t n = strlen(s);
		if (n > ld + 1 + ls && strncmp(s, dir, ld) == 0 && s[ld] == '/' &&
		    !strchr(s + ld + 1, '/') && strcmp(s + n - ls, suffix) == 0)
			return (int)i;
	}
	return -1;
}

static bool with_c_oplib(const struct cb_build *b)
{
	const json_t *v = json_object_get(json_object_get(b->cfg[0], "calcc_env_cfg"), "with_c_oplib");
	return !json_is_false(v);
}

static void submodel_files(struct inv *v, const struct cb_submodel *s)
{
	const struct cb_package *p = v->b->p;
	const char *d = s->dir;
	expectf(v, REQUIRED, "the submodel metadata (§5)", "%s/submodel_memory_reserved_info.txt", d);
	expectf(v, REQUIRED, "the op I/O metadata (§6, needed by static acceptance)",
		"%s/%s_op_io_buf_ptr.yaml", d, d);
	for (unsigned n = 0; n < p->chips; n++) {
		for (unsigned c = 0; c < p->cores; c++)
			expectf(v, REQUIRED, "a CCU ELF (§2: 2 core x 2 chip per submodel)",
				"%s/ccu%u_chip%u.elf", d, c, n);
		static const char *const eng[] = {"cpu", "pld"};
		static const char *const pp[] = {"ping", "pong"};
		for (int e = 0; e < 2; e++)
			for (int k = 0; k < 2; k++) {
				expectf(v, REQUIRED, "a command binary (§2)", "%s/%s_chip%u_%s.bin", d,
					eng[e], n, pp[k]);
				expectf(v, OPTIONAL, "a command text dump (§2: needed for diagnostics)",
					"%s/%s_chip%u_%s.txt", d, eng[e], n, pp[k]);
			}
		expectf(v, OPTIONAL, "a per-chip op order (§2: needed for profiling/partition)",
			"%s/%s.chip%u.profparts", d, d, n);
	}
	if (s->kind == CB_SUB_PREFILL && with_c_oplib(v->b)) {
		static const char *const isa[] = {"_riscv.so", "_x86.so"};
		for (int k = 0; k < 2; k++) {
			int i = find_suffix(p, d, isa[k]);
			if (i >= 0) {
				for (size_t j = 0; j < p->nfiles; j++)
					if (p->files[j].kind == CB_KIND_HELPER_SO && p->files[j].submodel >= 0 &&
					    &p->submodels[p->files[j].submodel] == s &&
					    p->files[j].isa == (k ? CB_ISA_X86 : CB_ISA_RISCV))
						expect(v, p->files[j].path, REQUIRED, "a CPU helper SO (§2)");
			} else {
				expectf(v, REQUIRED, "a CPU helper SO (§2: with_c_oplib is true)",
					"%s/*%s", d, isa[k]);
			}
		}
	}
}

static void submodel_dirs(struct inv *v)
{
	const struct cb_package *p = v->b->p;
	size_t n[2] = {0, 0};
	for (size_t s = 0; s < p->nsubmodels; s++)
		n[p->submodels[s].kind]++;
	static const char *const kind[] = {"prefill", "decode"};
	for (int k = 0; k < 2; k++)
		if (n[k] == 0)
			CB_ERR(v->b->r, 'A', "FILE_MISSING", NULL, 0, NULL,
			       "seed §2, §10: no %s submodel directory '%s_%s_<k>/'", kind[k], p->name,
			       kind[k]);
	if (n[0] > 1 || n[1] > 1)
		CB_ERR(v->b->r, 'B', "SUBMODEL_COUNT", NULL, 0, NULL,
		       "seed §10: exactly one prefill and one decode submodel directory are required; "
		       "the package has %zu prefill and %zu decode", n[0], n[1]);
	for (size_t s = 0; s < p->nsubmodels; s++)
		submodel_files(v, &p->submodels[s]);
}

static void counts(struct inv *v)
{
	const struct cb_package *p = v->b->p;
	size_t by[CB_KIND_COUNT] = {0}, files = 0;
	for (size_t i = 0; i < p->nfiles; i++) {
		by[p->files[i].kind]++;
		files += !S_ISDIR(p->files[i].type);
	}
	char buf[1024];
	size_t at = 0;
	buf[0] = '\0';
	for (int k = 0; k < CB_KIND_COUNT && at < sizeof buf; k++)
		if (by[k] && k != CB_KIND_DIR && k != CB_KIND_SUBMODEL_DIR)
			at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s %zu", at ? ", " : "",
					       cb_kind_name((enum cb_kind)k), by[k]);
	CB_INFO(v->b->r, 'A', "FILE_COUNTS", NULL, 0, NULL,
		"seed §2, §9 Gate A: %zu files in %zu submodel directories (reported, not judged: "
		"the seed's sample has 67): %s", files, by[CB_KIND_SUBMODEL_DIR], buf);
}

void cb_gate_inventory(struct cb_build *b)
{
	struct cb_package *p = b->p;
	struct inv v = {.b = b, .expected = calloc(p->nfiles ? p->nfiles : 1, sizeof(bool))};
	if (!v.expected) {
		b->r->oom = true;
		return;
	}
	char *manifest = NULL;
	if (p->manifest_index >= 0)
		manifest = strdup(p->files[p->manifest_index].path);
	else if (asprintf(&manifest, "%s.yaml", p->name) < 0)
		manifest = NULL;
	if (manifest)
		expect(&v, manifest, REQUIRED, "the root manifest <model>.yaml (§3)");
	free(manifest);
	expect(&v, "model_memory_reserved_info.txt", REQUIRED, "the runtime metadata (§4)");
	expect(&v, "hparam.yaml", OPTIONAL, "the runtime test parameters (§2: runner/golden need it)");
	for (unsigned n = 0; n < p->chips; n++)
		expectf(&v, REQUIRED, "a parameter block (§2)", "param_blk%u.bin", n);
	expect(&v, "version.py", OPTIONAL, "the version script (§2: diagnostics)");
	static const char *const tok[] = {
		"tokenizer.json", "tokenizer_config.json", "config.json", "generation_config.json",
		"merges.txt", "vocab.json",
	};
	for (size_t k = 0; k < sizeof tok / sizeof *tok; k++)
		expectf(&v, SERVICE, "a tokenizer/config file the service must hash and freeze (§8)",
			"__Tokenizer/%s", tok[k]);
	int gguf = find_suffix(p, "__Tokenizer", ".gguf");
	if (gguf >= 0)
		expect(&v, p->files[gguf].path, SERVICE, "the vocab GGUF (§8)");
	else
		expect(&v, "__Tokenizer/*.gguf", SERVICE, "the vocab GGUF (§8)");
	submodel_dirs(&v);

	size_t unknown = 0;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct cb_file *f = &p->files[i];
		if (f->kind != CB_KIND_UNKNOWN || v.expected[i] || f->escapes)
			continue;
		if (unknown++ < CB_MAX_FINDINGS_PER_FILE)
			CB_INFO(b->r, 'A', "FILE_UNKNOWN", f->path, 0, NULL,
				"seed §9 Gate A: no convention of the package names this %s",
				S_ISDIR(f->type) ? "directory" : "file");
	}
	if (unknown > CB_MAX_FINDINGS_PER_FILE)
		CB_INFO(b->r, 'A', "FILE_UNKNOWN", NULL, 0, NULL, "%zu more unknown entries",
			unknown - CB_MAX_FINDINGS_PER_FILE);
	counts(&v);
	free(v.expected);
}
