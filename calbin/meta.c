/* calbin/meta.c — the grammar of model_memory_reserved_info.txt (seed §4)
 * and submodel_memory_reserved_info.txt (seed §5).
 *
 * The seed says these files are not YAML and forbids guessing after a
 * loose split (§9 Gate B).  Each line must be exactly one of the forms
 * below, with the conventions where the seed is silent: fields
 * separated by one space, no leading or trailing blank, hex = "0x" and
 * lowercase digits, decimals unsigned without sign, separators or leading
 * zeros, a chip mask = three 8-digit lowercase hex words (high word first),
 * shapes "[d,d,...]" without spaces.  Empty lines are allowed.  Anything
 * else is META_SYNTAX with the line number and the rule it breaks; the form
 * is found from the line's keyword, so a near miss names what is wrong.
 *
 * Top (§4):                                  Submodel (§5):
 *   calcc_ver: VALUE                           model_arch NAME
 *   device<N>: [a,b,...]                       smodel_type NAME
 *   device_memory_required: <dec> MB           n_batch <dec>
 *   model_arch NAME                            calc_mchip NAME
 *   model_type NAME                            calc_utype [a,b,...]
 *   n_batch <dec>                              workload <dec> Byte
 *   max_seq_len <dec>                          ccu_stack_config location <loc>
 *   {dram,sram,sync}_rsvd vaddr <hex> size <dec>   <file> chip <m> <m> <m>
 *   <file> offset <hex> vaddr <hex> size <hex>     <file> location <loc> chip <m> <m> <m>
 *          chip <m> <m> <m>                    icsr <name> offset <hex>
 *                                              {ibuf,obuf} <name> shape [dims] type <dtype>
 *                                                   vaddr <hex> <hex> size <dec>
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "calbin/internal.h"

#define MAX_TOKENS 16

struct toks {
	size_t n;
	const char *s[MAX_TOKENS];
	size_t len[MAX_TOKENS];
};

static bool tok_is(const struct toks *t, size_t i, const char *word)
{
	size_t n = strlen(word);
	return i < t->n && t->len[i] == n && memcmp(t->s[i], word, n) == 0;
}

bool cb_tok_hex(const char *s, size_t n, uint64_t *v)
{
	if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x')
		return false;
	uint64_t x = 0;
	for (size_t i = 2; i < n; i++) {
		char c = s[i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			return false;
		x = x << 4 | d;
	}
	*v = x;
	return true;
}

bool cb_tok_dec(const char *s, size_t n, uint64_t *v)
{
	if (n == 0 || n > 20 || (s[0] == '0' && n > 1))
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (__builtin_mul_overflow(x, 10, &x) ||
		    __builtin_add_overflow(x, (uint64_t)(s[i] - '0'), &x))
			return false;
	}
	*v = x;
	return true;
}

bool cb_tok_mask(const char *s, size_t n, uint32_t *v)
{
	uint64_t x;
	char tmp[11] = "0x";
	if (n != 8)
		return false;
	memcpy(tmp + 2, s, 8);
	if (!cb_tok_hex(tmp, 10, &x))
		return false;
	*v = (uint32_t)x;
	return true;
}

bool cb_tok_dims(const char *s, size_t n, uint32_t *rank, uint64_t dims[CB_MAX_RANK])
{
	if (n < 2 || s[0] != '[' || s[n - 1] != ']')
		return false;
	uint32_t r = 0;
	size_t i = 1;
	if (n == 2) {
		*rank = 0;
		return true;
	}
	while (i < n - 1) {
		size_t j = i;
		while (j < n - 1 && s[j] != ',')
			j++;
		if (r == CB_MAX_RANK || !cb_tok_dec(s + i, j - i, &dims[r]))
			return false;
		r++;
		if (j == n - 1)
			break;
		i = j + 1;
		if (i == n - 1)
			return false;   /* trailing comma */
	}
	*rank = r;
	return true;
}

