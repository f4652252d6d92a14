/* calbin/opio.c — the op I/O YAML of a submodel (seed §6).
 *
 * Each top-level key is one op instance; each of its args_N / outs_N is the
 * four-tuple [device_virtual_address, shape_tuple, PrimitiveType,
 * producer_or_role] (issue 12 conventions: the address an integer — YAML
 * hex is fine —, the shape a list of non-negative integers, the type and
 * the role strings).  Anything else is OPIO_SYNTAX at its line.  const_N is
 * a constant/weight, input_N a model input, anything else an activation
 * (§6 解析规则).  A PrimitiveType outside the dtype table is
 * OP_DTYPE_UNKNOWN (Gate D): its bytes are unknown, never 0, and the
 * capacity report is refused (§6, §10). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "calbin/internal.h"

unsigned cb_dtype_bytes(const char *name)
{
	static const struct {
		const char *name;
		unsigned bytes;
	} table[] = {
		{"bfloat16", 2}, {"float16", 2}, {"float32", 4}, {"int32", 4},
		{"int8", 1},     {"uint8", 1},   {"int64", 8},   {"bool", 1},
	};
	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof table / sizeof *table; i++)
		if (strcmp(table[i].name, name) == 0)
			return table[i].bytes;
	return 0;
}

/* "args_N" / "outs_N" with N decimal. */
static bool arg_key(const char *k, bool *out, uint32_t *index)
{
	uint64_t n;
	if (strncmp(k, "args_", 5) == 0)
		*out = false;
	else if (strncmp(k, "outs_", 5) == 0)
		*out = true;
	else
		return false;
	if (!cb_tok_dec(k + 5, strlen(k + 5), &n) || n > UINT32_MAX)
		return false;
	*index = (uint32_t)n;
	return true;
}

static bool role_numbered(const char *role, const char *prefix)
{
	size_t n = strlen(prefix);
	uint64_t v;
	return strncmp(role, prefix, n) == 0 && cb_tok_dec(role + n, strlen(role + n), &v);
}

static bool vaddr_of(const json_t *v, uint64_t *out)
{
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	const char *s = json_string_value(v);
	return s && cb_tok_hex(s, strlen(s), out);  /* above int64: kept as text */
}

struct opio_ctx {
	struct cb_build *b;
	const struct cb_yaml_doc *doc;
	const char *file;
	size_t findings, dropped;
	size_t dtype_findings, dtype_dropped;
};

static void bad(struct opio_ctx *c, uint64_t line, const char *op, const char *arg,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void bad(struct opio_ctx *c, uint64_t line, const char *op, const char *arg,
		const char *fmt, ...)
{
	if (c->findings >= CB_MAX_FINDINGS_PER_FILE) {
		c->dropped++;
		return;
	}
	c->findings++;
	char *ev = NULL, *key = NULL;
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&ev, fmt, ap);
	va_end(ap);
	if (rc < 0 || asprintf(&key, "%s%s%s", op, arg ? "." : "", arg ? arg : "") < 0) {
		if (rc >= 0)
			free(ev);
		c->b->r->oom = true;
		return;
	}
	CB_ERR(c->b->r, 'B', "OPIO_SYNTAX", c->file, line, key, "seed §6: %s", ev);
	free(ev);
	free(key);
}

