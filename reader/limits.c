/* reader/limits.c — limits the three programs (ninfer-check, ninfer-pack,
 * ninferfs) share: sizes given on the command line, the descriptor limit,
 * and the guard of the mapped JSON directory. */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "reader/artifact.h"

uint64_t nf_raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit want = rl;
		/* RLIM_INFINITY is refused for descriptors: fs.nr_open is the
		 * kernel's real ceiling (1048576 by default) */
		want.rlim_cur = rl.rlim_max == RLIM_INFINITY ? (rlim_t)1 << 20 : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			rl = want;
	}
	return (uint64_t)rl.rlim_cur;
}

int nf_parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case 'K': case 'k': shift = 10; break;
	case 'M': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	}
	if (shift)
		end++;
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' && shift)
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* The mapped JSON (header.c) raises SIGBUS when the entry shrinks under
 * the parser: that is the entry changing while it is read, an operational
 * failure (exit 8) with a message, not a crash. */
static void on_sigbus(int sig)
{
	static const char msg[] = ": the entry file shrank while its JSON directory was being "
				  "read (SIGBUS); nothing was checked\n";
	const char *prog = program_invocation_short_name;
	(void)sig;
	if (write(STDERR_FILENO, prog, strlen(prog)) < 0 ||
	    write(STDERR_FILENO, msg, sizeof msg - 1) < 0)
		_exit(8);
	_exit(8);
}

void nf_guard_mapped_json(bool on)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on ? on_sigbus : SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}