bool cb_shape_bytes(uint32_t rank, const uint64_t *dims, unsigned bytes, uint64_t *out)
{
	uint64_t x = bytes;
	for (uint32_t i = 0; i < rank; i++)
		if (__builtin_mul_overflow(x, dims[i], &x))
			return false;
	*out = x;
	return true;
}

/* "[a,b,...]" of names [A-Za-z0-9_.-]+: the items, comma-separated. */
static bool tok_list(const char *s, size_t n)
{
	if (n < 3 || s[0] != '[' || s[n - 1] != ']')
		return false;
	bool item = false;
	for (size_t i = 1; i < n - 1; i++) {
		char c = s[i];
		if (c == ',') {
			if (!item)
				return false;
			item = false;
		} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			   c == '_' || c == '.' || c == '-') {
			item = true;
		} else {
			return false;
		}
	}
	return item;
}

static char *dup_tok(struct cb_meta_out *m, const struct toks *t, size_t i)
{
	char *s = strndup(t->s[i], t->len[i]);
	if (!s)
		m->oom = true;
	return s;
}

static void syntax(struct cb_meta_out *m, uint64_t lineno, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void syntax(struct cb_meta_out *m, uint64_t lineno, const char *key, const char *fmt, ...)
{
	if (m->syntax_findings >= CB_MAX_FINDINGS_PER_FILE) {
		m->syntax_dropped++;
		return;
	}
	m->syntax_findings++;
	char *ev = NULL;
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&ev, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		m->oom = true;
		return;
	}
	CB_ERR(m->r, 'B', "META_SYNTAX", m->file, lineno, key, "seed §%s: %s",
	       m->kind == CB_META_TOP ? "4" : "5", ev);
	free(ev);
}

static void duplicate(struct cb_meta_out *m, uint64_t lineno, const char *key, uint64_t first)
{
	if (first)
		CB_ERR(m->r, 'B', "META_DUPLICATE", m->file, lineno, key,
		       "seed §%s: '%s' was already given on line %" PRIu64 "; this line is ignored",
		       m->kind == CB_META_TOP ? "4" : "5", key, first);
	else
		CB_ERR(m->r, 'B', "META_DUPLICATE", m->file, lineno, key,
		       "seed §%s: '%s' was already given; this line is ignored",
		       m->kind == CB_META_TOP ? "4" : "5", key);
}

/* The token as a quoted, bounded string for evidence. */
#define TOKF "'%.*s'"
#define TOKA(t, i) (int)((t)->len[i] > 64 ? 64 : (t)->len[i]), (t)->s[i]

static bool want_tokens(struct cb_meta_out *m, const struct toks *t, uint64_t lineno,
			const char *key, size_t n, const char *form)
{
	if (t->n == n)
		return true;
	if (t->n > n)
		syntax(m, lineno, key, "%s has %zu fields, not %zu: extra field " TOKF " (form: %s)",
		       key, t->n, n, TOKA(t, n), form);
	else
		syntax(m, lineno, key, "%s has %zu fields, not %zu (form: %s)", key, t->n, n, form);
	return false;
}

static bool want_word(struct cb_meta_out *m, const struct toks *t, uint64_t lineno,
		      const char *key, size_t i, const char *word, const char *form)
{
	if (tok_is(t, i, word))
		return true;
	syntax(m, lineno, key, "field %zu of %s is " TOKF ", not '%s' (form: %s)", i + 1, key,
	       TOKA(t, i), word, form);
	return false;
}

static bool want_hex(struct cb_meta_out *m, const struct toks *t, uint64_t lineno,
		     const char *key, size_t i, const char *what, uint64_t *v)
{
	if (cb_tok_hex(t->s[i], t->len[i], v))
		return true;
	syntax(m, lineno, key, "%s " TOKF " is not hex written 0x and lowercase digits (at most 16)",
	       what, TOKA(t, i));
	return false;
}

