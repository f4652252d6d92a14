/* remote/creds.c — AWS credentials and region, from the usual places.
 *
 * The order is the AWS CLI's: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY
 * (+ AWS_SESSION_TOKEN) from the environment; else the profile
 * ($AWS_PROFILE, else "default") of the shared credentials file
 * ($AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials).  No credentials
 * at all is not an error: the requests then go unsigned (public buckets).
 * The region: the option, AWS_REGION, AWS_DEFAULT_REGION, the profile's
 * "region" in the config file ($AWS_CONFIG_FILE, else ~/.aws/config, section
 * [default] or [profile NAME]), else us-east-1.
 *
 * The files are INI: "[section]" lines and "key = value" lines, '#' and ';'
 * comment lines.  Secrets are wiped before they are freed. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/internal.h"

static char *trim(char *s)
{
	char *e;
	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int keep(char **dst, const char *v)
{
	char *d = strdup(v);
	if (d == NULL)
		return -ENOMEM;
	if (*dst) {
		explicit_bzero(*dst, strlen(*dst));
		free(*dst);
	}
	*dst = d;
	return 0;
}

/* Reads keys of [section] of an INI file: for each of the n keys[i] found,
 * *vals[i] is set.  -ENOENT when the file does not exist, 1 when the
 * section is missing, 0 otherwise. */
static int ini_read(const char *path, const char *section, const char *const *keys,
		    char **const *vals, size_t n)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	bool in = false, seen = false;
	int rc = 0;

	if (f == NULL)
		return -errno;
	while (getline(&line, &cap, f) >= 0) {
		char *s = trim(line), *eq;
		if (*s == '#' || *s == ';' || *s == '\0')
			continue;
		if (*s == '[') {
			char *e = strchr(s, ']');
			if (e == NULL)
				continue;
			*e = '\0';
			in = strcmp(trim(s + 1), section) == 0;
			seen |= in;
			continue;
		}
		if (!in || (eq = strchr(s, '=')) == NULL)
			continue;
		*eq = '\0';
		char *k = trim(s), *v = trim(eq + 1);
		for (size_t i = 0; i < n; i++)
			if (strcmp(k, keys[i]) == 0 && (rc = keep(vals[i], v)) < 0)
				goto out;
	}
	rc = seen ? 0 : 1;
out:
	if (line) {
		explicit_bzero(line, cap);
		free(line);
	}
	fclose(f);
	return rc;
}

static char *home_file(const char *env, const char *rel)
{
	const char *p = getenv(env), *home = getenv("HOME");
	char *out;
	if (p && *p)
		return strdup(p);
	if (home == NULL || *home == '\0')
		return NULL;
	return asprintf(&out, "%s/%s", home, rel) < 0 ? NULL : out;
}

static int from_env(struct nf_rcreds *c)
{
	const char *k = getenv("AWS_ACCESS_KEY_ID"), *s = getenv("AWS_SECRET_ACCESS_KEY");
	const char *t = getenv("AWS_SESSION_TOKEN");
	int rc;
	if (k == NULL || s == NULL || *k == '\0' || *s == '\0')
		return 1;
	if ((rc = keep(&c->key, k)) < 0 || (rc = keep(&c->secret, s)) < 0)
		return rc;
	if (t && *t && (rc = keep(&c->token, t)) < 0)
		return rc;
	return keep(&c->source, "the environment");
}

static int from_file(struct nf_rcreds *c, const char *profile, char **err)
{
	static const char *const keys[] = {"aws_access_key_id", "aws_secret_access_key",
					   "aws_session_token"};
	char **vals[] = {&c->key, &c->secret, &c->token};
	char *path = home_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
	int rc;

	if (path == NULL)
		return 1;
	rc = ini_read(path, profile, keys, vals, 3);
	if (rc == -ENOENT) {
		free(path);
		return 1;
	}
	if (rc < 0) {
		if (asprintf(err, "%s: %s", path, strerror(-rc)) < 0)
			*err = NULL;
	} else if (rc == 0 && (c->key == NULL || c->secret == NULL)) {
		if (asprintf(err, "%s: profile %s lacks aws_access_key_id or aws_secret_access_key",
			     path, profile) < 0)
			*err = NULL;
		rc = -EINVAL;
	} else if (rc == 0 && asprintf(&c->source, "profile %s of %s", profile, path) < 0) {
		c->source = NULL;
		rc = -ENOMEM;
	}
	free(path);
	return rc;
}

static int region_from_config(struct nf_rcreds *c, const char *profile)
{
	static const char *const keys[] = {"region"};
	char **vals[] = {&c->region};
	char *path = home_file("AWS_CONFIG_FILE", ".aws/config"), *sect;
	int rc;

	if (path == NULL)
		return 0;
	if (strcmp(profile, "default") == 0)
		sect = strdup("default");
	else if (asprintf(&sect, "profile %s", profile) < 0)
		sect = NULL;
	rc = sect ? ini_read(path, sect, keys, vals, 1) : -ENOMEM;
	free(sect);
	free(path);
	return rc == -ENOMEM ? rc : 0;
}

int nf_rcreds_load(struct nf_rcreds *c, const char *profile, const char *region, char **err)
{
	const char *ep = getenv("AWS_PROFILE");
	int rc;

	memset(c, 0, sizeof *c);
	*err = NULL;
	if (profile == NULL || *profile == '\0')
		profile = ep && *ep ? ep : "default";
	rc = from_env(c);
	if (rc == 1)
		rc = from_file(c, profile, err);
	if (rc == 1) { /* none: anonymous */
		nf_rcreds_free(c);
		rc = 0;
	}
	if (rc < 0)
		goto fail;
	if (region == NULL || *region == '\0')
		region = getenv("AWS_REGION");
	if (region == NULL || *region == '\0')
		region = getenv("AWS_DEFAULT_REGION");
	if (region && *region)
		rc = keep(&c->region, region);
	else if ((rc = region_from_config(c, profile)) == 0 && c->region == NULL)
		rc = keep(&c->region, "us-east-1");
	if (rc < 0)
		goto fail;
	for (const char *s = c->region; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '-')) {
			if (asprintf(err, "region \"%s\" is not a region name", c->region) < 0)
				*err = NULL;
			rc = -EINVAL;
			goto fail;
		}
	return 0;
fail:
	nf_rcreds_free(c);
	return rc;
}

static void wipe(char **p)
{
	if (*p) {
		explicit_bzero(*p, strlen(*p));
		free(*p);
		*p = NULL;
	}
}

void nf_rcreds_free(struct nf_rcreds *c)
{
	wipe(&c->key);
	wipe(&c->secret);
	wipe(&c->token);
	wipe(&c->region);
	wipe(&c->source);
}
