/* calbin/walk.c — the package directory (seed §2, §4.3 rule 1, §9 Gate A).
 *
 * One directory fd (O_PATH) is opened on the root; every directory below it
 * is opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_SYMLINKS) and listed, every entry looked at with fstatat
 * (AT_SYMLINK_NOFOLLOW).  A symlink is resolved beneath the root
 * (RESOLVE_BENEATH): one to a regular file inside is that file; one that
 * leads out (an absolute target, "..") or nowhere is a finding and is
 * never opened.  Nothing outside the package is ever opened.
 *
 * Then every file is classified by the naming conventions of issue 12:
 *   <model>.yaml  model_memory_reserved_info.txt  hparam.yaml  param_blk<n>.bin
 *   version.py  SHA256SUMS  <onnx>.onnx  __Tokenizer/<file>
 *   <model>_{prefill,decode}_<k>/ holding submodel_memory_reserved_info.txt,
 *     ccu<core>_chip<n>.elf, {cpu,pld}_chip<n>_{ping,pong}.{bin,txt},
 *     <dir>_op_io_buf_ptr.yaml, <dir>.chip<n>.profparts, *_{riscv,x86}.so */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "calbin/internal.h"

#define MAX_ENTRIES 100000
#define MAX_DEPTH 8

static int openat2_beneath(int dirfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | resolve,
	};
	long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
	return fd < 0 ? -errno : (int)fd;
}