static bool want_dec(struct cb_meta_out *m, const struct toks *t, uint64_t lineno,
		     const char *key, size_t i, const char *what, uint64_t *v)
{
	if (cb_tok_dec(t->s[i], t->len[i], v))
		return true;
	uint64_t h;
	if (cb_tok_hex(t->s[i], t->len[i], &h))
		syntax(m, lineno, key, "%s " TOKF " is hex where the form has a decimal", what,
		       TOKA(t, i));
	else
		syntax(m, lineno, key, "%s " TOKF " is not an unsigned decimal (no sign, separators "
		       "or leading zeros)", what, TOKA(t, i));
	return false;
}

static bool want_mask(struct cb_meta_out *m, const struct toks *t, uint64_t lineno,
		      const char *key, size_t i, uint32_t mask[3])
{
	for (size_t k = 0; k < 3; k++)
		if (!cb_tok_mask(t->s[i + k], t->len[i + k], &mask[k])) {
			syntax(m, lineno, key, "chip mask word %zu " TOKF " is not 8 lowercase hex "
			       "digits without 0x", k + 1, TOKA(t, i + k));
			return false;
		}
	return true;
}

static bool want_name(struct cb_meta_out *m, const struct toks *t, uint64_t lineno,
		      const char *key, size_t i)
{
	for (size_t k = 0; k < t->len[i]; k++) {
		unsigned char c = (unsigned char)t->s[i][k];
		if (c <= 0x20 || c == 0x7f) {
			syntax(m, lineno, key, "%s: a control character in " TOKF, key, TOKA(t, i));
			return false;
		}
	}
	return true;
}

/* A single-valued text field: set once. */
static void set_text(struct cb_meta_out *m, const struct toks *t, uint64_t lineno,
		     const char *key, char **field, uint64_t *line_field)
{
	uint64_t dummy = 0;
	if (!line_field)
		line_field = &dummy;
	if (!want_tokens(m, t, lineno, key, 2, "KEY VALUE") || !want_name(m, t, lineno, key, 1))
		return;
	if (*field) {
		duplicate(m, lineno, key, *line_field);
		return;
	}
	*field = dup_tok(m, t, 1);
	*line_field = lineno;
}

static void set_dec(struct cb_meta_out *m, const struct toks *t, uint64_t lineno,
		    const char *key, bool *has, uint64_t *field, uint64_t *line_field)
{
	uint64_t v;
	if (!want_tokens(m, t, lineno, key, 2, "KEY <dec>") || !want_dec(m, t, lineno, key, 1, key, &v))
		return;
	if (*has) {
		duplicate(m, lineno, key, *line_field);
		return;
	}
	*field = v;
	*has = true;
	*line_field = lineno;
}

static bool grow(struct cb_meta_out *m, void **arr, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? *cap * 2 : 16;
	void *x = reallocarray(*arr, c, size);
	if (!x) {
		m->oom = true;
		return false;
	}
	*arr = x;
	*cap = c;
	return true;
}

/* ---- top (§4) ------------------------------------------------------------ */

static void top_reservation(struct cb_meta_out *m, const struct toks *t, uint64_t lineno,
			    enum cb_domain d, const char *key)
{
	static const char form[] = "<domain>_rsvd vaddr <hex> size <dec>";
	struct cb_reservation *res = &m->res[d];
	if (!want_tokens(m, t, lineno, key, 5, form) || !want_word(m, t, lineno, key, 1, "vaddr", form) ||
	    !want_word(m, t, lineno, key, 3, "size", form))
		return;
	uint64_t vaddr, size;
	if (!want_hex(m, t, lineno, key, 2, "vaddr", &vaddr) ||
	    !want_dec(m, t, lineno, key, 4, "size (§4.2: decimal)", &size))
		return;
	if (res->present) {
		duplicate(m, lineno, key, res->line);
		return;
	}
	*res = (struct cb_reservation){.present = true, .vaddr = vaddr, .size = size, .line = lineno};
}

