/* calbin/commands.c — runtime command files (seed §7.2).
 *
 * A text dump is pairs of lines (issue 12 conventions):
 *   # <COMMAND_TYPE>
 *   cmdId=N chipMask95_64=0x%08x chipMask63_32=0x%08x chipMask31_0=0x%08x
 *     srcAddr=0x.. dstAddr=0x.. dataSize=N syncRegIdx=N        (one line)
 * read through the bounded line reader and summarized: commands and
 * dataSize sums, by type.  The summary describes the 40960-token graph, not
 * measured traffic (§7.2).  A .bin is "CALCMD01", u32 LE count, u32 LE
 * record size (48), then the records; only its count and size are checked
 * against the dump. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calbin/internal.h"

#define MAX_TYPES 256
#define BIN_HEADER 16
#define BIN_RECORD 48

struct dump {
	const struct cb_package *p;
	struct cb_commands *c;
	struct nf_report *r;
	const char *file;
	int type;              /* index of the pending type, -1: a comment line is due */
	uint64_t type_line;
	size_t type_len[MAX_TYPES];   /* strlen of each type, for the lookup */
	size_t findings, dropped;
	uint64_t next_id;      /* the cmdId due next */
	bool resync;           /* after a bad line: take the next id as it comes */
	bool id_reported, mask_reported;
	bool failed;
};

static void bad(struct dump *d, uint64_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void bad(struct dump *d, uint64_t line, const char *fmt, ...)
{
	d->failed = true;
	if (d->findings >= CB_MAX_FINDINGS_PER_FILE) {
		d->dropped++;
		return;
	}
	d->findings++;
	char *ev = NULL;
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&ev, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		d->r->oom = true;
		return;
	}
	CB_ERR(d->r, 'C', "CMD_SYNTAX", d->file, line, NULL, "seed §7.2: %s", ev);
	free(ev);
}

static int find_type(struct dump *d, const char *s, size_t n)
{
	struct cb_commands *c = d->c;
	for (size_t i = c->ntypes; i-- > 0;)
		if (d->type_len[i] == n && memcmp(c->types[i].type, s, n) == 0)
			return (int)i;
	if (c->ntypes == MAX_TYPES)
		return -2;
	struct cb_cmd_type *t = reallocarray(c->types, c->ntypes + 1, sizeof *t);
	if (!t)
		return -1;
	c->types = t;
	if (!(t[c->ntypes].type = strndup(s, n)))
		return -1;
	d->type_len[c->ntypes] = n;
	t[c->ntypes].count = t[c->ntypes].data_bytes = 0;
	return (int)c->ntypes++;
}

/* Field parsers on [*p, end): each consumes its text or returns false.
 * Inlined so the literal's length is a constant (one line is parsed per
 * command: 444,610 of them in one dump). */
static inline __attribute__((always_inline)) bool lit(const char **p, const char *end,
						      const char *s, size_t n)
{
	if ((size_t)(end - *p) < n || memcmp(*p, s, n) != 0)
		return false;
	*p += n;
	return true;
}

/* digit + 1 for [0-9a-f], 0 otherwise. */
static const unsigned char hexval[256] = {
	['0'] = 0 + 1, ['1'] = 1 + 1, ['2'] = 2 + 1, ['3'] = 3 + 1, ['4'] = 4 + 1, ['5'] = 5 + 1,
	['6'] = 6 + 1, ['7'] = 7 + 1, ['8'] = 8 + 1, ['9'] = 9 + 1, ['a'] = 10 + 1, ['b'] = 11 + 1,
	['c'] = 12 + 1, ['d'] = 13 + 1, ['e'] = 14 + 1, ['f'] = 15 + 1,
};
#define LIT(p, end, s) lit(p, end, s, sizeof(s) - 1)

static inline bool dec(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	if (s == end || *s < '0' || *s > '9' || (*s == '0' && s + 1 < end && s[1] >= '0' && s[1] <= '9'))
		return false;
	while (s < end && *s >= '0' && *s <= '9') {
		if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, (uint64_t)(*s - '0'), &x))
			return false;
		s++;
	}
	*p = s;
	*v = x;
	return true;
}

