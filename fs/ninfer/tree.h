/* fs/ninfer/tree.h — the NInfer family's tree (contract §2, man
 * ninferfs.5): top-level documents, components/, objects/, planes/,
 * bindings/, decoded/ and xattrs/, built with the builder of fs/tree.h.
 *
 * The build order is a function of the artifact alone, so inode numbers
 * are stable across mounts of the same set.  Two records whose files get
 * one path fail the build with -EEXIST and a message naming both (man
 * ninferfs.5, NAMES). */
#ifndef NF_FS_NINFER_TREE_H
#define NF_FS_NINFER_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "codecs/codec.h"
#include "fs/tree.h"
#include "reader/artifact.h"

/* What a node stands for (nf_node.role: user.ninfer.kind and the other
 * xattrs). */
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

/* The documents are referenced, not copied: they must outlive the tree. */
struct nf_ninfer_docs {
	const char *validation_json;
	enum nf_dtype dtype;                 /* decoded_dtype */
	bool safetensors;                    /* decoded/model.safetensors is there */
};

/* Build the tree of `a` into `t`.  Returns 0 or -errno (then `err` says
 * why); on failure the tree is freed.  uses.json (when a->uses_json is
 * NULL) and decoded/model.safetensors get their sizes afterwards
 * (nf_tree_set_size). */
int nf_ninfer_tree_build(struct nf_tree *t, const struct nf_artifact *a,
			 const struct nf_ninfer_docs *docs, char *err, size_t errlen);

#endif