static void top_map(struct cb_meta_out *m, const struct toks *t, uint64_t lineno)
{
	static const char form[] = "<file> offset <hex> vaddr <hex> size <hex> chip <m95_64> "
				   "<m63_32> <m31_0>";
	const char *key = "map";
	if (!want_tokens(m, t, lineno, key, 11, form) || !want_word(m, t, lineno, key, 3, "vaddr", form) ||
	    !want_word(m, t, lineno, key, 5, "size", form) ||
	    !want_word(m, t, lineno, key, 7, "chip", form) || !want_name(m, t, lineno, key, 0))
		return;
	struct cb_map x = {.line = lineno, .file_index = -1, .domain = -1};
	if (!want_hex(m, t, lineno, key, 2, "offset", &x.offset) ||
	    !want_hex(m, t, lineno, key, 4, "vaddr", &x.vaddr) ||
	    !want_hex(m, t, lineno, key, 6, "size (§4.3: hex)", &x.size) ||
	    !want_mask(m, t, lineno, key, 8, x.mask))
		return;
	if (!grow(m, (void **)&m->maps, &m->capmaps, m->nmaps, sizeof *m->maps))
		return;
	if (!(x.file = dup_tok(m, t, 0)))
		return;
	m->maps[m->nmaps++] = x;
}

/* "device<N>:" */
static bool is_device_key(const struct toks *t)
{
	size_t n = t->len[0];
	const char *s = t->s[0];
	uint64_t v;
	return n > 7 && memcmp(s, "device", 6) == 0 && s[n - 1] == ':' && cb_tok_dec(s + 6, n - 7, &v);
}

static void top_device(struct cb_meta_out *m, const struct toks *t, uint64_t lineno)
{
	const char *key = "device";
	if (!want_tokens(m, t, lineno, key, 2, "device<N>: [a,b,...]"))
		return;
	if (!tok_list(t->s[1], t->len[1])) {
		syntax(m, lineno, key, "device list " TOKF " is not [name,...] without spaces",
		       TOKA(t, 1));
		return;
	}
	struct cb_topmeta *top = m->top;
	if (!top->line_device)
		top->line_device = lineno;
	const char *s = t->s[1] + 1, *end = t->s[1] + t->len[1] - 1;
	while (s < end) {
		const char *c = memchr(s, ',', (size_t)(end - s));
		if (!c)
			c = end;
		char **d = reallocarray(top->devices, top->ndevices + 1, sizeof *d);
		if (!d) {
			m->oom = true;
			return;
		}
		top->devices = d;
		if (!(d[top->ndevices] = strndup(s, (size_t)(c - s)))) {
			m->oom = true;
			return;
		}
		top->ndevices++;
		s = c + 1;
	}
}

static void top_line(struct cb_meta_out *m, const struct toks *t, uint64_t lineno)
{
	struct cb_topmeta *top = m->top;
	if (tok_is(t, 0, "calcc_ver:")) {
		set_text(m, t, lineno, "calcc_ver", &top->calcc_ver, &top->line_calcc_ver);
	} else if (is_device_key(t)) {
		top_device(m, t, lineno);
	} else if (tok_is(t, 0, "device_memory_required:")) {
		const char *key = "device_memory_required";
		uint64_t v;
		if (!want_tokens(m, t, lineno, key, 3, "device_memory_required: <dec> MB") ||
		    !want_dec(m, t, lineno, key, 1, key, &v) ||
		    !want_word(m, t, lineno, key, 2, "MB", "device_memory_required: <dec> MB"))
			return;
		if (top->has_mem_required) {
			duplicate(m, lineno, key, top->line_mem_required);
			return;
		}
		top->mem_required_mb = v;
		top->has_mem_required = true;
		top->line_mem_required = lineno;
	} else if (tok_is(t, 0, "model_arch")) {
		set_text(m, t, lineno, "model_arch", &top->model_arch, &top->line_model_arch);
	} else if (tok_is(t, 0, "model_type")) {
		set_text(m, t, lineno, "model_type", &top->model_type, &top->line_model_type);
	} else if (tok_is(t, 0, "n_batch")) {
		set_dec(m, t, lineno, "n_batch", &top->has_n_batch, &top->n_batch, &top->line_n_batch);
	} else if (tok_is(t, 0, "max_seq_len")) {
		set_dec(m, t, lineno, "max_seq_len", &top->has_max_seq, &top->max_seq_len,
			&top->line_max_seq);
	} else if (tok_is(t, 0, "dram_rsvd")) {
		top_reservation(m, t, lineno, CB_DOMAIN_DRAM, "dram_rsvd");
	} else if (tok_is(t, 0, "sram_rsvd")) {
		top_reservation(m, t, lineno, CB_DOMAIN_SRAM, "sram_rsvd");
	} else if (tok_is(t, 0, "sync_rsvd")) {
		top_reservation(m, t, lineno, CB_DOMAIN_SYNC, "sync_rsvd");
	} else if (tok_is(t, 1, "offset")) {
		top_map(m, t, lineno);
	} else {
		syntax(m, lineno, NULL, "no form of model_memory_reserved_info.txt starts with " TOKF,
		       TOKA(t, 0));
	}
}

