/* bench/delay_proxy.c — a loopback TCP proxy that delays every byte by a
 * fixed time in each direction, so a connection through it sees an RTT of
 * twice the delay (tc netem is not in this kernel: bench/remote_read.sh).
 *
 *     delay-proxy LISTEN_PORTFILE TARGET_PORT DELAY_MS LIFETIME_S
 *
 * It listens on 127.0.0.1 (a free port, written to LISTEN_PORTFILE), and
 * forwards each connection to 127.0.0.1:TARGET_PORT.  The delay is latency,
 * not a rate limit: a direction keeps reading while earlier bytes wait, up
 * to PIPES x PIPE_BYTES in flight (back-pressure beyond), so the pipe stays
 * full as on a long fat link.
 *
 * Why C and splice: bench/delay_proxy.py copies every byte through Python
 * twice; on the 2-vCPU bench machine it took as much CPU as the readers it
 * measured, and more per byte with several connections, so a reader with
 * parallel connections (the mount's prefetch) measured the proxy.  Here the
 * bytes go socket -> pipe -> socket with splice(2): held in the kernel
 * while they wait, never copied to user space.
 *
 * Each direction is two threads: one splices what arrives into a free pipe
 * and queues it with its due time, the other sends each pipe when due.
 * Bench tooling: errors end the connection, except running out of
 * descriptors, where a new connection waits (in the backlog, or for its
 * pipes) until others end; the process ends after LIFETIME_S (and with
 * its parent, PR_SET_PDEATHSIG). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PIPES 64
#define PIPE_BYTES (1 << 20)

struct slot {
	int rd, wr;             /* the pipe */
	size_t n;               /* bytes in it */
	uint64_t due;           /* send at (ns, CLOCK_MONOTONIC) */
};

struct dir {                    /* one direction of a connection */
	int src, dst;
	uint64_t delay;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct slot s[PIPES];
	unsigned head, count;   /* queued slots: a ring */
	bool eof, dead;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void sleep_until(uint64_t ns)
{
	struct timespec t = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

/* reads src into the next free pipe, queues it; EOF or an error ends it */
static void *reader(void *arg)
{
	struct dir *d = arg;
	for (;;) {
		pthread_mutex_lock(&d->lock);
		while (d->count == PIPES && !d->dead)
			pthread_cond_wait(&d->cv, &d->lock);
		if (d->dead) {
			pthread_mutex_unlock(&d->lock);
			break;
		}
		struct slot *s = &d->s[(d->head + d->count) % PIPES];
		pthread_mutex_unlock(&d->lock);
		ssize_t n = splice(d->src, NULL, s->wr, NULL, PIPE_BYTES, SPLICE_F_MOVE);
		pthread_mutex_lock(&d->lock);
		if (n <= 0) {
			d->eof = true;
			pthread_cond_broadcast(&d->cv);
			pthread_mutex_unlock(&d->lock);
			break;
		}
		s->n = (size_t)n;
		s->due = now_ns() + d->delay;
		d->count++;
		pthread_cond_broadcast(&d->cv);
		pthread_mutex_unlock(&d->lock);
	}
	return NULL;
}

/* sends each queued pipe when due; then half-closes dst */
static void *sender(void *arg)
{
	struct dir *d = arg;
	for (;;) {
		pthread_mutex_lock(&d->lock);
		while (d->count == 0 && !d->eof && !d->dead)
			pthread_cond_wait(&d->cv, &d->lock);
		if (d->count == 0 || d->dead) {
			pthread_mutex_unlock(&d->lock);
			break;
		}
		struct slot *s = &d->s[d->head];
		pthread_mutex_unlock(&d->lock);
		sleep_until(s->due);
		bool ok = true;
		while (s->n > 0) {
			ssize_t n = splice(s->rd, NULL, d->dst, NULL, s->n, SPLICE_F_MOVE);
			if (n <= 0) {
				ok = false;
				break;
			}
			s->n -= (size_t)n;
		}
		pthread_mutex_lock(&d->lock);
		if (!ok) {
			d->dead = true;   /* the reader stops too */
			shutdown(d->src, SHUT_RD);
		} else {
			d->head = (d->head + 1) % PIPES;
			d->count--;
		}
		pthread_cond_broadcast(&d->cv);
		pthread_mutex_unlock(&d->lock);
		if (!ok)
			break;
	}
	shutdown(d->dst, SHUT_WR);
	return NULL;
}

static int dir_init(struct dir *d, int src, int dst, uint64_t delay)
{
	memset(d, 0, sizeof *d);
	d->src = src;
	d->dst = dst;
	d->delay = delay;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cv, NULL);
	for (int i = 0; i < PIPES; i++)
		d->s[i].rd = d->s[i].wr = -1;
	for (int i = 0; i < PIPES; i++) {
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0)
			return -1;
		d->s[i].rd = p[0];
		d->s[i].wr = p[1];
		(void)fcntl(p[1], F_SETPIPE_SZ, PIPE_BYTES);   /* smaller pipes still work */
	}
	return 0;
}

