/* tests/remote/nf-remote-get.c — read byte ranges of a URL through the
 * remote engine (the shell tests' driver, and the sketch of the adapter
 * the reader and the daemon will use).
 *
 *   nf-remote-get [-o KEY=VALUE[,...]]... [-p PART]... [-s STATS] URL CMD...
 *
 *   -o   engine options (remote.h: nf_remote_opts_set)
 *   -p   a part name, file 1, 2, ... beside the entry (file 0)
 *   -s   per-file stats as JSON lines to STATS ("-": stderr) at exit
 *   -k   keep going after a failed command (the exit status is still 1)
 *
 * Commands, run in order on one set and one thread:
 *   read FILE OFF LEN              one segment, bytes to stdout
 *   segs FILE OFF:LEN[,OFF:LEN]... several segments in one call, bytes to
 *                                  stdout in the order given
 *   seq FILE OFF LEN CHUNK         sequential CHUNK-sized reads through a
 *                                  stream (the prefetcher), bytes to stdout
 *   sreads FILE OFF:LEN[,...]      one stream read per span, in the order given
 *   stat FILE                      "SIZE ETAG" on stdout
 *   path FILE:OFF:LEN[,...]        the stream's path (nf_remote_stream_path):
 *                                  where the seq reads after it go
 *   path @LIST                     the same, the list read from the file LIST
 *                                  (paths longer than an argument may be)
 *   reached                        nf_remote_stream_reached's file (or -1)
 *                                  as "reached N" on stderr
 *   peak                           nf_remote_prefetch_peak as "peak BYTES"
 *                                  on stderr
 *   threads N FILE OFF LEN CHUNK   N threads, each with its own thread handle
 *                                  and stream, read the range sequentially at
 *                                  once; all copies must agree; one to stdout
 *   held FILE OFF LEN CHUNK        a read by reference (nf_remote_stream_read_ref)
 *                                  held across its stream's end and a new
 *                                  stream's reads; bytes of [OFF, OFF+LEN)
 *                                  to stdout, "refs N BYTES" to stderr
 *   touch PATH / wait PATH         create PATH / wait (<= 30 s) until it exists,
 *                                  to step in lockstep with a test script
 *
 * Exit status: 0, 1 when a read failed (the error and the file's reason on
 * stderr), 2 for a usage or open error.
 *
 * The adapter, as the integration will do it: nf_remote_open(URL) once;
 * read the entry's header and JSON with nf_remote_pread(file 0); hand the
 * files table's part names to nf_remote_set_parts(); one
 * nf_remote_thread per reading thread (the daemon's per-thread ring slot);
 * one nf_remote_stream per open file handle; the range map's segment lists
 * go to nf_remote_stream_read() (or nf_remote_read()) unchanged; the
 * files.json/stats rows come from nf_remote_file_stats(). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote/remote.h"

struct ctx {
	struct nf_remote *r;
	struct nf_remote_thread *t;
	struct nf_remote_stream *s;
};

static void usage(void)
{
	fprintf(stderr, "usage: nf-remote-get [-o KEY=VALUE]... [-p PART]... [-s STATS] URL CMD...\n");
	exit(2);
}

static uint64_t num(const char *s)
{
	char *e;
	errno = 0;
	unsigned long long v = strtoull(s, &e, 0);
	if (errno || *e || *s == '-')
		usage();
	return v;
}

static int out(const void *p, uint64_t n)
{
	return fwrite(p, 1, n, stdout) == n ? 0 : -EIO;
}

static void report(struct ctx *c, const char *what, uint32_t file, int rc)
{
	struct nf_remote_file_stats st;
	if (nf_remote_file_stats(c->r, file, &st) == 0)
		fprintf(stderr, "nf-remote-get: %s: %s: %s (%s: %s)\n", what, st.url, strerror(-rc),
			nf_remote_status_name(st.status), st.reason);
	else
		fprintf(stderr, "nf-remote-get: %s: %s\n", what, strerror(-rc));
}

static int cmd_segs(struct ctx *c, uint32_t file, char *list)
{
	size_t n = 1;
	for (char *p = list; *p; p++)
		n += *p == ',';
	struct nf_io *ios = calloc(n, sizeof *ios);
	char **bufs = calloc(n, sizeof *bufs);
	int rc = ios && bufs ? 0 : -ENOMEM;
	size_t k = 0;
	for (char *tok = strtok(list, ","); rc == 0 && tok; tok = strtok(NULL, ","), k++) {
		char *colon = strchr(tok, ':');
		if (colon == NULL)
			usage();
		*colon = '\0';
		ios[k] = (struct nf_io){.file = file, .offset = num(tok), .length = num(colon + 1)};
		bufs[k] = malloc(ios[k].length ? ios[k].length : 1);
		ios[k].dst = bufs[k];
		if (bufs[k] == NULL)
			rc = -ENOMEM;
	}
	if (rc == 0)
		rc = nf_remote_read(c->t, ios, k);
	for (size_t i = 0; rc == 0 && i < k; i++)
		rc = out(bufs[i], ios[i].length);
	if (rc < 0)
		report(c, "segs", file, rc);
	for (size_t i = 0; bufs && i < n; i++)
		free(bufs[i]);
	free(bufs);
	free(ios);
	return rc;
}

/* The contents of file `name` as a string (a trailing newline cut), or
 * NULL with a message. */