/* ---- submodel (§5) --------------------------------------------------------- */

static void sub_decl(struct cb_meta_out *m, const struct toks *t, uint64_t lineno, bool elf)
{
	static const char cform[] = "<file> chip <m95_64> <m63_32> <m31_0>";
	static const char eform[] = "<file> location <dram|sram> chip <m95_64> <m63_32> <m31_0>";
	const char *key = elf ? "elf" : "command";
	const char *form = elf ? eform : cform;
	size_t mask_at = elf ? 4 : 2;
	if (!want_tokens(m, t, lineno, key, elf ? 7 : 5, form) || !want_name(m, t, lineno, key, 0) ||
	    (elf && (!want_word(m, t, lineno, key, 3, "chip", form) || !want_name(m, t, lineno, key, 2))))
		return;
	struct cb_decl d = {.elf = elf, .line = lineno, .file_index = -1};
	if (!want_mask(m, t, lineno, key, mask_at, d.mask))
		return;
	struct cb_submeta *s = m->sub;
	if (!grow(m, (void **)&s->decls, &m->capdecls, s->ndecls, sizeof *s->decls))
		return;
	if (!(d.file = dup_tok(m, t, 0)) || (elf && !(d.location = dup_tok(m, t, 2)))) {
		free(d.file);
		return;
	}
	s->decls[s->ndecls++] = d;
}

static void sub_icsr(struct cb_meta_out *m, const struct toks *t, uint64_t lineno)
{
	static const char form[] = "icsr <name> offset <hex>";
	struct cb_icsr x = {.line = lineno};
	if (!want_tokens(m, t, lineno, "icsr", 4, form) || !want_name(m, t, lineno, "icsr", 1) ||
	    !want_word(m, t, lineno, "icsr", 2, "offset", form) ||
	    !want_hex(m, t, lineno, "icsr", 3, "offset", &x.offset))
		return;
	struct cb_submeta *s = m->sub;
	if (!grow(m, (void **)&s->icsrs, &m->capicsrs, s->nicsrs, sizeof *s->icsrs) ||
	    !(x.name = dup_tok(m, t, 1)))
		return;
	s->icsrs[s->nicsrs++] = x;
}

static void sub_buf(struct cb_meta_out *m, const struct toks *t, uint64_t lineno, bool out)
{
	static const char form[] = "ibuf|obuf <name> shape [dims] type <dtype> vaddr <ping> <pong> "
				   "size <dec>";
	const char *key = out ? "obuf" : "ibuf";
	if (!want_tokens(m, t, lineno, key, 11, form) || !want_name(m, t, lineno, key, 1) ||
	    !want_word(m, t, lineno, key, 2, "shape", form) ||
	    !want_word(m, t, lineno, key, 4, "type", form) ||
	    !want_word(m, t, lineno, key, 6, "vaddr", form) ||
	    !want_word(m, t, lineno, key, 9, "size", form) || !want_name(m, t, lineno, key, 5))
		return;
	struct cb_buf b = {.out = out, .line = lineno};
	if (!cb_tok_dims(t->s[3], t->len[3], &b.rank, b.dims)) {
		syntax(m, lineno, key, "shape " TOKF " is not [d,d,...] of decimals without spaces "
		       "(at most %d dims)", TOKA(t, 3), CB_MAX_RANK);
		return;
	}
	if (!want_hex(m, t, lineno, key, 7, "ping vaddr", &b.ping) ||
	    !want_hex(m, t, lineno, key, 8, "pong vaddr", &b.pong) ||
	    !want_dec(m, t, lineno, key, 10, "size (§5.3: decimal)", &b.size))
		return;
	struct cb_submeta *s = m->sub;
	if (!grow(m, (void **)&s->bufs, &m->capbufs, s->nbufs, sizeof *s->bufs))
		return;
	if (!(b.name = dup_tok(m, t, 1)) || !(b.dtype = dup_tok(m, t, 5))) {
		free(b.name);
		return;
	}
	b.dtype_bytes = cb_dtype_bytes(b.dtype);
	s->bufs[s->nbufs++] = b;
}

