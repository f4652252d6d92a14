/* calbin/profparts.c — per-chip op order (seed §7.1): one op instance name
 * a line, read through the bounded line reader.  The names are checked
 * against the op I/O YAML by Gate C. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calbin/internal.h"

struct pp_ctx {
	struct cb_build *b;
	struct cb_profparts *pp;
	const char *file;
	size_t cap, findings;
};

static int pp_line(void *arg, const char *line, size_t len, uint64_t lineno, bool toolong)
{
	struct pp_ctx *c = arg;
	bool ok = len > 0 && !toolong;
	for (size_t i = 0; ok && i < len; i++)
		ok = (unsigned char)line[i] > 0x20 && line[i] != 0x7f;
	if (!ok) {
		if (c->findings++ < CB_MAX_FINDINGS_PER_FILE)
			CB_ERR(c->b->r, 'B', "PROFPART_SYNTAX", c->file, lineno, NULL,
			       "seed §7.1: a line is one op instance name (no blanks, no control "
			       "characters, not empty)");
		return 0;
	}
	struct cb_profparts *pp = c->pp;
	if (pp->count == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		char **n = reallocarray(pp->ops, cap, sizeof *n);
		if (!n)
			return -ENOMEM;
		pp->ops = n;
		uint64_t *l = reallocarray(pp->lines, cap, sizeof *l);
		if (!l)
			return -ENOMEM;
		pp->lines = l;
		c->cap = cap;
	}
	if (!(pp->ops[pp->count] = strndup(line, len)))
		return -ENOMEM;
	pp->lines[pp->count] = lineno;
	pp->count++;
	return 0;
}

void cb_profparts_read(struct cb_build *b, struct cb_submodel *s)
{
	struct cb_package *p = b->p;
	for (size_t chip = 0; chip < s->nprofparts; chip++) {
		struct cb_profparts *pp = &s->profparts[chip];
		if (pp->file_index < 0 || p->files[pp->file_index].escapes)
			continue;
		const char *file = p->files[pp->file_index].path;
		int fd = cb_open_index(p, (size_t)pp->file_index);
		if (fd < 0) {
			cb_find_op(b->r, 'A', "FILE_UNREADABLE", file, "open: %s", strerror(-fd));
			continue;
		}
		struct pp_ctx c = {.b = b, .pp = pp, .file = file};
		int rc = cb_read_lines(fd, 1 << 16, 4096, pp_line, &c, NULL, NULL, NULL);
		close(fd);
		if (rc == -ENOMEM)
			b->r->oom = true;
		else if (rc < 0)
			cb_find_op(b->r, 'A', "FILE_UNREADABLE", file, "read: %s", strerror(-rc));
		if (c.findings > CB_MAX_FINDINGS_PER_FILE)
			CB_ERR(b->r, 'B', "PROFPART_SYNTAX", file, 0, NULL,
			       "seed §7.1: %zu more lines are not op names",
			       c.findings - CB_MAX_FINDINGS_PER_FILE);
	}
}