static char *slurp(const char *name)
{
	FILE *f = fopen(name, "r");
	char *buf = NULL;
	size_t len = 0;

	if (f == NULL || getdelim(&buf, &len, '\0', f) < 0) {
		fprintf(stderr, "nf-remote-get: %s: cannot read\n", name);
		free(buf);
		buf = NULL;
	} else {
		buf[strcspn(buf, "\n")] = '\0';
	}
	if (f)
		fclose(f);
	return buf;
}

static int cmd_path(struct ctx *c, char *list)
{
	size_t n = 1, k = 0;
	char *owned = NULL;
	int rc;

	if (list[0] == '@' && (list = owned = slurp(list + 1)) == NULL)
		return -EINVAL;
	for (const char *p = list; *p; p++)
		n += *p == ',';
	if (c->s == NULL && (rc = nf_remote_stream_new(c->r, &c->s)) < 0) {
		free(owned);
		return rc;
	}
	struct nf_io *ios = calloc(n, sizeof *ios);
	if (ios == NULL) {
		free(owned);
		return -ENOMEM;
	}
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		char *a = strchr(tok, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		if (b == NULL)
			usage();
		*a = *b = '\0';
		ios[k++] = (struct nf_io){.file = (uint32_t)num(tok), .offset = num(a + 1),
					  .length = num(b + 1)};
	}
	nf_remote_stream_path(c->s, ios, k);
	free(ios);
	free(owned);
	return 0;
}

static int cmd_seq(struct ctx *c, uint32_t file, uint64_t off, uint64_t len, uint64_t chunk)
{
	char *buf;
	int rc = 0;
	if (chunk == 0)
		usage();
	if (c->s == NULL && (rc = nf_remote_stream_new(c->r, &c->s)) < 0)
		return rc;
	buf = malloc(chunk);
	if (buf == NULL)
		return -ENOMEM;
	for (uint64_t at = off; rc == 0 && at < off + len; at += chunk) {
		uint64_t n = off + len - at < chunk ? off + len - at : chunk;
		struct nf_io io = {.file = file, .offset = at, .length = n, .dst = buf};
		rc = nf_remote_stream_read(c->t, c->s, &io, 1);
		if (rc == 0)
			rc = out(buf, n);
	}
	if (rc < 0)
		report(c, "seq", file, rc);
	free(buf);
	return rc;
}

struct worker {
	struct nf_remote *r;
	uint32_t file;
	uint64_t off, len, chunk;
	char *buf;
	int rc;
};