static void sub_line(struct cb_meta_out *m, const struct toks *t, uint64_t lineno)
{
	struct cb_submeta *s = m->sub;
	if (tok_is(t, 0, "model_arch")) {
		set_text(m, t, lineno, "model_arch", &s->model_arch, &s->line_model_arch);
	} else if (tok_is(t, 0, "smodel_type")) {
		set_text(m, t, lineno, "smodel_type", &s->smodel_type, &s->line_smodel_type);
	} else if (tok_is(t, 0, "n_batch")) {
		set_dec(m, t, lineno, "n_batch", &s->has_n_batch, &s->n_batch, &s->line_n_batch);
	} else if (tok_is(t, 0, "calc_mchip")) {
		set_text(m, t, lineno, "calc_mchip", &s->calc_mchip, NULL);
	} else if (tok_is(t, 0, "calc_utype")) {
		if (!want_tokens(m, t, lineno, "calc_utype", 2, "calc_utype [a,b,...]"))
			return;
		if (!tok_list(t->s[1], t->len[1])) {
			syntax(m, lineno, "calc_utype", "calc_utype " TOKF " is not [name,...] without "
			       "spaces", TOKA(t, 1));
			return;
		}
		if (s->calc_utype) {
			duplicate(m, lineno, "calc_utype", 0);
			return;
		}
		s->calc_utype = dup_tok(m, t, 1);
	} else if (tok_is(t, 0, "workload")) {
		uint64_t v;
		if (!want_tokens(m, t, lineno, "workload", 3, "workload <dec> Byte") ||
		    !want_dec(m, t, lineno, "workload", 1, "workload", &v) ||
		    !want_word(m, t, lineno, "workload", 2, "Byte", "workload <dec> Byte"))
			return;
		if (s->has_workload) {
			duplicate(m, lineno, "workload", 0);
			return;
		}
		s->workload = v;
		s->has_workload = true;
	} else if (tok_is(t, 0, "ccu_stack_config")) {
		static const char form[] = "ccu_stack_config location <dram|sram>";
		if (!want_tokens(m, t, lineno, "ccu_stack_config", 3, form) ||
		    !want_word(m, t, lineno, "ccu_stack_config", 1, "location", form) ||
		    !want_name(m, t, lineno, "ccu_stack_config", 2))
			return;
		if (s->ccu_stack_location) {
			duplicate(m, lineno, "ccu_stack_config", 0);
			return;
		}
		s->ccu_stack_location = dup_tok(m, t, 2);
	} else if (tok_is(t, 0, "icsr")) {
		sub_icsr(m, t, lineno);
	} else if (tok_is(t, 0, "ibuf")) {
		sub_buf(m, t, lineno, false);
	} else if (tok_is(t, 0, "obuf")) {
		sub_buf(m, t, lineno, true);
	} else if (tok_is(t, 1, "chip")) {
		sub_decl(m, t, lineno, false);
	} else if (tok_is(t, 1, "location")) {
		sub_decl(m, t, lineno, true);
	} else {
		syntax(m, lineno, NULL, "no form of submodel_memory_reserved_info.txt starts with "
		       TOKF, TOKA(t, 0));
	}
}

