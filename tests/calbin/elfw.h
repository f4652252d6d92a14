/* tests/calbin/elfw.h — a small ELF64 writer (see elfw.c). */
#ifndef NF_TESTS_CALBIN_ELFW_H
#define NF_TESTS_CALBIN_ELFW_H

#include <stdbool.h>
#include <stddef.h>

struct elfw_spec {
	unsigned type;         /* ET_EXEC or ET_DYN */
	unsigned machine;      /* EM_RISCV, EM_X86_64, ... */
	const char *const *needed;  /* ET_DYN: DT_NEEDED names (at most 8) */
	size_t nneeded;
	const char *soname;
};

/* Write the file; 0 or -1 (errno set). */
int elfw_write(const char *path, const struct elfw_spec *s);

#endif
