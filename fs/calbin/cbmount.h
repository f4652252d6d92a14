/* fs/calbin/cbmount.h — the calbin family's state and its parts (family.c,
 * files.c, tree.c, xattr.c), shared within fs/calbin/ only (issue 13; the
 * tree is man ninferfs.5, CALBIN PACKAGES).
 *
 * The state is made by the family's open from the package calbin/ opened
 * and checked, and is immutable once the tree is built, except the files'
 * open state (files.c), which guards itself. */
#ifndef NF_FS_CALBIN_CBMOUNT_H
#define NF_FS_CALBIN_CBMOUNT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "calbin/calbin.h"
#include "calbin/mount.h"
#include "fs/family.h"
#include "fs/tree.h"
#include "io/extent.h"
#include "report/report.h"

/* What a node stands for (nf_node.role); ref and ref2 say which. */
enum cbm_role {
	CBM_ROLE_ROOT = 0,
	CBM_ROLE_DIR,         /* a directory of the tree (params/chip0, ...) */
	CBM_ROLE_DOCUMENT,    /* a generated document */
	CBM_ROLE_STATS,
	CBM_ROLE_PKG_DIR,     /* package/<dir>: ref = its index in files[] */
	CBM_ROLE_PKG_FILE,    /* package/<file>: ref = its index in files[] */
	CBM_ROLE_PARAM,       /* params/...: ref = map line, ref2 = chip */
	CBM_ROLE_DEVICE,      /* devices/...: ref = image */
	CBM_ROLE_OP,          /* ops/<op>.json: ref = submodel, ref2 = op */
};

/* -o public */
struct cbm_opts {
	bool public_tree;
};

/* One backing file (files.c): a regular file of the package the tree
 * shows, opened beneath the package root, compared with the identity it
 * had when first opened every time it is acquired (contract §5). */
struct cbm_file {
	int index;            /* into the package's files[] */
	int fd;               /* -1: not open */
	unsigned refs;        /* acquired and not yet released */
	bool opened;          /* its identity was taken */
	enum nf_fstatus status;
	char *reason;         /* why bad or missing */
	uint64_t dev, ino, size;
	struct timespec mtime, ctime;
	uint64_t lru;         /* last release, for the open-file cache */
};

struct cbm_files {
	const struct cb_package *p;
	pthread_mutex_t lock;
	bool lock_made;
	uint32_t n;
	struct cbm_file *v;
	uint32_t open, open_max;
	uint64_t evictions, reopens, changes, tick;
	void (*hook)(void *arg, uint32_t i);
	void *hook_arg;
	struct nf_extent *extents;   /* file i: logical [P_i, P_i + size), data offset 0 */
};

struct nf_calbin {
	struct nf_fs *fs;
	const struct cbm_opts *opt;
	const char *dir;             /* the source, as given */
	struct nf_report report;
	struct cb_package *p;
	unsigned chips;
	size_t nimages;
	struct cb_image *images;     /* chip-major, then dram, sram, sync as reserved */
	int *set_of;                 /* files[] index -> set index, -1: not in the set */
	struct cbm_files files;
	const char **names, **paths; /* per set file: package path, local path */
	char **owned_paths;          /* npaths of them */
	uint32_t npaths;
	char *validation_json, *validation_public_json;
	const struct nf_tree *tree;  /* the tree it built (the adapter's) */
};

/* files.c: the set's files; 0 or -ENOMEM. */
int cbm_files_init(struct cbm_files *f, const struct cb_package *p, const int *set_to_file,
		   uint32_t n);
void cbm_files_free(struct cbm_files *f);
extern const struct nf_set_ops cbm_set_ops;
/* Whether the package file is one -o public hides (it carries addresses
 * or absolute source paths: man ninferfs.5, -o public). */
bool cbm_hidden_in_public(const struct cb_package *p, size_t i);

/* tree.c */
int cbm_tree_build(struct nf_calbin *c, struct nf_tree *t, char *err, size_t errlen);

/* xattr.c: user.calbin.* (man ninferfs.5, Extended attributes of a
 * calbin package). */
int cbm_xattr_get(void *state, uint32_t node, const char *name, char **value, size_t *len);
int cbm_xattr_list(void *state, uint32_t node, char **list, size_t *len);

#endif
