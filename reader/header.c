/* reader/header.c — entry framing (seed §3.1).
 *
 * The entry starts with a 32-byte header: magic "NINFER\0\3", json_bytes
 * (little-endian PositiveU64) and the 16-byte artifact_id; the JSON text
 * is [32, 32+json_bytes) and the payload starts at the next multiple of
 * 4096.  Everything here is a directory error except a claim above the
 * caller's ceiling (operational).  The rules do not depend on where the
 * entry is: each source (source.h) reads the 32 bytes and the length its
 * own way, calls nf_entry_header, then makes the JSON text (the local one
 * maps it, the remote one fetches it in chunks: json_fetch.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

static const uint8_t entry_magic[8] = {0x4e, 0x49, 0x4e, 0x46, 0x45, 0x52, 0x00, 0x03};

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static void hexbytes(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 3 * i, i + 1 < n ? "%02x " : "%02x", p[i]);
}

int nf_entry_header(struct nf_artifact *a, const uint8_t *h, uint64_t entry_size,
		    struct nf_report *r)
{
	const char *name = a->entry_name;
	if (!h || entry_size < NF_ENTRY_HEADER_BYTES) {
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "HEADER_TRUNCATED", "header",
			      "seed §3.1: the entry header is 32 bytes; %s has %llu bytes", name,
			      (unsigned long long)entry_size);
		return -EINVAL;
	}
	if (memcmp(h, entry_magic, 8) != 0) {
		char seen[8 * 3];
		hexbytes(seen, h, 8);
		/* "NINFER\0" with another version byte is a version problem, not
		 * a foreign file: say so. */
		if (memcmp(h, entry_magic, 7) == 0)
			nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "HEADER_BAD_VERSION", "header",
				      "seed §3.1: container version must be 3; %s has version %u",
				      name, h[7]);
		else if (memcmp(h, "NINPRT\0", 7) == 0)
			nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "HEADER_BAD_MAGIC", "header",
				      "seed §3.1: magic must be 4e 49 4e 46 45 52 00 03; %s starts with "
				      "%s, a continuation part (seed §3.2): open the entry instead",
				      name, seen);
		else
			nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "HEADER_BAD_MAGIC", "header",
				      "seed §3.1: magic must be 4e 49 4e 46 45 52 00 03; %s starts with %s",
				      name, seen);
		return -EINVAL;
	}
	a->json_bytes = le64(h + 8);
	memcpy(a->artifact_id, h + 16, NF_ID_BYTES);
	for (int i = 0; i < NF_ID_BYTES; i++)
		sprintf(a->artifact_id_hex + 2 * i, "%02x", a->artifact_id[i]);

	if (a->json_bytes == 0) {
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "HEADER_JSON_BYTES_ZERO", "header",
			      "seed §3.1: json_bytes is a PositiveU64; %s has 0", name);
		return -EINVAL;
	}
	if (a->json_bytes > entry_size - NF_ENTRY_HEADER_BYTES) {
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "HEADER_JSON_PAST_EOF", "header",
			      "seed §3.1: JSON [32, 32+%llu) must lie in the file; %s has %llu bytes",
			      (unsigned long long)a->json_bytes, name,
			      (unsigned long long)entry_size);
		return -EINVAL;
	}
	/* json_bytes < entry_size <= 2^63, so these cannot overflow; the
	 * align-up is still checked because the rule says so (seed §1). */
	uint64_t metadata_end = NF_ENTRY_HEADER_BYTES + a->json_bytes, start;
	if (__builtin_add_overflow(metadata_end, (uint64_t)4095, &start)) {
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_DIRECTORY, "HEADER_JSON_PAST_EOF", "header",
			      "seed §1: align_up(32+json_bytes, 4096) overflows U64");
		return -EINVAL;
	}
	a->entry_payload_start = start & ~(uint64_t)4095;

	uint64_t ceiling = a->priv->max_json ? a->priv->max_json : NF_DEFAULT_MAX_JSON;
	if (a->json_bytes > ceiling) {
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "JSON_TOO_LARGE", "header",
			      "json_bytes %llu is above the ceiling of %llu bytes this reader maps "
			      "(--max-json, -o max_json): the JSON directory of %s is not read",
			      (unsigned long long)a->json_bytes, (unsigned long long)ceiling, name);
		return -EFBIG;
	}
	if (a->json_bytes > SIZE_MAX - 2 * 65536) {
		nf_report_add(r, NF_SEV_ERROR, NF_SCOPE_OPERATIONAL, "OUT_OF_MEMORY", "header",
			      "json_bytes %llu does not fit in memory",
			      (unsigned long long)a->json_bytes);
		return -ENOMEM;
	}
	return 0;
}
