/* fs/view.h — every file of the tree is a view: a size and a way to read.
 *
 * Kinds:
 *   DECODED the elements of a list of parts dequantized to a dtype, decoded
 *           only for the bytes asked (fs/decoded.h); SAFETENSORS the
 *           decoded/model.safetensors file (fs/safetensors.h);
 *   MEMORY  bytes held in memory for the life of the mount (validation.json,
 *           files.json, config.json, ...);
 *   ENTRY   bytes of the entry file outside the payload, read from it on
 *           every read (artifact.json: the JSON text is not kept);
 *   PIECES  a list of pieces, each either a span of the logical payload or a
 *           run of zero bytes, laid end to end (objects, planes, resources,
 *           raw bindings, standalone row payloads of codecs §2.7);
 *   STATS   a snapshot generated at open() into a per-open buffer (direct
 *           I/O; st_size is 0; fs/handles.c);
 *   USES    uses.json when the reader left it to nf_uses_json() (large
 *           sets): made at the first open() into one copy all opens share
 *           (fs/handles.c), the same bytes every time, so st_size (counted
 *           once at mount) stays exact;
 *   FILES   files.json: the files' status now, a shared document taken at
 *           open() (fs/files_doc.c; direct I/O, st_size 0 like STATS).
 * Adding a kind: add the enum value and the fields it needs to struct
 * nf_view, a builder that fills `size` (views.c, called from tree.c where
 * the files are placed), and a case in op_read (ops.c) that calls its read
 * function (readpath.c); a read that needs payload bytes fetches them with
 * nf_fetch_spans() (the range map and the thread's ring, the struct
 * nf_fetcher of fs/decoded.h) or nf_read_pieces().  Lookup, getattr and
 * readdir only see the size; xattr.c gives the kind its attributes. */
#ifndef NF_FS_VIEW_H
#define NF_FS_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "reader/artifact.h"

enum nf_view_kind {
	NF_VIEW_NONE = 0,
	NF_VIEW_MEMORY,
	NF_VIEW_PIECES,
	NF_VIEW_STATS,
	NF_VIEW_DECODED,      /* parts dequantized on read (fs/decoded.h) */
	NF_VIEW_SAFETENSORS,  /* decoded/model.safetensors (fs/safetensors.h) */
	NF_VIEW_USES,         /* uses.json made at the first open() into one
				 shared copy (fs/handles.c); `size` counted at mount */
	NF_VIEW_ENTRY,        /* entry file bytes [file_offset, file_offset + size) */
	NF_VIEW_FILES,        /* files.json, taken at open() (fs/files_doc.c) */
};

#define NF_PIECE_ZERO UINT64_MAX

struct nf_piece {
	uint64_t out;      /* offset of the piece in the file */
	uint64_t logical;  /* logical payload offset, or NF_PIECE_ZERO */
	uint64_t length;
};

struct nf_view {
	enum nf_view_kind kind;
	uint64_t size;
	const char *mem;         /* MEMORY */
	uint64_t file_offset;    /* ENTRY */
	uint32_t first, count;   /* PIECES: index range in `pieces` */
	const struct nf_piece *pieces;  /* PIECES: the tree's piece array, or &one */
	struct nf_piece one;     /* PIECES of one span (nf_tree_view) */
	/* DECODED: the parts, the output dtype, and the error every read gets
	 * when the parts cannot be decoded (-EOPNOTSUPP unknown format or
	 * layout, -EIO an object error; 0 when decodable). */
	const struct nf_part *parts;
	uint32_t nparts;
	enum nf_dtype dtype;
	int error;
};

/* A growable piece array (the tree keeps the final one). */
struct nf_pieces {
	struct nf_piece *v;
	size_t n, cap;
};

void nf_view_memory(struct nf_view *v, const char *mem, size_t len);
void nf_view_entry(struct nf_view *v, uint64_t file_offset, uint64_t len);
/* One span of the logical payload. */
int nf_view_span(struct nf_pieces *p, uint64_t logical, uint64_t length, struct nf_view *v);
/* A binding leaf (contract §2): 0 and *v filled; 1 when the binding has no
 * raw leaf (it will only be under decoded/); -errno on failure. */
int nf_view_binding(struct nf_pieces *p, const struct nf_artifact *a, const struct nf_binding *b,
		    struct nf_view *v);
void nf_pieces_free(struct nf_pieces *p);

/* A decoded view of `parts` as `wanted` (int32 parents stay int32).
 * Returns 0 (an undecodable set of parts gives a view whose reads fail
 * with v->error), or 1 when the parts mix int32 and float parents (no
 * view). */
int nf_view_decoded(const struct nf_artifact *a, const struct nf_part *parts, uint32_t nparts,
		    enum nf_dtype wanted, struct nf_view *v);

/* Logical extent for xattrs: first payload offset and total payload bytes
 * (zero pieces not counted). */
void nf_view_extent(const struct nf_view *v, const struct nf_piece *pieces, uint64_t *offset,
		    uint64_t *bytes);

#endif
