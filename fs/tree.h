/* fs/tree.h — the inode table, built once at mount time, immutable after;
 * and the builder API a family makes its tree with.
 *
 * Node i has inode number i+1; node 0 is the root (FUSE_ROOT_ID).  A
 * family builds in an order that is a function of its source alone, so
 * inode numbers are stable across mounts of the same set.  A directory's
 * children are an index range of `children`, sorted by name (bytewise,
 * shorter first on a common prefix) for binary-search lookup and stable
 * readdir offsets.  The build proves every (directory, name) pair unique
 * on the sorted children (man ninferfs.5, NAMES): two records with one
 * path fail it with -EEXIST and a message naming both (the family names
 * its records: nf_builder.describe).
 *
 * What a node stands for (`role`, `ref`, `ref2`) is the family's: the
 * adapter reads only is_dir, the name, the view (kind, size, at, tag) and
 * the directory fields.  Names given to the builder are escaped by the
 * rule of fs/names.h where the builder says "raw". */
#ifndef NF_FS_TREE_H
#define NF_FS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs/view.h"

/* 40 bytes a node (issue 6: a set of 100,000 objects has ~750,000
 * nodes).  A file's view is stored packed; nf_tree_view() unpacks it. */
struct nf_node {
	uint32_t parent;
	uint32_t name_off;      /* escaped name in the name arena */
	uint16_t name_len;
	uint8_t role;           /* the family's: what the node stands for */
	uint8_t kind;           /* files: the view kind, or NF_NODE_SPAN */
	bool is_dir;
	uint8_t tag[2];         /* family kinds: the view's tag bytes */
	uint8_t pad;
	uint32_t ref, ref2;     /* the family's record indices; FILE views:
				   ref2 is the file */
	union {
		struct {                    /* directories */
			uint32_t first_child, nchildren, nsubdirs;
		};
		struct {                    /* files */
			uint64_t size;
			/* SPAN: the logical offset; PIECES: first | count << 32;
			 * MEMORY: the address of the bytes; FILE: the file
			 * offset; family kinds: the view's `at` */
			uint64_t at;
		};
	};
};

/* A PIECES view of one span, stored in the node itself. */
#define NF_NODE_SPAN 0xff

struct nf_tree {
	struct nf_node *nodes;
	uint32_t nnodes;
	char *names;
	uint32_t *children;
	struct nf_piece *pieces;
	size_t npieces;
	uint32_t *next_zero;   /* SEEK_HOLE's index of `pieces` (view.h), made at the end */
	void **owned;      /* blocks made for the tree (small documents): freed with it */
	size_t nowned;
};

/* The view of file node `idx` (a PIECES view of one span points at the
 * view's own `one` piece, so `v` must outlive its use). */
void nf_tree_view(const struct nf_tree *t, uint32_t idx, struct nf_view *v);

/* Child `name` of directory node `dir`, or -1. */
int64_t nf_tree_lookup(const struct nf_tree *t, uint32_t dir, const char *name, size_t len);

/* The size of a generated file computed after the build (before the tree
 * is shared: it is immutable once mounted). */
void nf_tree_set_size(struct nf_tree *t, uint32_t idx, uint64_t size);
void nf_tree_free(struct nf_tree *t);

static inline const char *nf_node_name(const struct nf_tree *t, const struct nf_node *n)
{
	return t->names + n->name_off;
}

/* ---- the builder ------------------------------------------------------ */

/* The record a node (or a node about to be made) stands for: a role and
 * references of the family's, and the directory it goes in. */
struct nf_rec {
	uint8_t role;
	uint32_t ref, ref2, parent;
};

/* A message being written into a bounded buffer (never past cap - 1). */
struct nf_msg {
	char *buf;
	size_t cap, len;
};
void nf_msg_put(struct nf_msg *m, const char *s);
/* `s` quoted, control bytes, '"' and '\\' escaped, and the middle of a
 * long name left out (the tail is kept: two names that only differ there
 * must stay apart). */
void nf_msg_name(struct nf_msg *m, const char *s);

/* One build.  The family fills `describe` and `arg` (and may read `t`,
 * `pieces` and `max_pieces`); the rest is the builder's own. */
struct nf_builder {
	struct nf_tree *t;
	/* names record `r` in a refused build's message ("object \"w\"") */
	void (*describe)(const struct nf_builder *b, const struct nf_rec *r, struct nf_msg *m);
	void *arg;                 /* the family's, for describe */
	struct nf_pieces pieces;   /* PIECES views are built here, then stored */
	uint64_t max_pieces;       /* the most pieces of one stored view */
	/* private */
	uint32_t cap;
	size_t names_len, names_cap;
	/* (parent, name) hash, open addressing: 0 = empty, else the key's
	 * 32-bit hash << 32 | (node index + 1) */
	uint64_t *slots;
	size_t nslots;
	size_t owned_cap;
	char *err;
	size_t errlen;
};

