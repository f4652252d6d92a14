/* fs/log.c — where the daemon's messages go. */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

#include "fs/context.h"

void nf_log(const struct nf_fs *fs, int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (fs->foreground) {
		fputs("ninferfs: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	} else {
		vsyslog(prio, fmt, ap);
	}
	va_end(ap);
}
