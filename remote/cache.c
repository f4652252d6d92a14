/* remote/cache.c — the local block cache: one file per block.
 *
 * A block is NF_RCACHE_BLOCK bytes of one file, aligned (the last block of
 * a file is shorter), keyed by (set, file index, block number, validator):
 * the set is the caller's set key (the artifact id) and the validator the
 * file's ETag (or Last-Modified), so a block of an object that has since
 * changed is simply never asked for again.  The file name is a SHA-256 of
 * the key; the file holds a header with the key itself, the data length
 * and a SHA-256 of the data, then the data.  Every block is verified on
 * use (magic, key, length, digest); a foreign, torn or corrupted block is
 * removed and reported as a miss, so it is fetched again.  SHA-256 because
 * it is the digest the project already links (OpenSSL EVP) and runs at
 * ~1.5-2 GB/s with the SHA extensions (under a millisecond per block, well
 * below a network round trip); a fast non-cryptographic hash would also do
 * for torn writes, but not for a directory someone else can write into.
 *
 * Writers make a private temp file (O_EXCL) and rename(2) it into place,
 * so a reader sees a whole block or none; a writer killed half way leaves
 * only a temp file, which is never read and is swept by a later eviction.
 * fsync before the rename is off by default (opts.cache_fsync): after a
 * power loss a renamed block may be torn, which the digest detects.
 *
 * Eviction is LRU by mtime: a hit sets the block's times to now.  When the
 * bytes this process believes are in the directory pass the limit (or
 * every 64 stores, since other processes store too), the directory is
 * scanned under flock(.lock) and the oldest blocks are unlinked until 90%
 * of the limit remains.  Two processes share a directory with nothing but
 * the file system between them: O_EXCL temp names, atomic renames, the
 * eviction lock; a block unlinked while another process reads it stays
 * readable through the open descriptor. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "remote/internal.h"

#define MAGIC "NFRBLK01"
#define HDR_FIXED 56   /* magic 8, key_len 4, pad 4, data_len 8, sha256 32 */
#define RESCAN_EVERY 64
#define TMP_STALE_SECS 600
/* the block number of a file's record (nf_rcache_put_file): no block has it */
#define REC_BLOCK UINT64_MAX

struct nf_rcache {
	int dirfd;
	char *set;
	uint64_t limit;
	bool fsync_blocks;
	pthread_mutex_t lock;    /* used, puts */
	uint64_t used;
	unsigned puts;
};

static void put_le32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *b, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | b[i];
	return v;
}

static int sha256(const void *p, size_t n, uint8_t out[32])
{
	unsigned len = 0;
	return EVP_Digest(p, n, out, &len, EVP_sha256(), NULL) == 1 && len == 32 ? 0 : -EIO;
}

/* the key text and the block's file name (b-HASH.blk; a file record's
 * f-HASH.rec) */
static int block_key(const struct nf_rcache *c, uint32_t file, uint64_t block, const char *etag,
		     char **key, char name[72])
{
	uint8_t h[32];
	if (asprintf(key, "%s\n%" PRIu32 "\n%" PRIu64 "\n%s", c->set, file, block, etag) < 0) {
		*key = NULL;
		return -ENOMEM;
	}
	if (sha256(*key, strlen(*key), h) < 0) {
		free(*key);
		return -EIO;
	}
	memcpy(name, block == REC_BLOCK ? "f-" : "b-", 2);
	for (int i = 0; i < 16; i++)
		snprintf(name + 2 + 2 * i, 3, "%02x", h[i]);
	memcpy(name + 34, block == REC_BLOCK ? ".rec" : ".blk", 5);
	return 0;
}

static uint64_t scan(struct nf_rcache *c, bool evict);

int nf_rcache_open(struct nf_rcache **out, const char *dir, uint64_t limit, const char *set,
		   bool fsync_blocks, char **err)
{
	struct nf_rcache *c;
	*out = NULL;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int e = errno;
		if (asprintf(err, "cache directory %s: %s", dir, strerror(e)) < 0)
			*err = NULL;
		return -e;
	}
	c = calloc(1, sizeof *c);
	if (c == NULL)
		return -ENOMEM;
	c->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	c->set = strdup(set);
	if (c->dirfd < 0 || c->set == NULL) {
		int e = c->dirfd < 0 ? errno : ENOMEM;
		if (asprintf(err, "cache directory %s: %s", dir, strerror(e)) < 0)
			*err = NULL;
		if (c->dirfd >= 0)
			close(c->dirfd);
		free(c->set);
		free(c);
		return -e;
	}
	c->limit = limit;
	c->fsync_blocks = fsync_blocks;
	pthread_mutex_init(&c->lock, NULL);
	c->used = scan(c, false);
	*out = c;
	return 0;
}

