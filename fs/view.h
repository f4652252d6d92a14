/* fs/view.h — every file of the tree is a view: a size and a way to read.
 *
 * Generic kinds, read by the adapter itself (ops.c, readpath.c):
 *   MEMORY  bytes held in memory for the life of the mount (validation.json,
 *           config.json, ...);
 *   PIECES  a list of pieces, each either a span of the set's logical space
 *           (the files joined by the extent table, io/extent.h) or a run of
 *           zero bytes, laid end to end (NInfer objects, planes, resources,
 *           raw bindings, standalone row payloads of codecs §2.7; calbin
 *           parameter files and device images).  Zero pieces are holes for
 *           SEEK_DATA/SEEK_HOLE (nf_view_seek);
 *   FILE    bytes [file_offset, file_offset + size) of backing file `file`,
 *           outside the map, read from it on every read (NInfer's
 *           artifact.json: the JSON text is not kept);
 *   STATS   a snapshot generated at open() into a per-open buffer (direct
 *           I/O; st_size is 0; fs/handles.c);
 *   FILES   files.json: the files' status now, a shared document taken at
 *           open() (fs/files_doc.c; direct I/O, st_size 0 like STATS).
 * Family kinds are the values from NF_VIEW_FAMILY up; the adapter never
 * interprets them: it keeps `size`, `at` and `tag` in the node, and sends
 * opens, reads and "does it show bytes of file f" to the family
 * (fs/family.h: NInfer's DECODED, SAFETENSORS, USES).
 *
 * Adding a generic kind: the enum value and its fields here, a builder in
 * view.c, its packing in tree.c (node_set_view, nf_tree_view), a case in
 * op_read (ops.c) and its read in readpath.c, and watch.c's node_touches.
 * Lookup, getattr and readdir only see the size. */
#ifndef NF_FS_VIEW_H
#define NF_FS_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum nf_view_kind {
	NF_VIEW_NONE = 0,
	NF_VIEW_MEMORY,
	NF_VIEW_PIECES,
	NF_VIEW_STATS,
	NF_VIEW_FILE,         /* backing file bytes [file_offset, file_offset + size) */
	NF_VIEW_FILES,        /* files.json, taken at open() (fs/files_doc.c) */
	NF_VIEW_FAMILY = 32,  /* the first family kind (fs/family.h) */
};

#define NF_PIECE_ZERO UINT64_MAX

struct nf_piece {
	uint64_t out;      /* offset of the piece in the file */
	uint64_t logical;  /* offset in the logical space, or NF_PIECE_ZERO */
	uint64_t length;
};

struct nf_view {
	unsigned kind;           /* enum nf_view_kind, or a family kind */
	uint64_t size;
	const char *mem;         /* MEMORY */
	uint32_t file;           /* FILE */
	uint64_t file_offset;    /* FILE */
	uint32_t first, count;   /* PIECES: index range in `pieces` */
	const struct nf_piece *pieces;  /* PIECES: the tree's piece array, or &one */
	struct nf_piece one;     /* PIECES of one span (nf_tree_view) */
	/* PIECES: per piece of `pieces`, the index of the first zero piece at
	 * or after it (nf_pieces_next_zero), or NULL: SEEK_HOLE then walks */
	const uint32_t *next_zero;
	/* family kinds: stored in the node as given, given back by
	 * nf_tree_view; the family says what they mean */
	uint64_t at;
	uint8_t tag[2];
};

/* A growable piece array (the tree keeps the final one). */
struct nf_pieces {
	struct nf_piece *v;
	size_t n, cap;
};

void nf_view_memory(struct nf_view *v, const char *mem, size_t len);
void nf_view_file(struct nf_view *v, uint32_t file, uint64_t file_offset, uint64_t len);
/* A view of family kind `kind` (>= NF_VIEW_FAMILY) of `size` bytes; the
 * family may set `at` and `tag` before the view is stored. */
void nf_view_family(struct nf_view *v, unsigned kind, uint64_t size);

/* PIECES views are built piece by piece at the end of `p`: begin, add
 * (pieces that join the previous one merge with it), and on a failure
 * drop what was added for this view (nf_pieces_fail returns rc). */
void nf_pieces_begin(struct nf_pieces *p, struct nf_view *v);
int nf_pieces_add(struct nf_pieces *p, struct nf_view *v, uint64_t logical, uint64_t length);
int nf_pieces_fail(struct nf_pieces *p, struct nf_view *v, int rc);
/* One span of the logical space. */
int nf_view_span(struct nf_pieces *p, uint64_t logical, uint64_t length, struct nf_view *v);
void nf_pieces_free(struct nf_pieces *p);

/* Logical extent for xattrs: first logical offset and total mapped bytes
 * of a PIECES view (zero pieces not counted); 0, 0 for other kinds. */
void nf_view_extent(const struct nf_view *v, uint64_t *offset, uint64_t *bytes);

/* The size stat(2) shows: 0 for STATS and FILES (made at open). */
static inline uint64_t nf_view_st_size(unsigned kind, uint64_t size)
{
	return kind == NF_VIEW_STATS || kind == NF_VIEW_FILES ? 0 : size;
}

/* The SEEK_HOLE index of a piece array of n pieces: out[k] is the index of
 * the first zero piece at or after k (n when none), one backward pass;
 * malloc'd, NULL on ENOMEM or n >= UINT32_MAX. */
uint32_t *nf_pieces_next_zero(const struct nf_piece *pieces, size_t n);

/* lseek(2) SEEK_DATA (data true) or SEEK_HOLE from `off`: the first data
 * (hole) offset at or after it, the end of the file counting as a hole.
 * PIECES: zero pieces are holes, the piece at `off` is found by binary
 * search, and the hole after a run of data pieces by `next_zero` (without
 * it, by walking the run): O(log pieces) either way but the walk; other
 * kinds are data throughout.  -ENXIO when off is not below the size
 * stat(2) shows, or (SEEK_DATA) no data follows. */
int64_t nf_view_seek(const struct nf_view *v, uint64_t off, bool data);

#endif