static inline bool hex(const char **p, const char *end, size_t min, size_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	size_t n = 0;
	/* hexval holds digit + 1, 0 for anything else */
	unsigned dv;
	while (s < end && n <= max && (dv = hexval[(unsigned char)*s]) != 0) {
		x = x << 4 | (dv - 1);
		s++;
		n++;
	}
	if (n < min || n > max)
		return false;
	*p = s;
	*v = x;
	return true;
}

static bool record(const char *s, size_t n, uint64_t *id, uint32_t mask[3], uint64_t *size,
		   const char **where)
{
	const char *p = s, *end = s + n;
	uint64_t m[3], src, dst, sync;
	*where = "cmdId=N";
	if (!LIT(&p, end, "cmdId=") || !dec(&p, end, id))
		return false;
	*where = "chipMask95_64=0x%08x";
	if (!LIT(&p, end, " chipMask95_64=0x") || !hex(&p, end, 8, 8, &m[0]))
		return false;
	*where = "chipMask63_32=0x%08x";
	if (!LIT(&p, end, " chipMask63_32=0x") || !hex(&p, end, 8, 8, &m[1]))
		return false;
	*where = "chipMask31_0=0x%08x";
	if (!LIT(&p, end, " chipMask31_0=0x") || !hex(&p, end, 8, 8, &m[2]))
		return false;
	*where = "srcAddr=0x<hex>";
	if (!LIT(&p, end, " srcAddr=0x") || !hex(&p, end, 1, 16, &src))
		return false;
	*where = "dstAddr=0x<hex>";
	if (!LIT(&p, end, " dstAddr=0x") || !hex(&p, end, 1, 16, &dst))
		return false;
	*where = "dataSize=N";
	if (!LIT(&p, end, " dataSize=") || !dec(&p, end, size))
		return false;
	*where = "syncRegIdx=N";
	if (!LIT(&p, end, " syncRegIdx=") || !dec(&p, end, &sync))
		return false;
	*where = "the end of the line after syncRegIdx";
	if (p != end)
		return false;
	for (int i = 0; i < 3; i++)
		mask[i] = (uint32_t)m[i];
	return true;
}

static bool mask_fits(const uint32_t mask[3], unsigned chips)
{
	return (mask[0] || mask[1] || mask[2]) && cb_mask_within(mask, chips);
}

static int dump_line(void *arg, const char *line, size_t len, uint64_t lineno, bool toolong)
{
	struct dump *d = arg;
	struct cb_commands *c = d->c;
	if (toolong) {
		bad(d, lineno, "a line longer than 4096 bytes");
		d->type = -1;
		return 0;
	}
	if (d->type < 0) {
		/* "# TYPE" */
		bool ok = len > 2 && line[0] == '#' && line[1] == ' ' && len - 2 <= 64;
		for (size_t i = 2; ok && i < len; i++)
			ok = (line[i] >= 'A' && line[i] <= 'Z') || (line[i] >= '0' && line[i] <= '9') ||
			     line[i] == '_';
		if (!ok) {
			bad(d, lineno, "expected a comment line '# <COMMAND_TYPE>' (upper case, digits, "
			    "'_')");
			return 0;
		}
		int t = find_type(d, line + 2, len - 2);
		if (t == -1) {
			d->r->oom = true;
			return -ENOMEM;
		}
		if (t == -2) {
			bad(d, lineno, "more than %d command types", MAX_TYPES);
			return 0;
		}
		d->type = t;
		d->type_line = lineno;
		return 0;
	}
	uint64_t id, size;
	uint32_t mask[3];
	const char *where;
	int t = d->type;
	d->type = -1;
	if (!record(line, len, &id, mask, &size, &where)) {
		d->resync = true;
		bad(d, lineno, "the command line does not match at %s (form: cmdId=N "
		    "chipMask95_64=0x%%08x chipMask63_32=0x%%08x chipMask31_0=0x%%08x srcAddr=0x.. "
		    "dstAddr=0x.. dataSize=N syncRegIdx=N)", where);
		return 0;
	}
	if (id != d->next_id && !d->resync && !d->id_reported) {
		d->id_reported = true;
		CB_WARN(d->r, 'C', NF_CLASS_NONE, "CMD_ID_SEQUENCE", d->file, lineno, NULL,
			"seed §7.2: cmdId %" PRIu64 " where %" PRIu64 " was due (ids count from 0 "
			"in file order; later ones are not reported)", id, d->next_id);
	}
	d->resync = false;
	d->next_id = id + 1;
	if (d->p->chips && !mask_fits(mask, d->p->chips) && !d->mask_reported) {
		d->mask_reported = true;
		CB_ERR(d->r, 'C', "CMD_MASK", d->file, lineno, NULL,
		       "seed §7.2: chip mask %08x %08x %08x is zero or names a chip beyond the %u of "
		       "device_cfg.chip_nums (later ones are not reported)", mask[0], mask[1], mask[2],
		       d->p->chips);
	}
	struct cb_cmd_type *ty = &c->types[t];
	if (__builtin_add_overflow(c->data_bytes, size, &c->data_bytes) ||
	    __builtin_add_overflow(ty->data_bytes, size, &ty->data_bytes)) {
		bad(d, lineno, "the dataSize sum overflows 64 bits");
		return 1;
	}
	c->count++;
	ty->count++;
	return 0;
}

