/* calbin/mount.h — what a mount of a calbin package needs beyond the
 * check (issue 13; the tree is man ninferfs.5, CALBIN PACKAGES):
 *
 *   cb_package_probe()  does a directory look like a package (the
 *                       daemon's detection, before anything is parsed);
 *   cb_package_chips()  the chips the tree shows;
 *   cb_image_build()    a chip's reservation of one domain as a byte image:
 *                       the parameter-map lines laid at vaddr - base, the
 *                       later line winning where lines overlap, as sorted
 *                       disjoint pieces (the interval index the daemon's
 *                       reads and SEEK_DATA/SEEK_HOLE use), and the ranges
 *                       mapped by more than one line;
 *   cb_*_json()         the generated documents of the tree, each a
 *                       malloc'd, newline-terminated text (NULL on OOM).
 *
 * "public" is the sanitized rule of seed §11 ("去掉 vaddr、源绝对路径和命令地址")
 * that calbin-check --public applies to the report: no address (vaddr,
 * ping/pong, CSR offsets, reservation bases, overlap and uncovered lists)
 * and no absolute source path.
 *
 * Like calbin.h: no FUSE; everything here reads the immutable package. */
#ifndef NF_CALBIN_MOUNT_H
#define NF_CALBIN_MOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calbin/calbin.h"

/* 1 when `dir` is a directory whose top level holds
 * model_memory_reserved_info.txt and a root manifest (a *.yaml other than
 * hparam.yaml), 0 when it is not (not a directory, or without them),
 * -errno when it cannot be listed.  Only the listing is read. */
int cb_package_probe(const char *dir);

/* The chips of the tree: device_cfg.chip_nums (or what the file names
 * say, as cb_package_open decided), else 1 + the highest chip a valid
 * map line's mask names; 0 when there is none. */
unsigned cb_package_chips(const struct cb_package *p);

/* One visible piece of an image: image bytes [offset, offset + length)
 * are the bytes [file_offset, file_offset + length) of the param block of
 * map line maps[map] (its file_index). */
struct cb_image_piece {
	uint64_t offset, length;
	uint64_t file_offset;
	size_t map;
};

/* A range of the image mapped by `lines` >= 2 map lines, where maps[wins]
 * (the latest of them in the file) shows. */
struct cb_image_overlap {
	uint64_t offset, length;
	size_t wins;
	size_t lines;
};

struct cb_image {
	unsigned chip;
	enum cb_domain domain;
	uint64_t vaddr, size;          /* the reservation: image byte x is vaddr + x */
	size_t npieces;
	struct cb_image_piece *pieces; /* sorted by offset, disjoint; one per run of
					  consecutive bytes of one line */
	size_t noverlaps;
	struct cb_image_overlap *overlaps;  /* sorted, disjoint; one per run of one
					       winner and one line count */
	size_t nlines;                 /* the map lines laid into the image */
	uint64_t data_bytes;           /* the pieces' lengths summed */
};

/* The image of chip `chip`, domain `d`: every valid map line (calbin.h:
 * struct cb_map.valid) of that domain whose mask names the chip and whose
 * size is not 0, at offset vaddr - the reservation's base.  Where lines
 * overlap the later line (the higher index in maps[], which is file
 * order) shows.  O(n log n) in the lines.  0; -ENOENT when the package
 * has no reservation of that domain; -ENOMEM.  Free with cb_image_free. */
int cb_image_build(const struct cb_package *p, unsigned chip, enum cb_domain d,
		   struct cb_image *img);
void cb_image_free(struct cb_image *img);

/* The piece holding image byte x, or the first piece after it (npieces
 * when none): a binary search. */
size_t cb_image_find(const struct cb_image *img, uint64_t x);

/* ---- documents ------------------------------------------------------------ */

/* manifest.json: the root manifest as JSON, keys in file order; public:
 * every string sanitized as the public report's evidence (cb_sanitize:
 * absolute paths "<path>", 0x numbers "0x?").  NULL also when the package
 * has no manifest that could be read. */
char *cb_manifest_json(const struct cb_package *p, bool pub);

/* memory.json: Gate D as validation.json's "memory" object, plus for the
 * mount: the overlap_list entries say which line wins ("wins", the later),
 * every param block lists its uncovered file ranges ("uncovered_list"),
 * and "device_overlaps" lists every range of every image mapped by more
 * than one line (imgs: the images of the tree, n of them).  public: the
 * public report's memory object, without any of those lists. */
char *cb_mount_memory_json(const struct cb_package *p, const struct cb_image *imgs, size_t n,
			   bool pub);

/* submodels/<dir>/metadata.json: the parsed submodel metadata (§5):
 * identity lines, declarations, CSRs and buffers, with their lines;
 * public: no vaddr and no CSR offset. */
char *cb_submodel_metadata_json(const struct cb_package *p, size_t s, bool pub);
/* submodels/<dir>/io.json: the ibuf/obuf contract (§5.3) with the
 * manifest's input_shape beside each input; public: no vaddr. */
char *cb_submodel_io_json(const struct cb_package *p, size_t s, bool pub);
/* submodels/<dir>/ops.json: the op I/O YAML as JSON (keys in file order);
 * NULL also when it was not read (ops_json NULL). */
char *cb_submodel_ops_json(const struct cb_package *p, size_t s);
/* ops/<op>.json: op `op`'s member of ops.json. */
char *cb_op_json(const struct cb_package *p, size_t s, size_t op);
/* user.calbin.shapes of ops/<op>.json: {"args_0":[1,40960],...}, compact,
 * in file order (no newline). */
char *cb_op_shapes(const struct cb_package *p, size_t s, size_t op);
/* commands/<engine>_chip<N>_<ping|pong>.json: the summary of command dump
 * c (§7.2): counts by command type and dataSize sums. */
char *cb_commands_doc_json(const struct cb_package *p, size_t s, size_t c);
/* "<engine>_chip<N>_<ping|pong>.json" of command dump c (malloc'd). */
char *cb_commands_doc_name(const struct cb_package *p, size_t s, size_t c);
/* profparts/chip<N>: the op order of chip `chip`, one name and '\n' a line
 * (*len its length; "" for an empty file).  NULL also when the chip has
 * no profparts file. */
char *cb_profparts_text(const struct cb_package *p, size_t s, size_t chip, size_t *len);

#endif