static void *seq_worker(void *arg)
{
	struct worker *w = arg;
	struct nf_remote_thread *t = NULL;
	struct nf_remote_stream *s = NULL;
	w->rc = nf_remote_thread_new(w->r, &t);
	if (w->rc == 0)
		w->rc = nf_remote_stream_new(w->r, &s);
	for (uint64_t at = 0; w->rc == 0 && at < w->len; at += w->chunk) {
		uint64_t n = w->len - at < w->chunk ? w->len - at : w->chunk;
		struct nf_io io = {.file = w->file, .offset = w->off + at, .length = n,
				   .dst = w->buf + at};
		w->rc = nf_remote_stream_read(t, s, &io, 1);
	}
	nf_remote_stream_free(s);
	nf_remote_thread_free(t);
	return NULL;
}

static int cmd_threads(struct ctx *c, unsigned n, uint32_t file, uint64_t off, uint64_t len,
		       uint64_t chunk)
{
	struct worker w[16];
	pthread_t th[16];
	int rc = 0;
	if (n == 0 || n > 16 || chunk == 0)
		usage();
	for (unsigned i = 0; i < n; i++) {
		w[i] = (struct worker){.r = c->r, .file = file, .off = off, .len = len, .chunk = chunk,
				       .buf = malloc(len ? len : 1)};
		if (w[i].buf == NULL || pthread_create(&th[i], NULL, seq_worker, &w[i]) != 0) {
			free(w[i].buf);
			n = i;
			rc = -ENOMEM;
			break;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		if (rc == 0 && w[i].rc < 0)
			rc = w[i].rc;
		if (rc == 0 && memcmp(w[i].buf, w[0].buf, len) != 0) {
			fprintf(stderr, "nf-remote-get: threads: thread %u read other bytes\n", i);
			rc = -EIO;
		}
	}
	if (rc == 0)
		rc = out(w[0].buf, len);
	else
		report(c, "threads", file, rc);
	for (unsigned i = 0; i < n; i++)
		free(w[i].buf);
	return rc;
}

static int cmd_sreads(struct ctx *c, uint32_t file, char *list)
{
	int rc = 0;
	if (c->s == NULL && (rc = nf_remote_stream_new(c->r, &c->s)) < 0)
		return rc;
	for (char *tok = strtok(list, ","); rc == 0 && tok; tok = strtok(NULL, ",")) {
		char *colon = strchr(tok, ':');
		if (colon == NULL)
			usage();
		*colon = '\0';
		struct nf_io io = {.file = file, .offset = num(tok), .length = num(colon + 1)};
		char *buf = malloc(io.length ? io.length : 1);
		io.dst = buf;
		rc = buf ? nf_remote_stream_read(c->t, c->s, &io, 1) : -ENOMEM;
		if (rc == 0)
			rc = out(buf, io.length);
		free(buf);
	}
	if (rc < 0)
		report(c, "sreads", file, rc);
	return rc;
}

/* held FILE OFF LEN CHUNK: the hold of nf_remote_stream_read_ref against
 * a reset.  [OFF-CHUNK, OFF) is read first (so that the next read is
 * sequential and comes from chunks), then [OFF, OFF+CHUNK) by reference;
 * then the stream is freed (every chunk of it dropped and cancelled) and a
 * new one reads the rest of [OFF, OFF+LEN) on another thread handle, its
 * windows reusing freed buffers; only then are the held bytes copied out
 * and released.  [OFF, OFF+LEN) to stdout, "refs N BYTES" to stderr. */
static int cmd_held(struct ctx *c, uint32_t file, uint64_t off, uint64_t len, uint64_t chunk)
{
	struct nf_remote_ref refs[8];
	struct nf_remote_thread *t2 = NULL;
	struct nf_remote_stream *s2 = NULL;
	size_t nrefs = 0;
	uint64_t held = 0;
	char *buf = malloc(len ? len : 1), *pre = malloc(chunk ? chunk : 1);
	int rc = buf && pre && chunk <= off && chunk <= len ? 0 : -EINVAL;

	if (rc == 0 && c->s == NULL)
		rc = nf_remote_stream_new(c->r, &c->s);
	if (rc == 0) {
		struct nf_io io = {.file = file, .offset = off - chunk, .length = chunk, .dst = pre};
		rc = nf_remote_stream_read(c->t, c->s, &io, 1);
	}
	if (rc == 0) {
		struct nf_io io = {.file = file, .offset = off, .length = chunk, .dst = buf};
		rc = nf_remote_stream_read_ref(c->t, c->s, &io, 1, refs, 8, &nrefs);
	}
	nf_remote_stream_free(c->s);
	c->s = NULL;
	if (rc == 0)
		rc = nf_remote_thread_new(c->r, &t2);
	if (rc == 0)
		rc = nf_remote_stream_new(c->r, &s2);
	for (uint64_t at = chunk; rc == 0 && at < len; at += chunk) {
		struct nf_io io = {.file = file, .offset = off + at,
				   .length = len - at < chunk ? len - at : chunk, .dst = buf + at};
		rc = nf_remote_stream_read(t2, s2, &io, 1);
	}
	for (size_t i = 0; i < nrefs; i++) {
		memcpy(refs[i].dst, refs[i].src, refs[i].len);
		held += refs[i].len;
	}
	nf_remote_release(c->t);
	nf_remote_stream_free(s2);
	nf_remote_thread_free(t2);
	fprintf(stderr, "refs %zu %" PRIu64 "\n", nrefs, held);
	if (rc == 0)
		rc = out(buf, len);
	else
		report(c, "held", file, rc);
	free(buf);
	free(pre);
	return rc;
}

static int wait_for(const char *path)
{
	for (int i = 0; i < 3000; i++) {
		if (access(path, F_OK) == 0)
			return 0;
		usleep(10000);
	}
	fprintf(stderr, "nf-remote-get: wait %s: timed out\n", path);
	return -ETIMEDOUT;
}

static void print_stats(struct ctx *c, const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stderr : fopen(path, "w");
	if (f == NULL)
		return;
	for (uint32_t i = 0; i < nf_remote_nfiles(c->r); i++) {
		struct nf_remote_file_stats st;
		nf_remote_file_stats(c->r, i, &st);
		fprintf(f, "{\"file\": %" PRIu32 ", \"url\": \"%s\", \"status\": \"%s\", \"http\": %d, "
			"\"size\": %" PRId64 ", \"bytes\": %" PRIu64 ", \"requests\": %" PRIu64
			", \"retries\": %" PRIu64 ", \"cache_hits\": %" PRIu64 ", \"cache_misses\": %"
			PRIu64 ", \"prefetch_hits\": %" PRIu64 ", \"prefetch_bytes\": %" PRIu64 "}\n",
			i, st.url, nf_remote_status_name(st.status), st.http_status,
			st.size == UINT64_MAX ? (int64_t)-1 : (int64_t)st.size, st.bytes_fetched,
			st.requests, st.retries, st.cache_hits, st.cache_misses, st.prefetch_hits,
			st.prefetch_bytes);
		/* the reason is free text: on its own line, not in the JSON */
		fprintf(f, "# file %" PRIu32 " etag %s reason: %s\n", i, st.etag, st.reason);
	}
	if (f != stderr)
		fclose(f);
}

int main(int argc, char **argv)
{
	struct nf_remote_opts o;
	struct ctx c = {0};
	const char *parts[256], *stats = NULL;
	uint32_t nparts = 0;
	char *err = NULL;
	int opt, rc = 0, failed = 0;
	bool keep_going = false;

	nf_remote_opts_init(&o);
	while ((opt = getopt(argc, argv, "+ko:p:s:")) != -1) {
		switch (opt) {
		case 'o':
			for (char *kv = strtok(optarg, ","); kv; kv = strtok(NULL, ",")) {
				if ((rc = nf_remote_opts_set(&o, kv, &err)) < 0) {
					fprintf(stderr, "nf-remote-get: %s\n",
						err ? err : "unknown option");
					free(err);
					return 2;
				}
			}
			break;
		case 'p':
			if (nparts == 256)
				usage();
			parts[nparts++] = optarg;
			break;
		case 's':
			stats = optarg;
			break;
		case 'k':
			keep_going = true;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();
	rc = nf_remote_open(argv[optind++], &o, &c.r, &err);
	if (rc == 0 && nparts)
		rc = nf_remote_set_parts(c.r, parts, nparts, &err);
	if (rc == 0)
		rc = nf_remote_thread_new(c.r, &c.t);
	if (rc < 0) {
		fprintf(stderr, "nf-remote-get: %s\n", err ? err : strerror(-rc));
		free(err);
		nf_remote_close(c.r);
		return 2;
	}
	while (rc == 0 && optind < argc) {
		const char *cmd = argv[optind++];
		int left = argc - optind;
		if (strcmp(cmd, "read") == 0 && left >= 3) {
			uint32_t file = (uint32_t)num(argv[optind]);
			uint64_t off = num(argv[optind + 1]), len = num(argv[optind + 2]);
			char *buf = malloc(len ? len : 1);
			optind += 3;
			rc = buf ? nf_remote_pread(c.t, file, buf, len, off) : -ENOMEM;
			if (rc == 0)
				rc = out(buf, len);
			else
				report(&c, "read", file, rc);
			free(buf);
		} else if (strcmp(cmd, "segs") == 0 && left >= 2) {
			uint32_t file = (uint32_t)num(argv[optind]);
			rc = cmd_segs(&c, file, argv[optind + 1]);
			optind += 2;
		} else if (strcmp(cmd, "sreads") == 0 && left >= 2) {
			uint32_t file = (uint32_t)num(argv[optind]);
			rc = cmd_sreads(&c, file, argv[optind + 1]);
			optind += 2;
		} else if (strcmp(cmd, "seq") == 0 && left >= 4) {
			rc = cmd_seq(&c, (uint32_t)num(argv[optind]), num(argv[optind + 1]),
				     num(argv[optind + 2]), num(argv[optind + 3]));
			optind += 4;
		} else if (strcmp(cmd, "held") == 0 && left >= 4) {
			rc = cmd_held(&c, (uint32_t)num(argv[optind]), num(argv[optind + 1]),
				      num(argv[optind + 2]), num(argv[optind + 3]));
			optind += 4;
		} else if (strcmp(cmd, "threads") == 0 && left >= 5) {
			rc = cmd_threads(&c, (unsigned)num(argv[optind]), (uint32_t)num(argv[optind + 1]),
					 num(argv[optind + 2]), num(argv[optind + 3]), num(argv[optind + 4]));
			optind += 5;
		} else if (strcmp(cmd, "stat") == 0 && left >= 1) {
			struct nf_remote_stat st;
			uint32_t file = (uint32_t)num(argv[optind++]);
			rc = nf_remote_stat(c.t, file, &st);
			if (rc == 0)
				printf("%" PRIu64 " %s\n", st.size, st.etag[0] ? st.etag : st.lastmod);
			else
				report(&c, "stat", file, rc);
		} else if (strcmp(cmd, "path") == 0 && left >= 1) {
			rc = cmd_path(&c, argv[optind++]);
		} else if (strcmp(cmd, "peak") == 0) {
			fprintf(stderr, "peak %" PRIu64 "\n", nf_remote_prefetch_peak(c.r));
		} else if (strcmp(cmd, "reached") == 0) {
			uint32_t f = c.s ? nf_remote_stream_reached(c.s) : UINT32_MAX;
			fprintf(stderr, "reached %d\n", f == UINT32_MAX ? -1 : (int)f);
		} else if (strcmp(cmd, "touch") == 0 && left >= 1) {
			fflush(stdout);
			FILE *f = fopen(argv[optind++], "w");
			rc = f ? (fclose(f), 0) : -errno;
		} else if (strcmp(cmd, "wait") == 0 && left >= 1) {
			rc = wait_for(argv[optind++]);
		} else {
			usage();
		}
		if (rc < 0 && keep_going) {
			failed = 1;
			rc = 0;
		}
	}
	if (failed)
		rc = -EIO;
	fflush(stdout);
	if (stats)
		print_stats(&c, stats);
	nf_remote_stream_free(c.s);
	nf_remote_thread_free(c.t);
	nf_remote_close(c.r);
	return rc == 0 ? 0 : 1;
}