int nf_rcache_set_key(struct nf_rcache *c, const char *set)
{
	char *d = strdup(set);
	if (d == NULL)
		return -ENOMEM;
	free(c->set);
	c->set = d;
	return 0;
}

void nf_rcache_close(struct nf_rcache *c)
{
	if (c == NULL)
		return;
	close(c->dirfd);
	free(c->set);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static int read_full(int fd, void *buf, size_t n, off_t off)
{
	size_t done = 0;
	while (done < n) {
		ssize_t k = pread(fd, (char *)buf + done, n - done, off + (off_t)done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -EIO;
		done += (size_t)k;
	}
	return 0;
}

int nf_rcache_get(struct nf_rcache *c, uint32_t file, uint64_t block, const char *etag,
		  void *buf, uint64_t len)
{
	char *key, name[72];
	uint8_t hdr[HDR_FIXED], sum[32];
	struct stat sb;
	size_t klen;
	int fd, rc = -ENOENT;
	char *kbuf = NULL;

	if (block_key(c, file, block, etag, &key, name) < 0)
		return -ENOENT;
	klen = strlen(key);
	fd = openat(c->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		free(key);
		return -ENOENT;
	}
	kbuf = malloc(klen ? klen : 1);
	if (kbuf == NULL || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size != HDR_FIXED + klen + len || read_full(fd, hdr, HDR_FIXED, 0) < 0 ||
	    memcmp(hdr, MAGIC, 8) != 0 || get_le(hdr + 8, 4) != klen || get_le(hdr + 16, 8) != len ||
	    read_full(fd, kbuf, klen, HDR_FIXED) < 0 || memcmp(kbuf, key, klen) != 0 ||
	    read_full(fd, buf, len, (off_t)(HDR_FIXED + klen)) < 0 || sha256(buf, len, sum) < 0 ||
	    memcmp(sum, hdr + 24, 32) != 0) {
		/* foreign, torn or corrupt: drop it so it is fetched again */
		if (kbuf != NULL)
			unlinkat(c->dirfd, name, 0);
	} else {
		futimens(fd, NULL); /* LRU: used now */
		rc = 0;
	}
	close(fd);
	free(kbuf);
	free(key);
	return rc;
}

static int write_full(int fd, const void *buf, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t k = write(fd, (const char *)buf + done, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -EIO;
		done += (size_t)k;
	}
	return 0;
}

int nf_rcache_put(struct nf_rcache *c, uint32_t file, uint64_t block, const char *etag,
		  const void *buf, uint64_t len)
{
	char *key, name[72], tmp[128];
	uint8_t hdr[HDR_FIXED] = {0};
	uint64_t rnd = 0;
	size_t klen;
	int fd, rc;
	bool rescan;

	if (len + HDR_FIXED > c->limit)
		return -EFBIG;
	rc = block_key(c, file, block, etag, &key, name);
	if (rc < 0)
		return rc;
	klen = strlen(key);
	memcpy(hdr, MAGIC, 8);
	put_le32(hdr + 8, (uint32_t)klen);
	put_le64(hdr + 16, len);
	if (sha256(buf, len, hdr + 24) < 0) {
		free(key);
		return -EIO;
	}
	if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != sizeof rnd)
		rnd = (uint64_t)(uintptr_t)&rnd ^ (uint64_t)time(NULL);
	snprintf(tmp, sizeof tmp, ".tmp-%.32s-%d-%016" PRIx64, name + 2, (int)getpid(), rnd);
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		free(key);
		return -errno;
	}
	rc = write_full(fd, hdr, sizeof hdr);
	if (rc == 0)
		rc = write_full(fd, key, klen);
	if (rc == 0)
		rc = write_full(fd, buf, len);
	if (rc == 0 && c->fsync_blocks && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -EIO;
	if (rc == 0 && renameat(c->dirfd, tmp, c->dirfd, name) < 0)
		rc = -errno;
	if (rc < 0)
		unlinkat(c->dirfd, tmp, 0);
	free(key);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&c->lock);
	c->used += HDR_FIXED + klen + len;
	rescan = c->used > c->limit || ++c->puts % RESCAN_EVERY == 0;
	pthread_mutex_unlock(&c->lock);
	if (rescan) {
		uint64_t u = scan(c, true);
		pthread_mutex_lock(&c->lock);
		c->used = u;
		pthread_mutex_unlock(&c->lock);
	}
	return 0;
}