void cb_commands_parse(const struct cb_package *p, struct cb_commands *c, struct nf_report *r,
		       struct cb_sha256 *h, uint64_t *bytes_read)
{
	const struct cb_file *f = &p->files[c->file_index];
	struct dump d = {.p = p, .c = c, .r = r, .file = f->path, .type = -1};
	int fd = cb_open_index(p, (size_t)c->file_index);
	if (fd < 0) {
		cb_find_op(r, 'A', "FILE_UNREADABLE", f->path, "open: %s", strerror(-fd));
		return;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	int rc = cb_read_lines(fd, 1 << 20, 4096, dump_line, &d, h ? cb_sha256_update : NULL, h,
			       bytes_read);
	close(fd);
	if (rc < 0 && rc != -ENOMEM) {
		cb_find_op(r, 'A', "FILE_UNREADABLE", f->path, "read: %s", strerror(-rc));
		return;
	}
	if (d.type >= 0)
		bad(&d, d.type_line, "the comment line '# %s' has no command line after it",
		    c->types[d.type].type);
	if (d.dropped)
		CB_ERR(r, 'C', "CMD_SYNTAX", f->path, 0, NULL,
		       "seed §7.2: %zu more lines do not match (not listed one by one)", d.dropped);
	c->parsed = rc == 0 && !d.failed;
}

static uint32_t le32(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

int64_t cb_command_bin_count(const struct cb_package *p, int file_index, struct nf_report *r)
{
	const struct cb_file *f = &p->files[file_index];
	if (f->size == 0)
		return -1;     /* FILE_EMPTY said it */
	int fd = cb_open_index(p, (size_t)file_index);
	if (fd < 0) {
		cb_find_op(r, 'A', "FILE_UNREADABLE", f->path, "open: %s", strerror(-fd));
		return -1;
	}
	unsigned char h[BIN_HEADER];
	ssize_t n = pread(fd, h, sizeof h, 0);
	close(fd);
	if (n != (ssize_t)sizeof h || memcmp(h, "CALCMD01", 8) != 0) {
		CB_ERR(r, 'C', "CMD_BIN_HEADER", f->path, 0, NULL,
		       "seed §7.2 (issue 12 conventions): no 'CALCMD01' header of 16 bytes");
		return -1;
	}
	uint32_t count = le32(h + 8), rec = le32(h + 12);
	uint64_t want = BIN_HEADER + (uint64_t)count * rec;
	if (rec != BIN_RECORD || want != f->size) {
		CB_ERR(r, 'C', "CMD_BIN_HEADER", f->path, 0, NULL,
		       "seed §7.2 (issue 12 conventions): record size %" PRIu32 " (48 expected), %"
		       PRIu32 " records make %" PRIu64 " bytes, the file has %" PRIu64, rec, count, want,
		       f->size);
		return -1;
	}
	return count;
}
