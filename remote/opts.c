/* remote/opts.c — the engine's options: defaults and "key=value" parsing
 * (the daemon's -o list and the tools' options hand them over). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/internal.h"

void nf_remote_opts_init(struct nf_remote_opts *o)
{
	memset(o, 0, sizeof *o);
	o->redirects = NF_REDIRECT_NONE;
	o->max_tries = 5;
	o->retry_total_ms = 30000;
	o->backoff_base_ms = 100;
	o->connect_timeout_ms = 10000;
	o->low_speed_bytes = 1;
	o->low_speed_secs = 15;
	o->max_inflight = 16;
	o->max_request = (uint64_t)16 << 20;
	o->prefetch_mem = (uint64_t)256 << 20;
	o->prefetch_min = (uint64_t)1 << 20;
	o->prefetch_max = (uint64_t)64 << 20;
	o->cache_size = (uint64_t)1 << 30;
}

/* decimal with an optional K/M/G/T suffix (powers of 1024) */
static int parse_size(const char *s, uint64_t *out)
{
	char *e;
	unsigned shift = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &e, 10);
	if (errno)
		return -EINVAL;
	switch (*e) {
	case 'k': case 'K': shift = 10; e++; break;
	case 'm': case 'M': shift = 20; e++; break;
	case 'g': case 'G': shift = 30; e++; break;
	case 't': case 'T': shift = 40; e++; break;
	default: break;
	}
	if (*e != '\0' || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	uint64_t v;
	if (parse_size(s, &v) < 0 || v < lo || v > hi)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

int nf_remote_opts_set(struct nf_remote_opts *o, char *kv, char **err)
{
	char *eq = strchr(kv, '=');
	const char *k = kv, *v;
	size_t klen;
	int rc = 0;
	uint64_t sz;

	*err = NULL;
	klen = eq ? (size_t)(eq - kv) : strlen(kv);
	v = eq ? eq + 1 : "";
#define IS(name) (klen == sizeof(name) - 1 && strncmp(k, name, klen) == 0)
	if (IS("endpoint"))
		o->endpoint = v;
	else if (IS("region"))
		o->region = v;
	else if (IS("profile"))
		o->profile = v;
	else if (IS("cafile"))
		o->cafile = v;
	else if (IS("cache"))
		o->cache_dir = v;
	else if (IS("cache_set"))
		o->cache_set = v;
	else if (IS("cache_fsync"))
		o->cache_fsync = strcmp(v, "0") != 0;
	else if (IS("offline"))
		o->offline = strcmp(v, "0") != 0;
	else if (IS("redirects")) {
		if (strcmp(v, "none") == 0)
			o->redirects = NF_REDIRECT_NONE;
		else if (strcmp(v, "same-host") == 0)
			o->redirects = NF_REDIRECT_SAME_HOST;
		else if (strcmp(v, "any") == 0)
			o->redirects = NF_REDIRECT_ANY;
		else
			rc = -EINVAL;
	} else if (IS("tries"))
		rc = parse_uint(v, 1, 100, &o->max_tries);
	else if (IS("retry_ms"))
		rc = parse_uint(v, 0, 3600000, &o->retry_total_ms);
	else if (IS("backoff_ms"))
		rc = parse_uint(v, 0, 60000, &o->backoff_base_ms);
	else if (IS("connect_ms"))
		rc = parse_uint(v, 1, 600000, &o->connect_timeout_ms);
	else if (IS("low_speed_bytes"))
		rc = parse_uint(v, 1, 1u << 30, &o->low_speed_bytes);
	else if (IS("low_speed_secs"))
		rc = parse_uint(v, 1, 3600, &o->low_speed_secs);
	else if (IS("inflight"))
		rc = parse_uint(v, 1, 256, &o->max_inflight);
	else if (IS("max_request"))
		rc = parse_size(v, &sz) < 0 || sz < 4096 ? -EINVAL : (o->max_request = sz, 0);
	else if (IS("prefetch_mem"))
		rc = parse_size(v, &o->prefetch_mem);
	else if (IS("prefetch_min"))
		rc = parse_size(v, &sz) < 0 || sz < 4096 ? -EINVAL : (o->prefetch_min = sz, 0);
	else if (IS("prefetch_max"))
		rc = parse_size(v, &sz) < 0 || sz < 4096 ? -EINVAL : (o->prefetch_max = sz, 0);
	else if (IS("cache_size"))
		rc = parse_size(v, &o->cache_size);
	else
		return -ENOENT;
#undef IS
	if (rc < 0 && asprintf(err, "option %.*s: bad value \"%s\"", (int)klen, k, v) < 0)
		*err = NULL;
	return rc;
}

int nf_remote_opts_check(const struct nf_remote_opts *o, char **err)
{
	*err = NULL;
	if (o->offline && !(o->cache_dir && o->cache_dir[0])) {
		*err = strdup("option offline needs cache=DIR: offline, every byte comes from the cache");
		return -EINVAL;
	}
	return 0;
}