/* ---- file records ---------------------------------------------------------
 * Stored as a block of the file with a number no block has (REC_BLOCK) and
 * an empty validator, so they share the blocks' keys, checks, atomic
 * writes and LRU eviction; only their names differ (f-*.rec, not b-*.blk).
 * The data: magic, size (le64), kind, the validator NUL-padded to 128
 * bytes. */
#define REC_MAGIC "NFRFILE1"
#define REC_LEN (8 + 8 + 1 + 128)

int nf_rcache_put_file(struct nf_rcache *c, uint32_t file, uint64_t size, char kind,
		       const char *validator)
{
	uint8_t rec[REC_LEN] = {0};
	size_t n = strlen(validator);

	if ((kind != 'E' && kind != 'L') || n == 0 || n >= 128)
		return -EINVAL;
	memcpy(rec, REC_MAGIC, 8);
	put_le64(rec + 8, size);
	rec[16] = (uint8_t)kind;
	memcpy(rec + 17, validator, n);
	return nf_rcache_put(c, file, REC_BLOCK, "", rec, sizeof rec);
}

int nf_rcache_get_file(struct nf_rcache *c, uint32_t file, uint64_t *size, char *kind,
		       char validator[128])
{
	uint8_t rec[REC_LEN];

	if (nf_rcache_get(c, file, REC_BLOCK, "", rec, sizeof rec) < 0)
		return -ENOENT;
	/* the digest matched, so this is what a writer stored: a record of
	 * another format (or a block that happens to have this key) is
	 * still refused */
	if (memcmp(rec, REC_MAGIC, 8) != 0 || (rec[16] != 'E' && rec[16] != 'L') || rec[17] == 0 ||
	    memchr(rec + 17, 0, 128) == NULL)
		return -ENOENT;
	*size = get_le(rec + 8, 8);
	*kind = (char)rec[16];
	memcpy(validator, rec + 17, 128);
	return 0;
}

struct entry {
	struct timespec when;
	uint64_t bytes;
	char name[40];
};

static int oldest_first(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->when.tv_sec != y->when.tv_sec)
		return x->when.tv_sec < y->when.tv_sec ? -1 : 1;
	return x->when.tv_nsec < y->when.tv_nsec ? -1 : x->when.tv_nsec > y->when.tv_nsec;
}

/* Sums the blocks; with evict, under the directory's lock, removes the
 * oldest until 90% of the limit is left, and stale temp files.  Returns
 * the bytes left. */
static uint64_t scan(struct nf_rcache *c, bool evict)
{
	int dfd = openat(c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), lfd = -1;
	DIR *d;
	struct dirent *de;
	struct entry *es = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	time_t now = time(NULL);

	if (dfd < 0)
		return 0;
	if (evict) {
		lfd = openat(c->dirfd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (lfd >= 0)
			flock(lfd, LOCK_EX);
	}
	d = fdopendir(dfd);
	if (d == NULL) {
		close(dfd);
		goto out;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat sb;
		bool blk = (strncmp(de->d_name, "b-", 2) == 0 || strncmp(de->d_name, "f-", 2) == 0) &&
			   strlen(de->d_name) < sizeof es->name;
		bool tmp = strncmp(de->d_name, ".tmp-", 5) == 0;
		if ((!blk && !tmp) || fstatat(c->dirfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(sb.st_mode))
			continue;
		if (tmp) {
			if (evict && now - sb.st_mtime > TMP_STALE_SECS)
				unlinkat(c->dirfd, de->d_name, 0);
			continue;
		}
		total += (uint64_t)sb.st_size;
		if (!evict)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct entry *ne = realloc(es, nc * sizeof *es);
			if (ne == NULL)
				break;
			es = ne;
			cap = nc;
		}
		es[n].when = sb.st_mtim;
		es[n].bytes = (uint64_t)sb.st_size;
		snprintf(es[n].name, sizeof es[n].name, "%s", de->d_name);
		n++;
	}
	closedir(d);
	if (evict && total > c->limit) {
		uint64_t goal = c->limit / 10 * 9;
		qsort(es, n, sizeof *es, oldest_first);
		for (size_t i = 0; i < n && total > goal; i++)
			if (unlinkat(c->dirfd, es[i].name, 0) == 0 || errno == ENOENT)
				total -= es[i].bytes;
	}
out:
	free(es);
	if (lfd >= 0)
		close(lfd); /* drops the lock */
	return total;
}
