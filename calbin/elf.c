/* calbin/elf.c — ELF headers and dynamic sections with libelf (seed §5.2:
 * "ELF 可由 readelf -h 解析，动态 SO 可由 readelf -d 检查依赖"; the target ISA
 * comes from e_machine, never from the file name). */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calbin/internal.h"

static void needed(struct cb_build *b, Elf *e, struct cb_elf *x)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n && i < 4096; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED)
				continue;
			const char *s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			char **nn = reallocarray(x->needed, x->nneeded + 1, sizeof *nn);
			if (!nn || !(nn[x->nneeded] = strdup(s))) {
				if (nn)
					x->needed = nn;
				b->r->oom = true;
				return;
			}
			x->needed = nn;
			x->nneeded++;
		}
	}
}

void cb_elf_read(struct cb_build *b, size_t i)
{
	struct cb_file *f = &b->p->files[i];
	struct cb_elf *x = calloc(1, sizeof *x);
	if (!x) {
		b->r->oom = true;
		return;
	}
	f->elf = x;
	if (f->size == 0)
		return;       /* FILE_EMPTY said it */
	int fd = cb_open_index(b->p, i);
	if (fd < 0) {
		cb_find_op(b->r, 'A', "FILE_UNREADABLE", f->path, "open: %s", strerror(-fd));
		return;
	}
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	if (!e || elf_kind(e) != ELF_K_ELF) {
		CB_ERR(b->r, 'C', "ELF_INVALID", f->path, 0, NULL,
		       "seed §5.2: not an ELF file (no ELF magic, or libelf cannot read it: %s)",
		       elf_errmsg(0) ? elf_errmsg(0) : "no header");
	} else if (!gelf_getehdr(e, &eh)) {
		CB_ERR(b->r, 'C', "ELF_INVALID", f->path, 0, NULL,
		       "seed §5.2: libelf cannot read the ELF header: %s", elf_errmsg(-1));
	} else {
		x->ok = true;
		x->elf_class = (unsigned)gelf_getclass(e);
		x->machine = eh.e_machine;
		x->type = eh.e_type;
		if (eh.e_type == ET_DYN)
			needed(b, e, x);
	}
	if (e)
		elf_end(e);
	close(fd);
}

void cb_elf_free(struct cb_elf *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nneeded; i++)
		free(e->needed[i]);
	free(e->needed);
	free(e);
}
