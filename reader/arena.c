/* reader/arena.c — bump allocation for the immutable model.
 *
 * The model is built once and freed once, so a chunked bump allocator keeps
 * a million-object artifact to a few large allocations (and no per-record
 * malloc headers).  Large requests get a chunk of their own. */
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

#define NF_ARENA_CHUNK (256u * 1024u)
#define NF_ARENA_ALIGN 16u

struct nf_arena_chunk {
	struct nf_arena_chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

void nf_arena_init(struct nf_arena *ar)
{
	ar->head = NULL;
	ar->failed = false;
}

void nf_arena_free(struct nf_arena *ar)
{
	struct nf_arena_chunk *c = ar->head;
	while (c) {
		struct nf_arena_chunk *n = c->next;
		free(c);
		c = n;
	}
	ar->head = NULL;
}

/* `align` is NF_ARENA_ALIGN for records and 1 for strings, which need no
 * alignment (a million short names would otherwise waste ~8 bytes each). */
static void *arena_alloc(struct nf_arena *ar, size_t bytes, size_t align)
{
	size_t need = bytes ? bytes : 1;
	struct nf_arena_chunk *c = ar->head;
	size_t off = c ? (c->used + align - 1) & ~(align - 1) : 0;
	if (!c || off > c->size || c->size - off < need) {
		size_t size = need > NF_ARENA_CHUNK / 4 ? need : NF_ARENA_CHUNK;
		size_t total;
		if (__builtin_add_overflow(size, sizeof *c, &total)) {
			ar->failed = true;
			return NULL;
		}
		struct nf_arena_chunk *n = malloc(total);
		if (!n) {
			ar->failed = true;
			return NULL;
		}
		n->used = 0;
		n->size = size;
		if (size == need && c) {
			/* A big block: keep the current chunk at the head so its
			 * free space stays usable. */
			n->next = c->next;
			c->next = n;
		} else {
			n->next = c;
			ar->head = n;
		}
		c = n;
		off = 0;
	}
	void *p = c->data + off;
	c->used = off + need;
	return p;
}

void *nf_arena_calloc(struct nf_arena *ar, size_t n, size_t size)
{
	size_t bytes;
	if (__builtin_mul_overflow(n, size, &bytes)) {
		ar->failed = true;
		return NULL;
	}
	void *p = arena_alloc(ar, bytes, NF_ARENA_ALIGN);
	if (p)
		memset(p, 0, bytes);
	return p;
}

char *nf_arena_memdup0(struct nf_arena *ar, const void *p, size_t n)
{
	size_t bytes;
	if (__builtin_add_overflow(n, (size_t)1, &bytes)) {
		ar->failed = true;
		return NULL;
	}
	char *s = arena_alloc(ar, bytes, 1);
	if (!s)
		return NULL;
	if (n)
		memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

char *nf_arena_strdup(struct nf_arena *ar, const char *s)
{
	return s ? nf_arena_memdup0(ar, s, strlen(s)) : NULL;
}
