/* calbin/probe.c — does a directory look like a calbin package?  The
 * daemon's detection (issue 13: "detected by its root manifest and
 * model_memory_reserved_info.txt"), made from the top-level listing alone,
 * with the names walk.c classifies: the runtime metadata, and a *.yaml
 * other than hparam.yaml (the root manifest <model>.yaml; the check says
 * whether its stem is the package's name). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "calbin/mount.h"

static bool manifest_name(const char *n)
{
	size_t len = strlen(n);
	return len > 5 && strcmp(n + len - 5, ".yaml") == 0 && strcmp(n, "hparam.yaml") != 0;
}

int cb_package_probe(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOTDIR || errno == ENOENT ? 0 : -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return -e;
	}
	bool meta = false, manifest = false;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d)) && !(meta && manifest)) {
		meta |= strcmp(de->d_name, "model_memory_reserved_info.txt") == 0;
		manifest |= manifest_name(de->d_name);
	}
	int e = errno;
	closedir(d);
	if (!de && e && !(meta && manifest))
		return -e;
	return meta && manifest;
}
