/* tests/calbin/elfw.c — a small ELF64 writer for the fixture's RISC-V
 * files (the CCU programs, ET_EXEC, and the *_riscv.so, ET_DYN with a
 * dynamic section and DT_NEEDED).  No cross compiler is needed; readelf -h
 * and -d read what it writes (tests/calbin/readelf.sh).
 *
 * Layout: ELF header, program headers, then the sections' bytes, then the
 * section header table.  ET_EXEC: .text, .shstrtab.  ET_DYN: .dynstr,
 * .dynamic, .text, .shstrtab, with PT_LOAD over the file and PT_DYNAMIC
 * over .dynamic. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfw.h"

struct buf {
	unsigned char *p;
	size_t n, cap;
};

static int put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (cap < b->n + n)
			cap *= 2;
		unsigned char *x = realloc(b->p, cap);
		if (!x)
			return -1;
		b->p = x;
		b->cap = cap;
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
	return 0;
}

static void align(struct buf *b, size_t a)
{
	static const unsigned char zero[16];
	while (b->n % a)
		put(b, zero, 1);
}

/* RISC-V: addi a0, zero, 0; jalr zero, 0(ra) — "return 0". */
static const unsigned char text[8] = {0x13, 0x05, 0x00, 0x00, 0x67, 0x80, 0x00, 0x00};

int elfw_write(const char *path, const struct elfw_spec *s)
{
	bool dyn = s->type == ET_DYN;
	const uint64_t base = dyn ? 0 : 0x10000;
	const unsigned phnum = dyn ? 2 : 1;
	struct buf b = {0};
	Elf64_Ehdr eh = {0};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh.e_type = s->type;
	eh.e_machine = s->machine;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof eh;
	eh.e_flags = s->machine == EM_RISCV ? 0x5 : 0; /* RVC, double-float ABI */
	eh.e_ehsize = sizeof eh;
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = (Elf64_Half)phnum;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	/* The headers are written last, over the zeroed front. */
	size_t after_ph = sizeof eh + phnum * sizeof(Elf64_Phdr);
	static const unsigned char zero[sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr)];
	if (put(&b, zero, after_ph) < 0)
		return -1;

	/* .dynstr */
	size_t dynstr_off = 0, dynstr_len = 0, dyn_off = 0, dyn_len = 0;
	size_t name_off[8] = {0}, soname_off = 0;
	if (dyn) {
		dynstr_off = b.n;
		put(&b, "", 1);
		for (size_t i = 0; i < s->nneeded; i++) {
			name_off[i] = b.n - dynstr_off;
			put(&b, s->needed[i], strlen(s->needed[i]) + 1);
		}
		soname_off = b.n - dynstr_off;
		put(&b, s->soname ? s->soname : "", strlen(s->soname ? s->soname : "") + 1);
		dynstr_len = b.n - dynstr_off;
		align(&b, 8);
		dyn_off = b.n;
		for (size_t i = 0; i < s->nneeded; i++) {
			Elf64_Dyn d = {.d_tag = DT_NEEDED, .d_un.d_val = name_off[i]};
			put(&b, &d, sizeof d);
		}
		Elf64_Dyn rest[] = {
			{.d_tag = DT_SONAME, .d_un.d_val = soname_off},
			{.d_tag = DT_STRTAB, .d_un.d_ptr = base + dynstr_off},
			{.d_tag = DT_STRSZ, .d_un.d_val = dynstr_len},
			{.d_tag = DT_NULL},
		};
		put(&b, rest, sizeof rest);
		dyn_len = b.n - dyn_off;
	}
	align(&b, 4);
	size_t text_off = b.n;
	put(&b, text, sizeof text);
	size_t shstr_off = b.n;
	static const char shstr[] = "\0.text\0.shstrtab\0.dynstr\0.dynamic";
	put(&b, shstr, sizeof shstr);
	align(&b, 8);
	size_t sh_off = b.n;
	Elf64_Shdr sh[5] = {{0}};
	unsigned n = 0, text_i, shstr_i;
	n++; /* the null section */
	unsigned dynstr_i = 0;
	if (dyn) {
		dynstr_i = n;
		sh[n++] = (Elf64_Shdr){.sh_name = 17, .sh_type = SHT_STRTAB, .sh_flags = SHF_ALLOC,
				       .sh_addr = base + dynstr_off, .sh_offset = dynstr_off,
				       .sh_size = dynstr_len, .sh_addralign = 1};
		sh[n++] = (Elf64_Shdr){.sh_name = 25, .sh_type = SHT_DYNAMIC,
				       .sh_flags = SHF_ALLOC | SHF_WRITE, .sh_addr = base + dyn_off,
				       .sh_offset = dyn_off, .sh_size = dyn_len, .sh_link = dynstr_i,
				       .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Dyn)};
	}
	text_i = n;
	sh[n++] = (Elf64_Shdr){.sh_name = 1, .sh_type = SHT_PROGBITS,
			       .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = base + text_off,
			       .sh_offset = text_off, .sh_size = sizeof text, .sh_addralign = 4};
	shstr_i = n;
	sh[n++] = (Elf64_Shdr){.sh_name = 7, .sh_type = SHT_STRTAB, .sh_offset = shstr_off,
			       .sh_size = sizeof shstr, .sh_addralign = 1};
	(void)text_i;
	if (put(&b, sh, n * sizeof *sh) < 0) {
		free(b.p);
		return -1;
	}
	eh.e_entry = base + text_off;
	eh.e_shoff = sh_off;
	eh.e_shnum = (Elf64_Half)n;
	eh.e_shstrndx = (Elf64_Half)shstr_i;
	memcpy(b.p, &eh, sizeof eh);
	Elf64_Phdr ph[2] = {
		{.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0, .p_vaddr = base,
		 .p_paddr = base, .p_filesz = sh_off, .p_memsz = sh_off, .p_align = 0x1000},
		{.p_type = PT_DYNAMIC, .p_flags = PF_R | PF_W, .p_offset = dyn_off,
		 .p_vaddr = base + dyn_off, .p_paddr = base + dyn_off, .p_filesz = dyn_len,
		 .p_memsz = dyn_len, .p_align = 8},
	};
	memcpy(b.p + sizeof eh, ph, phnum * sizeof *ph);
	FILE *f = fopen(path, "wb");
	int rc = -1;
	if (f) {
		rc = fwrite(b.p, 1, b.n, f) == b.n ? 0 : -1;
		if (fclose(f) != 0)
			rc = -1;
	}
	free(b.p);
	return rc;
}
