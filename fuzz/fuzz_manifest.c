/* fuzz-manifest: nf_manifest_parse() on arbitrary text (no filesystem).
 * Checks: never crashes or leaks; on success every object has a record
 * without source/source_offset/bytes, an NF_SRC_FILE source with a path
 * under the base directory (or absolute), and the directory holds only the
 * members the manifest format allows; on failure the report says why. */
#include <errno.h>
#include <string.h>

#include "fuzz/fuzz_common.h"
#include "reader/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nf_report rep;
	struct nf_manifest m;
	nf_report_init(&rep);
	int rc = nf_manifest_parse((const char *)data, size, "/base", &m, &rep);
	if (rc == 0) {
		FUZZ_CHECK(m.nobjects > 0 && m.objects && m.directory, "empty success");
		FUZZ_CHECK(nf_report_count(&rep, NF_SEV_ERROR, -1) == 0, "errors on success");
		const char *key;
		json_t *v;
		json_object_foreach(m.directory, key, v) {
			FUZZ_CHECK(strcmp(key, "objects") && strcmp(key, "files"), "member %s copied", key);
		}
		for (size_t i = 0; i < m.nobjects; i++) {
			const struct nf_write_object *o = &m.objects[i];
			FUZZ_CHECK(o->source == NF_SRC_FILE && o->path && o->record, "object %zu", i);
			FUZZ_CHECK(o->path[0] == '/', "path %s not absolute", o->path);
			FUZZ_CHECK(!json_object_get(o->record, "source") &&
				   !json_object_get(o->record, "source_offset") &&
				   !json_object_get(o->record, "bytes"), "source members kept");
		}
	} else {
		FUZZ_CHECK(rc == -EINVAL || rc == -ENOMEM, "rc %d", rc);
		FUZZ_CHECK(rep.count > 0 || rep.oom, "failure without a finding");
		FUZZ_CHECK(!m.objects && !m.directory && m.nobjects == 0, "not emptied");
	}
	nf_manifest_free(&m);
	nf_report_free(&rep);
	return 0;
}
