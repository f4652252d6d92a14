/* tools/sample.h — the built-in sample artifact of `ninfer-pack sample`. */
#ifndef NF_TOOLS_SAMPLE_H
#define NF_TOOLS_SAMPLE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/writer.h"

struct nf_sample {
	json_t *directory;               /* components, bindings, uses, metadata, provenance */
	struct nf_write_object *objects; /* memory sources */
	size_t nobjects;
	uint64_t payload_bytes;          /* sum of object sizes with alignment */
	uint64_t default_max_file_bytes; /* splits the sample into about four files */
	/* private */
	uint8_t **bufs;
	json_t **records;
};

/* Build the sample (deterministic: fixed seed).  0 or a negative errno. */
int nf_sample_build(struct nf_sample *s);
void nf_sample_free(struct nf_sample *s);

#endif