static bool tensor_of(struct opio_ctx *c, const char *op, const char *arg, const json_t *v,
		      uint64_t line, struct cb_tensor *t)
{
	if (!json_is_array(v) || json_array_size(v) != 4) {
		bad(c, line, op, arg, "%s is not the four-tuple [vaddr, [dims], dtype, "
		    "producer_or_role]", arg);
		return false;
	}
	const json_t *shape = json_array_get(v, 1);
	const char *dtype = json_string_value(json_array_get(v, 2));
	const char *role = json_string_value(json_array_get(v, 3));
	if (!vaddr_of(json_array_get(v, 0), &t->vaddr)) {
		bad(c, line, op, arg, "%s: the address is not a non-negative integer", arg);
		return false;
	}
	if (!json_is_array(shape) || json_array_size(shape) > CB_MAX_RANK) {
		bad(c, line, op, arg, "%s: the shape is not a list of at most %d integers", arg,
		    CB_MAX_RANK);
		return false;
	}
	t->rank = (uint32_t)json_array_size(shape);
	for (uint32_t i = 0; i < t->rank; i++) {
		const json_t *d = json_array_get(shape, i);
		if (!json_is_integer(d) || json_integer_value(d) < 0) {
			bad(c, line, op, arg, "%s: shape dimension %u is not a non-negative integer",
			    arg, i);
			return false;
		}
		t->dims[i] = (uint64_t)json_integer_value(d);
	}
	if (!dtype || !*dtype || !role || !*role) {
		bad(c, line, op, arg, "%s: the type and the producer_or_role are not non-empty "
		    "strings", arg);
		return false;
	}
	t->dtype = dtype;
	t->role = role;
	t->dtype_bytes = cb_dtype_bytes(dtype);
	t->klass = role_numbered(role, "const_") ? CB_TENSOR_CONST
		   : role_numbered(role, "input_") ? CB_TENSOR_INPUT : CB_TENSOR_ACTIVATION;
	t->line = line;
	if (t->dtype_bytes && !cb_shape_bytes(t->rank, t->dims, t->dtype_bytes, &t->bytes)) {
		bad(c, line, op, arg, "%s: product(shape) * %u overflows 64 bits", arg, t->dtype_bytes);
		return false;
	}
	if (!t->dtype_bytes) {
		if (c->dtype_findings < CB_MAX_FINDINGS_PER_FILE) {
			c->dtype_findings++;
			char *key = NULL;
			if (asprintf(&key, "%s.%s", op, arg) < 0) {
				c->b->r->oom = true;
			} else {
				CB_ERR(c->b->r, 'D', "OP_DTYPE_UNKNOWN", c->file, line, key,
				       "seed §6, §10: PrimitiveType '%.64s' is not in the dtype table "
				       "(bfloat16, float16, float32, int32, int8, uint8, int64, bool): "
				       "its bytes are unknown, the capacity report is refused", dtype);
				free(key);
			}
		} else {
			c->dtype_dropped++;
		}
		c->b->p->memory.capacity_refused = true;
	}
	return true;
}

static void op_of(struct opio_ctx *c, struct cb_op *op, const char *name, json_t *v,
		  uint64_t line, bool *ok)
{
	op->name = name;
	op->line = line;
	if (!json_is_object(v)) {
		bad(c, line, name, NULL, "op '%.64s' is not a mapping of args_N/outs_N", name);
		*ok = false;
		return;
	}
	size_t n = json_object_size(v);
	op->tensors = n ? calloc(n, sizeof *op->tensors) : NULL;
	if (n && !op->tensors) {
		c->b->r->oom = true;
		*ok = false;
		return;
	}
	const char *k;
	json_t *t;
	json_object_foreach(v, k, t) {
		struct cb_tensor *x = &op->tensors[op->ntensors];
		uint64_t tl = cb_yaml_line(c->doc, v, k);
		if (!arg_key(k, &x->out, &x->index)) {
			bad(c, tl, name, k, "'%.64s' is not args_N or outs_N", k);
			*ok = false;
			continue;
		}
		if (tensor_of(c, name, k, t, tl, x))
			op->ntensors++;
		else
			*ok = false;
	}
}

void cb_opio_build(struct cb_build *b, struct cb_submodel *s, const struct cb_yaml_doc *doc,
		   const char *file)
{
	struct opio_ctx c = {.b = b, .doc = doc, .file = file};
	json_t *root = doc->root;
	s->ops_ok = true;
	if (!json_is_object(root)) {
		bad(&c, doc->root_line, "", NULL, "the file is not a mapping of op instances");
		s->ops_ok = false;
		return;
	}
	size_t n = json_object_size(root);
	s->ops = n ? calloc(n, sizeof *s->ops) : NULL;
	if (n && !s->ops) {
		b->r->oom = true;
		s->ops_ok = false;
		return;
	}
	const char *k;
	json_t *v;
	json_object_foreach(root, k, v)
		op_of(&c, &s->ops[s->nops++], k, v, cb_yaml_line(doc, root, k), &s->ops_ok);
	if (c.dropped)
		CB_ERR(b->r, 'B', "OPIO_SYNTAX", file, 0, NULL,
		       "seed §6: %zu more entries do not have the form (not listed one by one)",
		       c.dropped);
	if (c.dtype_dropped)
		CB_ERR(b->r, 'D', "OP_DTYPE_UNKNOWN", file, 0, NULL,
		       "seed §6, §10: %zu more entries name unknown PrimitiveTypes", c.dtype_dropped);
}

void cb_opio_free(struct cb_submodel *s)
{
	for (size_t i = 0; i < s->nops; i++)
		free(s->ops[i].tensors);
	free(s->ops);
	s->ops = NULL;
	s->nops = 0;
	json_decref(s->ops_json);
	s->ops_json = NULL;
}