static void dir_free(struct dir *d)
{
	for (int i = 0; i < PIPES; i++) {
		if (d->s[i].rd >= 0)
			close(d->s[i].rd);
		if (d->s[i].wr >= 0)
			close(d->s[i].wr);
	}
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->cv);
}

struct conn {
	int client, server;
	uint64_t delay;
};

/* Both directions' pipes.  Out of descriptors (a connection takes
 * 4 x PIPES), it gives back what it got and waits for other connections
 * to end, up to 60 s: ending this one would make its reader retry, and a
 * reader whose retries run out fails the measurement.  Either way both
 * are left initialised, for dir_free. */
static int conn_dirs(const struct conn *c, struct dir *up, struct dir *down)
{
	for (int tries = 0;; tries++) {
		int e1 = dir_init(up, c->client, c->server, c->delay) < 0 ? errno : 0;
		int e2 = dir_init(down, c->server, c->client, c->delay) < 0 ? errno : 0;
		int e = e1 ? e1 : e2;
		if (e == 0)
			return 0;
		if ((e != EMFILE && e != ENFILE) || tries == 6000)
			return -1;
		dir_free(up);
		dir_free(down);
		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
	}
}

static void *serve(void *arg)
{
	struct conn *c = arg;
	struct dir *up = calloc(1, sizeof *up), *down = calloc(1, sizeof *down);
	/* both initialised whenever both were allocated */
	int ok = up != NULL && down != NULL && conn_dirs(c, up, down) == 0;
	pthread_t t[4];
	int nt = 0;
	if (ok) {
		void *(*fn[4])(void *) = {reader, sender, reader, sender};
		struct dir *arg[4] = {up, up, down, down};
		while (nt < 4 && pthread_create(&t[nt], NULL, fn[nt], arg[nt]) == 0)
			nt++;
		if (nt < 4) {   /* end the ones that run: no thread waits for a peer */
			for (int i = 0; i < 2; i++) {
				struct dir *d = i ? down : up;
				pthread_mutex_lock(&d->lock);
				d->dead = true;
				pthread_cond_broadcast(&d->cv);
				pthread_mutex_unlock(&d->lock);
			}
			shutdown(c->client, SHUT_RDWR);
			shutdown(c->server, SHUT_RDWR);
		}
		for (int i = 0; i < nt; i++)
			pthread_join(t[i], NULL);
	}
	if (up && down) {
		dir_free(up);
		dir_free(down);
	}
	free(up);
	free(down);
	close(c->client);
	close(c->server);
	free(c);
	return NULL;
}

static int upstream(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	if (s < 0)
		return -1;
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
		close(s);
		return -1;
	}
	return s;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: delay-proxy LISTEN_PORTFILE TARGET_PORT DELAY_MS LIFETIME_S\n");
		return 2;
	}
	int target = atoi(argv[2]);
	uint64_t delay = (uint64_t)(atof(argv[3]) * 1e6);
	unsigned lifetime = (unsigned)atoi(argv[4]);
	/* each connection holds pipes: as many descriptors as allowed (a
	 * reader of 69,001 requests ran the soft limit of 1024 out) */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_IGN);
	alarm(lifetime);   /* SIGALRM ends the process */

	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 64) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0) {
		perror("delay-proxy: listen");
		return 1;
	}
	/* the port file appears whole: written aside, then renamed */
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
	FILE *f = fopen(tmp, "w");
	if (f == NULL || fprintf(f, "%d\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0 ||
	    rename(tmp, argv[1]) < 0) {
		perror("delay-proxy: port file");
		return 1;
	}
	for (;;) {
		int cl = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (cl < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE) {
				/* out of descriptors: the connection waits in
				 * the backlog until others end (it used to end
				 * the proxy, and every reader after it) */
				nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
				continue;
			}
			perror("delay-proxy: accept");
			return 1;
		}
		setsockopt(cl, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		int sv = upstream(target);
		struct conn *c = sv >= 0 ? malloc(sizeof *c) : NULL;
		pthread_t t;
		if (c == NULL) {
			close(cl);
			if (sv >= 0)
				close(sv);
			continue;
		}
		*c = (struct conn){.client = cl, .server = sv, .delay = delay};
		if (pthread_create(&t, NULL, serve, c) != 0) {
			close(cl);
			close(sv);
			free(c);
			continue;
		}
		pthread_detach(t);
	}
}
