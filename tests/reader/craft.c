/* tests/reader/craft.c — see craft.h. */
#include "craft.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const uint8_t craft_id[16] = {0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
			      0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf};
const uint8_t craft_entry_magic[8] = {0x4e, 0x49, 0x4e, 0x46, 0x45, 0x52, 0x00, 0x03};
const uint8_t craft_part_magic[8] = {0x4e, 0x49, 0x4e, 0x50, 0x52, 0x54, 0x00, 0x03};

char *craft_dir(const char *tag)
{
	const char *tmp = getenv("TMPDIR");
	char *t = NULL;
	if (asprintf(&t, "%s/nfreader-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag) < 0)
		return NULL;
	if (!mkdtemp(t)) {
		free(t);
		return NULL;
	}
	return t;
}

char *craft_path(const char *dir, const char *name)
{
	char *p = NULL;
	return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int write_zeros(int fd, uint64_t n)
{
	static const uint8_t z[4096];
	while (n) {
		size_t k = n < sizeof z ? (size_t)n : sizeof z;
		int rc = write_all(fd, z, k);
		if (rc)
			return rc;
		n -= k;
	}
	return 0;
}

static int finish(int fd, int64_t delta, int64_t truncate_to)
{
	int rc = 0;
	if (delta > 0)
		rc = write_zeros(fd, (uint64_t)delta);
	off_t end = lseek(fd, 0, SEEK_END);
	if (!rc && delta < 0 && ftruncate(fd, end + delta) < 0)
		rc = -errno;
	if (!rc && truncate_to >= 0 && ftruncate(fd, truncate_to) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	return rc;
}

int craft_write_entry(const char *path, const struct craft_entry *e)
{
	size_t jl = e->json_len ? e->json_len : (e->json ? strlen(e->json) : 0);
	uint8_t h[32];
	memcpy(h, e->magic ? e->magic : craft_entry_magic, 8);
	le64(h + 8, e->set_json_bytes ? e->json_bytes : jl);
	memcpy(h + 16, e->id ? e->id : craft_id, 16);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	uint64_t start = (32 + jl + 4095) / 4096 * 4096;
	int rc = write_all(fd, h, 32);
	if (!rc && jl)
		rc = write_all(fd, e->json, jl);
	if (!rc)
		rc = write_zeros(fd, start - 32 - jl);
	if (!rc && e->payload_len)
		rc = e->payload ? write_all(fd, e->payload, e->payload_len)
				: write_zeros(fd, e->payload_len);
	if (rc) {
		close(fd);
		return rc;
	}
	return finish(fd, e->length_delta, e->truncate_to);
}

int craft_write_part(const char *path, const struct craft_part *p)
{
	uint8_t h[32];
	memcpy(h, p->magic ? p->magic : craft_part_magic, 8);
	le64(h + 8, p->index);
	memcpy(h + 16, p->id ? p->id : craft_id, 16);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int rc = write_all(fd, h, 32);
	if (!rc)
		rc = write_zeros(fd, 4096 - 32);
	if (!rc && p->payload_len)
		rc = p->payload ? write_all(fd, p->payload, p->payload_len)
				: write_zeros(fd, p->payload_len);
	if (rc) {
		close(fd);
		return rc;
	}
	return finish(fd, p->length_delta, -1);
}

json_t *craft_good_dir(void)
{
	json_error_t e;
	json_t *d = json_loads(
		"{\"components\":{\"text\":{\"config\":{\"architectures\":[\"X\"],\"hidden_size\":8},"
		"\"resources\":{\"tokenizer.json\":\"r.tok\"}}},"
		"\"objects\":["
		"{\"id\":\"w.a\",\"shape\":[4,8],\"format\":\"bf16\",\"layout\":\"contiguous_le_v1\","
		"\"offset\":0,\"bytes\":64,\"kind\":\"tensor\"},"
		"{\"id\":\"w.b\",\"shape\":[2,4],\"format\":\"bf16\",\"layout\":\"contiguous_le_v1\","
		"\"offset\":256,\"bytes\":16,\"kind\":\"tensor\"},"
		"{\"id\":\"r.tok\",\"encoding\":\"raw_bytes_v1\",\"offset\":272,\"bytes\":10,"
		"\"kind\":\"resource\"}],"
		"\"bindings\":{\"text/a\":{\"object\":\"w.a\"},"
		"\"text/b\":{\"parts\":[{\"object\":\"w.b\",\"range\":[0,8]}]}},"
		"\"uses\":[{\"parameter\":\"text/a\",\"input\":\"text/in\",\"activation_policy\":"
		"\"AllowA8\"}],"
		"\"metadata\":{\"name\":\"good\"},\"provenance\":{},"
		"\"files\":[{\"path\":null,\"payload_bytes\":282}]}",
		JSON_REJECT_DUPLICATES, &e);
	return d;
}

char *craft_entry_json(const char *d, const char *name, json_t *dir, uint64_t payload_len)
{
	char *text = json_dumps(dir, JSON_COMPACT);
	char *path = craft_path(d, name);
	if (!text || !path) {
		free(text);
		free(path);
		return NULL;
	}
	struct craft_entry e = {.json = text, .payload_len = payload_len, .truncate_to = -1};
	int rc = craft_write_entry(path, &e);
	free(text);
	if (rc) {
		free(path);
		return NULL;
	}
	return path;
}

int craft_open(const char *path, struct nf_report *r, struct nf_artifact **a)
{
	nf_report_init(r);
	return nf_artifact_open(path, r, a);
}

const struct nf_finding *craft_find(const struct nf_report *r, const char *code)
{
	for (size_t i = 0; i < r->count; i++)
		if (strcmp(r->items[i].code, code) == 0)
			return &r->items[i];
	return NULL;
}

void craft_dump(const struct nf_report *r)
{
	for (size_t i = 0; i < r->count; i++)
		fprintf(stderr, "  %s %s %s %s: %s\n", nf_severity_name(r->items[i].severity),
			nf_scope_name(r->items[i].scope), r->items[i].code, r->items[i].where,
			r->items[i].evidence);
}
