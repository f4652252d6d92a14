/* calbin/lines.c — a line reader with a bounded window.
 *
 * The text inputs of a package can be large (a PLD dump of the sample has
 * 444,610 commands, seed §7.2); every parser reads them through here: one
 * buffer of chunk + maxline bytes, refilled with read(2), a callback per
 * line.  Nothing of the file is kept beyond the line being looked at. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calbin/internal.h"

int cb_read_lines(int fd, size_t chunk, size_t maxline, cb_line_fn fn, void *arg,
		  cb_chunk_fn chunk_fn, void *chunk_arg, uint64_t *bytes)
{
	size_t cap;
	if (__builtin_add_overflow(chunk, maxline, &cap) || chunk == 0 || maxline == 0)
		return -EINVAL;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	size_t have = 0;        /* bytes of the current (partial) line kept */
	bool skipping = false;  /* inside a line longer than maxline */
	uint64_t lineno = 0, total = 0;
	int rc = 0;
	for (;;) {
		ssize_t n;
		do
			n = read(fd, buf + have, cap - have);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0) {
			if (have && !skipping)
				rc = fn(arg, buf, have, ++lineno, false);
			break;
		}
		if (chunk_fn)
			chunk_fn(chunk_arg, buf + have, (size_t)n);
		total += (uint64_t)n;
		size_t end = have + (size_t)n, start = 0;
		size_t scan = have;
		for (;;) {
			char *nl = memchr(buf + scan, '\n', end - scan);
			if (!nl)
				break;
			size_t len = (size_t)(nl - buf) - start;
			if (skipping)
				skipping = false;
			else if ((rc = fn(arg, buf + start, len, ++lineno, false)) != 0)
				goto out;
			start = scan = (size_t)(nl - buf) + 1;
		}
		/* The partial line at the end moves to the front. */
		have = end - start;
		if (skipping) {
			have = 0;
		} else if (have > maxline) {
			/* Longer than allowed: report its head, skip to its end. */
			if ((rc = fn(arg, buf + start, maxline, ++lineno, true)) != 0)
				goto out;
			skipping = true;
			have = 0;
		} else if (start) {
			memmove(buf, buf + start, have);
		}
	}
out:
	if (bytes)
		*bytes = total;
	free(buf);
	return rc;
}