void cb_meta_line(struct cb_meta_out *m, const char *line, size_t len, uint64_t lineno)
{
	if (len == 0)
		return;
	struct toks t = {0};
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if (c == '\r') {
			syntax(m, lineno, NULL, "a carriage return: lines end with LF only");
			return;
		}
		if (c < 0x20 || c == 0x7f) {
			syntax(m, lineno, NULL, "control character 0x%02x at column %zu", c, i + 1);
			return;
		}
	}
	if (line[0] == ' ' || line[len - 1] == ' ') {
		syntax(m, lineno, NULL, "a leading or trailing space");
		return;
	}
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && line[j] != ' ')
			j++;
		if (j == i) {
			syntax(m, lineno, NULL, "two spaces in a row at column %zu: fields are separated "
			       "by one space", i);
			return;
		}
		if (t.n == MAX_TOKENS) {
			syntax(m, lineno, NULL, "more than %d fields", MAX_TOKENS);
			return;
		}
		t.s[t.n] = line + i;
		t.len[t.n++] = j - i;
		i = j + 1;
	}
	if (m->kind == CB_META_TOP)
		top_line(m, &t, lineno);
	else
		sub_line(m, &t, lineno);
}

static void missing(struct cb_meta_out *m, const char *key, const char *why)
{
	CB_ERR(m->r, 'B', "META_KEY_MISSING", m->file, 0, key, "seed §%s: no '%s' line%s",
	       m->kind == CB_META_TOP ? "4" : "5", key, why);
}

void cb_meta_finish(struct cb_meta_out *m)
{
	if (m->syntax_dropped)
		CB_ERR(m->r, 'B', "META_SYNTAX", m->file, 0, NULL,
		       "%zu more lines do not match a form (not listed one by one)", m->syntax_dropped);
	if (m->kind == CB_META_TOP) {
		struct cb_topmeta *t = m->top;
		if (!t->calcc_ver)
			missing(m, "calcc_ver", " (§4.1: must be non-empty)");
		if (!t->ndevices)
			missing(m, "device0", " (§4.1: the compatible chip types)");
		if (!t->model_arch)
			missing(m, "model_arch", "");
		if (!t->model_type)
			missing(m, "model_type", "");
		if (!t->has_n_batch)
			missing(m, "n_batch", "");
		if (!t->has_max_seq)
			missing(m, "max_seq_len", "");
		if (!m->res[CB_DOMAIN_DRAM].present)
			missing(m, "dram_rsvd", " (§4.2)");
		if (!m->res[CB_DOMAIN_SRAM].present)
			missing(m, "sram_rsvd", " (§4.2)");
		if (!m->nmaps)
			missing(m, "map", " (§4.3: no parameter-map line)");
	} else {
		struct cb_submeta *s = m->sub;
		if (!s->model_arch)
			missing(m, "model_arch", "");
		if (!s->smodel_type)
			missing(m, "smodel_type", "");
		if (!s->has_n_batch)
			missing(m, "n_batch", "");
	}
	if (m->oom)
		m->r->oom = true;
}

void cb_topmeta_free(struct cb_topmeta *t)
{
	free(t->calcc_ver);
	free(t->model_arch);
	free(t->model_type);
	for (size_t i = 0; i < t->ndevices; i++)
		free(t->devices[i]);
	free(t->devices);
	memset(t, 0, sizeof *t);
}

void cb_submeta_free(struct cb_submeta *s)
{
	free(s->model_arch);
	free(s->smodel_type);
	free(s->calc_mchip);
	free(s->calc_utype);
	free(s->ccu_stack_location);
	for (size_t i = 0; i < s->ndecls; i++) {
		free(s->decls[i].file);
		free(s->decls[i].location);
	}
	free(s->decls);
	for (size_t i = 0; i < s->nicsrs; i++)
		free(s->icsrs[i].name);
	free(s->icsrs);
	for (size_t i = 0; i < s->nbufs; i++) {
		free(s->bufs[i].name);
		free(s->bufs[i].dtype);
	}
	free(s->bufs);
	memset(s, 0, sizeof *s);
}

void cb_maps_free(struct cb_map *maps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(maps[i].file);
	free(maps);
}