/* Start a build of `t` (zeroed here): the root (node 0, `root_role`) is
 * made, and the hash sized for about `hashed` hashed nodes (directories,
 * small files, cut names; it grows as needed).  0 or -errno (err says). */
int nf_build_begin(struct nf_builder *b, struct nf_tree *t, uint8_t root_role, size_t hashed,
		   char *err, size_t errlen);
/* End it: the children arrays, each directory's names proven unique.
 * Returns 0 (the tree is complete), or -EEXIST (err names both records) or
 * -errno; on failure the tree is freed.  Call nf_build_abort instead when
 * the family's own adding failed. */
int nf_build_end(struct nf_builder *b);
void nf_build_abort(struct nf_builder *b);
/* Write a message into err and return rc. */
int nf_build_fail(struct nf_builder *b, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Two records whose files get one path (man ninferfs.5, NAMES): the build
 * is refused, naming both.  `first` holds the path already.  -EEXIST. */
int nf_build_clash(struct nf_builder *b, uint32_t first, const struct nf_rec *second);

/* The node named `esc` (already escaped) under `parent`, or -1.  Only
 * hashed nodes are found. */
int64_t nf_build_find(const struct nf_builder *b, uint32_t parent, const char *esc, size_t len);
/* A new node for `r` named `esc` (no duplicate check).  `hashed`: found by
 * nf_build_find later.  Its index, or -errno. */
int64_t nf_build_node(struct nf_builder *b, const struct nf_rec *r, const char *esc, size_t len,
		      bool is_dir, bool hashed);
/* The directory `esc` under `parent`, made (hashed, `role`) if needed.
 * Its index, or -EEXIST when a file holds the name. */
int64_t nf_build_dir(struct nf_builder *b, uint32_t parent, const char *esc, size_t len,
		     uint8_t role);
/* A file leaf named `raw` (escaped here) for record `r` (r->parent is the
 * directory) with view `v`.  When a directory already holds the name the
 * leaf becomes <dir>/%self (r->parent is updated).  A `unique` leaf is one
 * no other leaf should share a name with (names unique by construction,
 * like JSON member names): it is found against the hashed nodes but not
 * hashed itself; nf_build_end() proves it unique after all.  The index,
 * -EEXIST (refused, err says why), or -errno. */
int64_t nf_build_leaf(struct nf_builder *b, struct nf_rec *r, const char *raw, size_t len,
		      const struct nf_view *v, bool unique);
/* A node for `r` named `raw` under a parent whose names are distinct by
 * construction (object ids): it skips the hash, which is most of the
 * build's time on a large set (issue 6), except for cut names, found
 * against the hash; nf_build_end() proves the others unique.  `v` is the
 * view of a file (NULL for a directory).  The index, -EEXIST or -errno. */
int64_t nf_build_unique(struct nf_builder *b, const struct nf_rec *r, const char *raw,
			size_t len, bool is_dir, const struct nf_view *v);
/* A node for `r` under r->parent named `name` as it is, not escaped: a
 * name that is already one file name (an entry of a real directory, the
 * calbin family's package/): 1 to NF_NAME_MAX bytes, no '/' or NUL, not
 * "." or "..", else -EINVAL.  Not hashed: nf_build_end() proves it unique
 * among its siblings.  `v` is the view of a file (NULL: a directory).  The
 * index or -errno. */
int64_t nf_build_verbatim(struct nf_builder *b, const struct nf_rec *r, const char *name,
			  size_t len, const struct nf_view *v);
/* nf_build_leaf of a plain name under `parent`, not unique. */
int64_t nf_build_file(struct nf_builder *b, uint32_t parent, const char *name, uint8_t role,
		      const struct nf_view *v);
/* A MEMORY file of `text` (NULL: empty), which must outlive the tree. */
int64_t nf_build_doc(struct nf_builder *b, uint32_t parent, const char *name, uint8_t role,
		     const char *text);
/* The tree frees `p` with itself (0); -ENOMEM, and `p` is not taken. */
int nf_build_own(struct nf_builder *b, void *p);
/* nf_tree_view during the build (the piece array may still move). */
void nf_build_view(struct nf_builder *b, uint32_t idx, struct nf_view *v);

#endif
