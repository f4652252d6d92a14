/* fs/tree.h — the inode table, built once at mount time, immutable after.
 *
 * Node i has inode number i+1; node 0 is the root (FUSE_ROOT_ID).  The
 * build order is a function of the artifact alone, so inode numbers are
 * stable across mounts of the same set.  A directory's children are an
 * index range of `children`, sorted by name (bytewise, shorter first on a
 * common prefix) for binary-search lookup and stable readdir offsets.  The
 * build proves every (directory, name) pair unique on the sorted children
 * (man ninferfs.5, NAMES): two records with one path fail it with -EEXIST
 * and a message naming both. */
#ifndef NF_FS_TREE_H
#define NF_FS_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "fs/view.h"
#include "reader/artifact.h"

/* What a node stands for (user.ninfer.kind and the other xattrs). */
enum nf_role {
	NF_ROLE_DIR = 0,
	NF_ROLE_ROOT,
	NF_ROLE_DOCUMENT,   /* artifact.json, validation.json, config.json, ... */
	NF_ROLE_STATS,
	NF_ROLE_OBJECT,     /* ref = object */
	NF_ROLE_PLANE,      /* ref = object, ref2 = plane */
	NF_ROLE_BINDING,    /* ref = binding */
	NF_ROLE_RESOURCE,   /* ref = component, ref2 = resource */
	NF_ROLE_COMPONENT,  /* directory; ref = component */
	NF_ROLE_DECODED_BINDING,  /* ref = binding */
	NF_ROLE_DECODED_OBJECT,   /* ref = object */
	NF_ROLE_SAFETENSORS,
};

/* 40 bytes a node (issue 6: a set of 100,000 objects has ~750,000
 * nodes).  A file's view is stored packed; nf_tree_view() unpacks it. */
struct nf_node {
	uint32_t parent;
	uint32_t name_off;      /* escaped name in the name arena */
	uint16_t name_len;
	uint8_t role;           /* enum nf_role */
	uint8_t kind;           /* files: enum nf_view_kind, or NF_NODE_SPAN */
	bool is_dir;
	uint8_t dtype;          /* DECODED: enum nf_dtype */
	uint8_t error;          /* DECODED: the errno every read gets, 0 when decodable */
	uint8_t pad;
	uint32_t ref, ref2;
	union {
		struct {                    /* directories */
			uint32_t first_child, nchildren, nsubdirs;
		};
		struct {                    /* files */
			uint64_t size;
			/* SPAN: the logical offset; PIECES: first | count << 32;
			 * MEMORY: the address of the bytes */
			uint64_t at;
		};
	};
};

/* A PIECES view of one payload span, stored in the node itself. */
#define NF_NODE_SPAN 0xff

struct nf_tree {
	const struct nf_artifact *a;
	struct nf_node *nodes;
	uint32_t nnodes;
	char *names;
	uint32_t *children;
	struct nf_piece *pieces;
	size_t npieces;
	char **owned;      /* small documents made for the tree (target files) */
	size_t nowned;
	struct nf_part *object_parts;  /* one whole-object part per object (decoded/objects) */
	/* generated files whose size is set after the build (nf_tree_set_size),
	 * as it is computed alongside: uses.json (when a->uses_json is NULL)
	 * and decoded/model.safetensors; 0 when there is none */
	uint32_t uses_node, st_node;
};

/* Build the tree.  The documents are referenced, not copied: they must
 * outlive the tree.  Returns 0 or -errno (then `err` says why). */
struct nf_tree_docs {
	const char *validation_json;
	enum nf_dtype dtype;                 /* decoded_dtype */
	bool safetensors;                    /* decoded/model.safetensors is there */
};
int nf_tree_build(struct nf_tree *t, const struct nf_artifact *a, const struct nf_tree_docs *docs,
		  char *err, size_t errlen);
/* The size of a generated file (uses_node, st_node), before the tree is
 * shared: the tree is immutable once mounted. */
void nf_tree_set_size(struct nf_tree *t, uint32_t idx, uint64_t size);
void nf_tree_free(struct nf_tree *t);

/* The view of file node `idx` (a PIECES view of one span points at the
 * view's own `one` piece, so `v` must outlive its use). */
void nf_tree_view(const struct nf_tree *t, uint32_t idx, struct nf_view *v);

/* Child `name` of directory node `dir`, or -1. */
int64_t nf_tree_lookup(const struct nf_tree *t, uint32_t dir, const char *name, size_t len);

static inline const char *nf_node_name(const struct nf_tree *t, const struct nf_node *n)
{
	return t->names + n->name_off;
}

#endif