int cb_open_index(const struct cb_package *p, size_t i)
{
	if (i >= p->nfiles || p->rootfd < 0)
		return -EINVAL;
	const struct cb_file *f = &p->files[i];
	if (f->escapes || !S_ISREG(f->type))
		return -EPERM;
	/* O_NONBLOCK: a FIFO swapped in after the walk must not hang us. */
	int fd = openat2_beneath(p->rootfd, f->path, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EPERM;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int cb_package_open_file(const struct cb_package *p, size_t i)
{
	return cb_open_index(p, i);
}

int cb_package_find(const struct cb_package *p, const char *path)
{
	size_t lo = 0, hi = p->nfiles;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->files[mid].path, path);
		if (c == 0)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

struct walk {
	struct cb_build *b;
	size_t cap;
	bool limited;
};

static struct cb_file *add(struct walk *w, const char *path, mode_t type)
{
	struct cb_package *p = w->b->p;
	if (p->nfiles >= MAX_ENTRIES) {
		if (!w->limited)
			CB_ERR(w->b->r, 'A', "PKG_LIMIT", NULL, 0, NULL,
			       "seed §9 Gate A: more than %d entries; the rest is not looked at",
			       MAX_ENTRIES);
		w->limited = true;
		return NULL;
	}
	if (p->nfiles == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 128;
		struct cb_file *n = reallocarray(p->files, cap, sizeof *n);
		if (!n) {
			w->b->r->oom = true;
			return NULL;
		}
		p->files = n;
		w->cap = cap;
	}
	struct cb_file *f = &p->files[p->nfiles];
	*f = (struct cb_file){.type = type, .submodel = -1, .chip = -1, .core = -1};
	if (!(f->path = strdup(path))) {
		w->b->r->oom = true;
		return NULL;
	}
	p->nfiles++;
	return f;
}

static void set_stat(struct cb_file *f, const struct stat *st)
{
	f->size = S_ISREG(st->st_mode) ? (uint64_t)st->st_size : 0;
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* A symlink at `path`: resolved beneath the root, or a finding. */
static void symlink_entry(struct walk *w, int dfd, const char *name, const char *path)
{
	struct cb_build *b = w->b;
	char target[256];
	ssize_t tn = readlinkat(dfd, name, target, sizeof target - 1);
	if (tn < 0)
		tn = 0;
	target[tn] = '\0';
	int fd = openat2_beneath(b->p->rootfd, path, O_PATH, 0);
	struct cb_file *f = add(w, path, S_IFLNK);
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	if (fd < 0) {
		f->escapes = true;
		if (fd == -EXDEV)
			CB_ERR(b->r, 'A', "PKG_SYMLINK_ESCAPE", path, 0, NULL,
			       "seed §4.3 rule 1, §9 Gate A: a symlink to '%s' leads out of the "
			       "package; not followed", target);
		else
			CB_ERR(b->r, 'A', "PKG_SYMLINK_BROKEN", path, 0, NULL,
			       "seed §9 Gate A: a symlink to '%s' resolves to nothing inside the "
			       "package (%s); not followed", target, strerror(-fd));
		return;
	}
	struct stat st;
	int rc = fstat(fd, &st);
	close(fd);
	if (rc < 0) {
		f->escapes = true;
		CB_ERR(b->r, 'A', "PKG_SYMLINK_BROKEN", path, 0, NULL, "fstat: %s", strerror(errno));
		return;
	}
	f->symlink = true;
	if (S_ISREG(st.st_mode)) {
		f->type = S_IFREG;
		set_stat(f, &st);
	} else if (S_ISDIR(st.st_mode)) {
		CB_WARN(b->r, 'A', NF_CLASS_NONE, "PKG_SYMLINK_DIR", path, 0, NULL,
			"seed §9 Gate A: a symlink to the directory '%s' inside the package; not "
			"followed (its files are not part of the package)", target);
	} else {
		f->escapes = true;
		CB_ERR(b->r, 'A', "PKG_NOT_REGULAR", path, 0, NULL,
		       "seed §4.3 rule 1: a symlink to something that is neither a regular file nor "
		       "a directory");
	}
}

static char *join(const char *dir, const char *name)
{
	char *s = NULL;
	if (!*dir)
		return strdup(name);
	return asprintf(&s, "%s/%s", dir, name) < 0 ? NULL : s;
}

static void walk_dir(struct walk *w, const char *rel, unsigned depth)
{
	struct cb_build *b = w->b;
	int dfd = openat2_beneath(b->p->rootfd, *rel ? rel : ".", O_RDONLY | O_DIRECTORY,
				  RESOLVE_NO_SYMLINKS);
	if (dfd < 0) {
		cb_find_op(b->r, 'A', "PKG_UNREADABLE", *rel ? rel : NULL,
			   "seed §9 Gate A: the directory cannot be opened: %s", strerror(-dfd));
		if (!*rel)
			b->p->readable = false;
		return;
	}
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		b->r->oom = true;
		return;
	}
	char **subdirs = NULL;
	size_t nsub = 0;
	for (;;) {
		errno = 0;
		struct dirent *e = readdir(d);
		if (!e) {
			if (errno)
				cb_find_op(b->r, 'A', "PKG_UNREADABLE", *rel ? rel : NULL,
					   "seed §9 Gate A: the directory cannot be listed: %s",
					   strerror(errno));
			break;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char *path = join(rel, e->d_name);
		if (!path) {
			b->r->oom = true;
			break;
		}
		struct stat st;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			cb_find_op(b->r, 'A', "PKG_UNREADABLE", path, "fstatat: %s", strerror(errno));
			free(path);
			continue;
		}
		struct cb_file *f = NULL;
		if (S_ISDIR(st.st_mode)) {
			if ((f = add(w, path, S_IFDIR))) {
				set_stat(f, &st);
				if (depth + 1 >= MAX_DEPTH) {
					CB_ERR(b->r, 'A', "PKG_LIMIT", path, 0, NULL,
					       "seed §9 Gate A: directories nested deeper than %d; "
					       "not listed", MAX_DEPTH);
				} else {
					char **n = reallocarray(subdirs, nsub + 1, sizeof *n);
					if (n) {
						subdirs = n;
						subdirs[nsub++] = path;
						path = NULL;
					} else {
						b->r->oom = true;
					}
				}
			}
		} else if (S_ISREG(st.st_mode)) {
			if ((f = add(w, path, S_IFREG)))
				set_stat(f, &st);
		} else if (S_ISLNK(st.st_mode)) {
			symlink_entry(w, dfd, e->d_name, path);
		} else {
			if ((f = add(w, path, st.st_mode & S_IFMT))) {
				f->escapes = true;
				CB_ERR(b->r, 'A', "PKG_NOT_REGULAR", path, 0, NULL,
				       "seed §4.3 rule 1, §9 Gate A: not a regular file or directory "
				       "(a FIFO, socket or device); never opened");
			}
		}
		free(path);
		if (w->limited)
			break;
	}
	closedir(d);
	for (size_t i = 0; i < nsub; i++) {
		if (!w->limited)
			walk_dir(w, subdirs[i], depth + 1);
		free(subdirs[i]);
	}
	free(subdirs);
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct cb_file *)a)->path, ((const struct cb_file *)b)->path);
}

