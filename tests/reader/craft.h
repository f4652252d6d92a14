/* tests/reader/craft.h — write artifact files byte by byte, bad ones too.
 *
 * The writer refuses bad input, so the reader's tests craft their inputs
 * here: an entry from a header (magic, json_bytes, artifact_id), a JSON
 * text and payload bytes; a part from its header fields and payload. */
#ifndef NF_TESTS_READER_CRAFT_H
#define NF_TESTS_READER_CRAFT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/artifact.h"
#include "report/report.h"

extern const uint8_t craft_id[16];       /* the default artifact_id */
extern const uint8_t craft_entry_magic[8];
extern const uint8_t craft_part_magic[8];

struct craft_entry {
	const uint8_t *magic;      /* NULL: the right one */
	bool set_json_bytes;       /* use json_bytes below instead of the text length */
	uint64_t json_bytes;
	const uint8_t *id;         /* NULL: craft_id */
	const char *json;          /* the text (not necessarily valid) */
	size_t json_len;           /* 0: strlen(json) */
	const void *payload;       /* NULL: zeros */
	uint64_t payload_len;
	int64_t length_delta;      /* bytes added (>0) or cut (<0) at the end */
	int64_t truncate_to;       /* >= 0: the file is cut to this many bytes; -1: not */
};

/* A fresh directory for one test (under $TMPDIR or /tmp); malloc'd. */
char *craft_dir(const char *tag);
/* dir + "/" + name, malloc'd. */
char *craft_path(const char *dir, const char *name);

/* Write the entry: header, JSON text, zeros up to align_up(32+len, 4096),
 * payload.  Returns 0 or -errno. */
int craft_write_entry(const char *path, const struct craft_entry *e);

struct craft_part {
	const uint8_t *magic;      /* NULL: the right one */
	uint64_t index;
	const uint8_t *id;         /* NULL: craft_id */
	const void *payload;       /* NULL: zeros */
	uint64_t payload_len;
	int64_t length_delta;
};
int craft_write_part(const char *path, const struct craft_part *p);

/* A good directory: three objects (bf16 [4,8] at 0, bf16 [2,4] at 256, a
 * 10-byte resource at 272), two bindings, one use, one text component,
 * one file of 282 bytes.  New reference. */
json_t *craft_good_dir(void);
#define CRAFT_GOOD_PAYLOAD 282u

/* Dump `dir` compactly and write it as the entry `name` in `d` with a
 * zero payload of `payload_len` bytes.  Returns the entry path. */
char *craft_entry_json(const char *d, const char *name, json_t *dir, uint64_t payload_len);

/* Open `path` into a fresh report (initialised here); returns the rc of
 * nf_artifact_open and the artifact (may be NULL). */
int craft_open(const char *path, struct nf_report *r, struct nf_artifact **a);

/* The first finding with `code`, or NULL. */
const struct nf_finding *craft_find(const struct nf_report *r, const char *code);
/* Print the report to stderr (for failing tests). */
void craft_dump(const struct nf_report *r);

#endif