void cb_walk(struct cb_build *b)
{
	struct walk w = {.b = b};
	b->p->readable = true;
	walk_dir(&w, "", 0);
	if (b->p->nfiles > 1)
		qsort(b->p->files, b->p->nfiles, sizeof *b->p->files, by_path);
}

/* ---- classification -------------------------------------------------------- */

/* s starts with prefix and ends with suffix; the middle is a decimal. */
static bool numbered(const char *s, const char *prefix, const char *suffix, int *n)
{
	size_t ls = strlen(s), lp = strlen(prefix), lx = strlen(suffix);
	uint64_t v;
	if (ls <= lp + lx || strncmp(s, prefix, lp) != 0 || strcmp(s + ls - lx, suffix) != 0 ||
	    !cb_tok_dec(s + lp, ls - lp - lx, &v) || v > 100000)
		return false;
	*n = (int)v;
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls > lx && strcmp(s + ls - lx, suffix) == 0;
}

/* "<model>_prefill_<k>" / "<model>_decode_<k>": kind and k, the model part
 * in *model_len. */
static bool submodel_name(const char *s, enum cb_sub_kind *kind, unsigned *k, size_t *model_len)
{
	static const struct {
		const char *word;
		enum cb_sub_kind kind;
	} kinds[] = {{"_prefill_", CB_SUB_PREFILL}, {"_decode_", CB_SUB_DECODE}};
	for (size_t i = 0; i < 2; i++) {
		const char *at = NULL;
		for (const char *p = strstr(s, kinds[i].word); p; p = strstr(p + 1, kinds[i].word))
			at = p;
		if (!at || at == s)
			continue;
		const char *num = at + strlen(kinds[i].word);
		uint64_t v;
		if (!cb_tok_dec(num, strlen(num), &v) || v > 1000000)
			continue;
		*kind = kinds[i].kind;
		*k = (unsigned)v;
		*model_len = (size_t)(at - s);
		return true;
	}
	return false;
}

static void classify_in_submodel(struct cb_file *f, const char *dir, const char *name)
{
	int n, core;
	size_t ld = strlen(dir);
	if (strcmp(name, "submodel_memory_reserved_info.txt") == 0) {
		f->kind = CB_KIND_SUB_META;
	} else if (strncmp(name, "ccu", 3) == 0 && ends_with(name, ".elf")) {
		/* ccu<core>_chip<n>.elf */
		const char *u = strstr(name, "_chip");
		char head[64];
		if (u && (size_t)(u - name) < sizeof head) {
			memcpy(head, name, (size_t)(u - name));
			head[u - name] = '\0';
			if (numbered(head, "ccu", "", &core) && numbered(u, "_chip", ".elf", &n)) {
				f->kind = CB_KIND_CCU_ELF;
				f->core = core;
				f->chip = n;
			}
		}
	} else if ((strncmp(name, "cpu_chip", 8) == 0 || strncmp(name, "pld_chip", 8) == 0) &&
		   (ends_with(name, ".bin") || ends_with(name, ".txt"))) {
		bool pld = name[0] == 'p';
		bool txt = ends_with(name, ".txt");
		const char *rest = name + 8;
		char num[16];
		const char *u = strchr(rest, '_');
		if (u && (size_t)(u - rest) < sizeof num) {
			memcpy(num, rest, (size_t)(u - rest));
			num[u - rest] = '\0';
			uint64_t v;
			bool ping = strcmp(u, txt ? "_ping.txt" : "_ping.bin") == 0;
			bool pong = strcmp(u, txt ? "_pong.txt" : "_pong.bin") == 0;
			if ((ping || pong) && cb_tok_dec(num, strlen(num), &v) && v < 100000) {
				f->kind = txt ? CB_KIND_CMD_TEXT : pld ? CB_KIND_PLD_CMD : CB_KIND_CPU_CMD;
				f->engine = pld ? CB_ENGINE_PLD : CB_ENGINE_CPU;
				f->chip = (int)v;
				f->pong = pong;
			}
		}
	} else if (strncmp(name, dir, ld) == 0 && strcmp(name + ld, "_op_io_buf_ptr.yaml") == 0) {
		f->kind = CB_KIND_OP_IO_YAML;
	} else if (strncmp(name, dir, ld) == 0 && numbered(name + ld, ".chip", ".profparts", &n)) {
		f->kind = CB_KIND_PROFPARTS;
		f->chip = n;
	} else if (ends_with(name, "_riscv.so")) {
		f->kind = CB_KIND_HELPER_SO;
		f->isa = CB_ISA_RISCV;
	} else if (ends_with(name, "_x86.so")) {
		f->kind = CB_KIND_HELPER_SO;
		f->isa = CB_ISA_X86;
	}
}

static int by_kind_k(const void *a, const void *b)
{
	const struct cb_submodel *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

void cb_classify(struct cb_build *b)
{
	struct cb_package *p = b->p;
	p->manifest_index = p->top_meta_index = p->hparam_index = p->sums_index = -1;
	/* Submodel directories first: their files need the index. */
	size_t nsub = 0;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct cb_file *f = &p->files[i];
		enum cb_sub_kind kind;
		unsigned k;
		size_t ml;
		if (S_ISDIR(f->type) && !strchr(f->path, '/') && submodel_name(f->path, &kind, &k, &ml))
			nsub++;
	}
	p->submodels = nsub ? calloc(nsub, sizeof *p->submodels) : NULL;
	if (nsub && !p->submodels) {
		b->r->oom = true;
		return;
	}
	for (size_t i = 0; i < p->nfiles; i++) {
		struct cb_file *f = &p->files[i];
		enum cb_sub_kind kind;
		unsigned k;
		size_t ml;
		if (!S_ISDIR(f->type) || strchr(f->path, '/') || !submodel_name(f->path, &kind, &k, &ml))
			continue;
		struct cb_submodel *s = &p->submodels[p->nsubmodels];
		if (!(s->dir = strdup(f->path))) {
			b->r->oom = true;
			return;
		}
		s->kind = kind;
		s->k = k;
		s->meta_index = s->opio_index = -1;
		p->nsubmodels++;
		f->kind = CB_KIND_SUBMODEL_DIR;
	}
	if (p->nsubmodels > 1)
		qsort(p->submodels, p->nsubmodels, sizeof *p->submodels, by_kind_k);

	int candidate = -1;
	for (size_t i = 0; i < p->nfiles; i++) {
		struct cb_file *f = &p->files[i];
		const char *slash = strchr(f->path, '/');
		if (f->kind == CB_KIND_SUBMODEL_DIR)
			continue;
		if (S_ISDIR(f->type)) {
			f->kind = CB_KIND_DIR;
			continue;
		}
		if (!slash) {
			const char *n = f->path;
			int blk;
			if (strcmp(n, "model_memory_reserved_info.txt") == 0) {
				f->kind = CB_KIND_TOP_META;
				p->top_meta_index = (int)i;
			} else if (strcmp(n, "hparam.yaml") == 0) {
				f->kind = CB_KIND_HPARAM;
				p->hparam_index = (int)i;
			} else if (numbered(n, "param_blk", ".bin", &blk)) {
				f->kind = CB_KIND_PARAM_BLOCK;
				f->chip = blk;
			} else if (strcmp(n, "version.py") == 0) {
				f->kind = CB_KIND_VERSION;
			} else if (strcmp(n, "SHA256SUMS") == 0) {
				f->kind = CB_KIND_HASH_MANIFEST;
				p->sums_index = (int)i;
			} else if (ends_with(n, ".onnx")) {
				f->kind = CB_KIND_ONNX;
			} else if (ends_with(n, ".yaml")) {
				/* The root manifest: <model>.yaml, the stem being the
				 * package name; another *.yaml only when none is. */
				size_t ln = strlen(n) - 5;
				if (candidate < 0 || (strlen(p->name) == ln && strncmp(n, p->name, ln) == 0))
					candidate = (int)i;
			}
			continue;
		}
		size_t dl = (size_t)(slash - f->path);
		const char *name = slash + 1;
		if (strchr(name, '/'))
			continue;   /* deeper than any convention: unknown */
		if (dl == 11 && strncmp(f->path, "__Tokenizer", 11) == 0) {
			f->kind = CB_KIND_TOKENIZER;
			continue;
		}
		for (size_t s = 0; s < p->nsubmodels; s++) {
			struct cb_submodel *sm = &p->submodels[s];
			if (strlen(sm->dir) != dl || strncmp(f->path, sm->dir, dl) != 0)
				continue;
			classify_in_submodel(f, sm->dir, name);
			if (f->kind != CB_KIND_UNKNOWN)
				f->submodel = (int)s;
			if (f->kind == CB_KIND_SUB_META)
				sm->meta_index = (int)i;
			else if (f->kind == CB_KIND_OP_IO_YAML)
				sm->opio_index = (int)i;
			break;
		}
	}
	if (candidate >= 0) {
		p->manifest_index = candidate;
		p->files[candidate].kind = CB_KIND_MANIFEST;
	}
}

const char *cb_kind_name(enum cb_kind k)
{
	static const char *const names[CB_KIND_COUNT] = {
		[CB_KIND_UNKNOWN] = "unknown",
		[CB_KIND_MANIFEST] = "root_manifest",
		[CB_KIND_TOP_META] = "runtime_metadata",
		[CB_KIND_HPARAM] = "runtime_test_params",
		[CB_KIND_PARAM_BLOCK] = "parameter_block",
		[CB_KIND_SUBMODEL_DIR] = "submodel_directory",
		[CB_KIND_SUB_META] = "submodel_metadata",
		[CB_KIND_CCU_ELF] = "ccu_elf",
		[CB_KIND_CPU_CMD] = "cpu_command",
		[CB_KIND_PLD_CMD] = "pld_command",
		[CB_KIND_CMD_TEXT] = "command_text",
		[CB_KIND_HELPER_SO] = "cpu_helper_so",
		[CB_KIND_OP_IO_YAML] = "op_io_metadata",
		[CB_KIND_PROFPARTS] = "per_chip_op_order",
		[CB_KIND_TOKENIZER] = "tokenizer_config",
		[CB_KIND_VERSION] = "version_script",
		[CB_KIND_ONNX] = "onnx",
		[CB_KIND_HASH_MANIFEST] = "hash_manifest",
		[CB_KIND_DIR] = "directory",
	};
	return (unsigned)k < CB_KIND_COUNT && names[k] ? names[k] : "unknown";
}
