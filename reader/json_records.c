/* reader/json_records.c — the records of one table, one at a time.
 *
 * A table is either a parsed jansson array/object (the whole-text path) or
 * a range of the JSON text the root scan vouched for (streamed).  Streamed
 * records are parsed by two producer threads while the caller checks and
 * builds the model from the records before them: jansson's parse is most of
 * a large directory's read, and the model's checks about a third of it
 * (issue 6).  Batches of BATCH records are cut from the text in order (the
 * scan's nf_json_skip_value: fast), by whichever producer is free, and each
 * is parsed by the producer that owns its slot: slot k by producer k % 2,
 * which also frees that slot's records when the caller is done with them,
 * so memory is freed by the thread that allocated it (glibc frees into
 * another thread's arena under that arena's lock: slower than no thread).
 * At most QUEUE batches exist, so the records alive at once are bounded.  If
 * a thread cannot be started the caller cuts and parses itself: same
 * records, same order, same failures.
 *
 * The producers touch nothing but the text and the batches: findings, the
 * arena and *failed belong to the caller's thread.  jansson values are
 * handed over under the lock (jansson has no shared state once its hash
 * seed is set, which the root scan's first json_object() did). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

#define BATCH 256  /* records per batch */
#define NPROD 2    /* producer threads */
#define QUEUE 4    /* batches in flight: a multiple of NPROD */
#define NONE SIZE_MAX

/* ITEM_CUT: a record's text, not parsed yet */
enum item_kind { ITEM_CUT, ITEM_RECORD, ITEM_PLAIN, ITEM_END, ITEM_FAIL };

/* A slot goes FREE -> CUT (any thread) -> PARSING -> READY (its owner) ->
 * RELEASED (the caller is done) -> CLEARING -> FREE (its owner). */
enum slot_state { SLOT_FREE, SLOT_CUT, SLOT_PARSING, SLOT_READY, SLOT_RELEASED, SLOT_CLEARING };

struct item {
	enum item_kind kind;
	json_t *v;                /* ITEM_RECORD: owned until the batch is released */
	size_t start, end;        /* the record's text */
	size_t key;               /* member name: offset in the pool, or NONE */
	size_t plain[3];          /* ITEM_PLAIN: parameter, input, policy (or NONE) */
};

struct batch {
	struct item item[BATCH];
	size_t n;
	char *pool;               /* the batch's strings, NUL-terminated */
	size_t pool_len, pool_cap;
};

/* The producer's place in the text. */
struct cursor {
	const char *text;
	size_t pos, end, count, i;
	bool object, plain_uses, done;
};

struct nf_recs_pipe;
struct worker {
	struct nf_recs_pipe *p;
	unsigned id;
	pthread_t thread;
};

struct nf_recs_pipe {
	struct cursor cur;        /* the cut: under the lock */
	struct batch b[QUEUE];
	enum slot_state state[QUEUE];
	uint64_t next_cut;        /* number of the next batch to cut (slot % QUEUE) */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct worker w[NPROD];
	bool threaded, cancel;
	size_t head;              /* the consumer reads b[head] */
	bool holding;             /* the consumer holds b[head] */
	size_t at;                /* its next item there */
	enum item_kind last;      /* ITEM_END or ITEM_FAIL once seen: given again */
};

/* ---- producer ------------------------------------------------------------ */

static bool pool_add(struct batch *bt, const char *s, size_t n, size_t *off)
{
	if (bt->pool_len + n + 1 > bt->pool_cap) {
		size_t cap = bt->pool_cap ? bt->pool_cap : 4096;
		while (cap < bt->pool_len + n + 1)
			cap *= 2;
		char *p = realloc(bt->pool, cap);
		if (!p)
			return false;
		bt->pool = p;
		bt->pool_cap = cap;
	}
	memcpy(bt->pool + bt->pool_len, s, n);
	bt->pool[bt->pool_len + n] = '\0';
	*off = bt->pool_len;
	bt->pool_len += n + 1;
	return true;
}

/* A member name: the raw token, quotes included.  Plain printable ASCII is
 * its own value; anything else is decoded (and checked) by jansson. */
static bool pool_key(struct batch *bt, const char *tok, size_t n, size_t *off)
{
	bool plain = true;
	for (size_t k = 1; k + 1 < n && plain; k++) {
		unsigned char c = (unsigned char)tok[k];
		plain = c >= 0x20 && c < 0x7f && c != '\\';
	}
	if (plain)
		return pool_add(bt, tok + 1, n - 2, off);
	char *dec = nf_json_decode_key(tok, n);
	bool ok = dec && pool_add(bt, dec, strlen(dec), off);
	free(dec);
	return ok;
}

/* t[i] starts a record: its end when it has the plain Use form (see
 * nf_recs_next_use), with the three strings in the pool; else 0 (then
 * jansson parses it and the Use code reads it as any other). */
static size_t match_plain_use(struct batch *bt, struct item *it, const char *t, size_t i,
			      size_t end)
{
	static const char *const keys[3] = {"parameter", "input", "activation_policy"};
	static const char *const policies[] = {"A16Only", "AllowA8", "AllowA4"};
	size_t mark = bt->pool_len;
	if (t[i] != '{')
		return 0;
	i = nf_json_skip_ws(t, i + 1, end);
	for (;;) {
		/* "key" */
		if (i >= end || t[i] != '"')
			goto no;
		size_t ks = ++i;
		while (i < end && t[i] != '"')
			i++;
		if (i >= end)
			goto no;
		size_t kn = i - ks;
		int k = 0;
		while (k < 3 && !(strlen(keys[k]) == kn && memcmp(t + ks, keys[k], kn) == 0))
			k++;
		if (k == 3 || it->plain[k] != NONE)
			goto no;
		i = nf_json_skip_ws(t, i + 1, end);
		if (i >= end || t[i] != ':')
			goto no;
		i = nf_json_skip_ws(t, i + 1, end);
		/* "value": non-empty printable ASCII, no escapes */
		if (i >= end || t[i] != '"')
			goto no;
		size_t vs = ++i;
		while (i < end && t[i] != '"') {
			unsigned char c = (unsigned char)t[i];
			if (c < 0x20 || c >= 0x7f || c == '\\')
				goto no;
			i++;
		}
		if (i >= end || i == vs || !pool_add(bt, t + vs, i - vs, &it->plain[k]))
			goto no;
		if (k == 2) {
			bool known = false;
			for (size_t p = 0; p < 3; p++)
				known |= strcmp(policies[p], bt->pool + it->plain[2]) == 0;
			if (!known)
				goto no;
		}
		i = nf_json_skip_ws(t, i + 1, end);
		if (i < end && t[i] == ',') {
			i = nf_json_skip_ws(t, i + 1, end);
			continue;
		}
		if (i < end && t[i] == '}')
			break;
		goto no;
	}
	if (it->plain[0] == NONE || it->plain[1] == NONE)
		goto no;
	return i + 1;
no:
	bt->pool_len = mark;
	it->plain[0] = it->plain[1] = it->plain[2] = NONE;
	return 0;
}

/* The next record's text into bt, or the end (ITEM_END when the table held
 * exactly the scan's count of records, else ITEM_FAIL). */
static void cut_one(struct cursor *c, struct batch *bt)
{
	struct item *it = &bt->item[bt->n++];
	const char *t = c->text;
	size_t count;

	*it = (struct item){.kind = ITEM_CUT, .key = NONE, .plain = {NONE, NONE, NONE}};
	size_t i = nf_json_skip_ws(t, c->pos, c->end);
	if (i == c->end) {
		it->kind = c->i == c->count ? ITEM_END : ITEM_FAIL;
		c->done = true;
		return;
	}
	if (c->i > 0) {
		if (t[i] != ',')
			goto fail;
		i = nf_json_skip_ws(t, i + 1, c->end);
		if (i == c->end)
			goto fail;
	}
	if (c->i >= c->count)
		goto fail;
	if (c->object) {
		if (t[i] != '"')
			goto fail;
		size_t j = nf_json_skip_string(t, i, c->end);
		if (!j || !pool_key(bt, t + i, j - i, &it->key))
			goto fail;
		i = nf_json_skip_ws(t, j, c->end);
		if (i == c->end || t[i] != ':')
			goto fail;
		i = nf_json_skip_ws(t, i + 1, c->end);
	}
	it->start = i;
	it->end = nf_json_skip_value(t, i, c->end, &count);
	if (!it->end)
		goto fail;
	c->pos = it->end;
	c->i++;
	return;
fail:
	it->kind = ITEM_FAIL;
	c->done = true;
}

static void cut(struct cursor *c, struct batch *bt)
{
	bt->n = 0;
	bt->pool_len = 0;
	while (bt->n < BATCH && !c->done)
		cut_one(c, bt);
}

/* Parse the cut records of bt: a record jansson refuses ends the table
 * there (ITEM_FAIL: the caller parses the whole text, which reports it). */
static void parse(const struct cursor *c, struct batch *bt)
{
	for (size_t k = 0; k < bt->n; k++) {
		struct item *it = &bt->item[k];
		if (it->kind != ITEM_CUT)
			return;
		if (c->plain_uses && match_plain_use(bt, it, c->text, it->start, it->end) == it->end) {
			it->kind = ITEM_PLAIN;
			continue;
		}
		it->plain[0] = it->plain[1] = it->plain[2] = NONE;
		json_error_t e;
		it->v = json_loadb(c->text + it->start, it->end - it->start,
				   JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
		if (!it->v) {
			it->kind = ITEM_FAIL;
			bt->n = k + 1;
			return;
		}
		it->kind = ITEM_RECORD;
	}
}

static void batch_clear(struct batch *bt)
{
	for (size_t k = 0; k < bt->n; k++) {
		json_decref(bt->item[k].v);
		bt->item[k].v = NULL;
	}
	bt->n = 0;
}

/* A slot of producer `id` in state `st`, nearest the consumer first, or
 * QUEUE. */
static size_t own_slot(const struct nf_recs_pipe *p, unsigned id, enum slot_state st)
{
	for (size_t k = 0; k < QUEUE; k++) {
		size_t s = (p->head + k) % QUEUE;
		if (s % NPROD == id && p->state[s] == st)
			return s;
	}
	return QUEUE;
}

static void *producer(void *arg)
{
	struct worker *w = arg;
	struct nf_recs_pipe *p = w->p;
	size_t s;

	pthread_mutex_lock(&p->lock);
	while (!p->cancel) {
		if ((s = own_slot(p, w->id, SLOT_RELEASED)) < QUEUE) {
			p->state[s] = SLOT_CLEARING;
			pthread_mutex_unlock(&p->lock);
			batch_clear(&p->b[s]);
			pthread_mutex_lock(&p->lock);
			p->state[s] = SLOT_FREE;
		} else if (!p->cur.done && p->state[p->next_cut % QUEUE] == SLOT_FREE) {
			s = p->next_cut++ % QUEUE;
			cut(&p->cur, &p->b[s]);
			p->state[s] = SLOT_CUT;
		} else if ((s = own_slot(p, w->id, SLOT_CUT)) < QUEUE) {
			p->state[s] = SLOT_PARSING;
			pthread_mutex_unlock(&p->lock);
			parse(&p->cur, &p->b[s]);
			pthread_mutex_lock(&p->lock);
			p->state[s] = SLOT_READY;
		} else if (p->cur.done) {
			break; /* what is left to clear, pipe_stop() clears */
		} else {
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* ---- consumer ------------------------------------------------------------ */

/* Stop and join the first n producers. */
static void stop_producers(struct nf_recs_pipe *p, unsigned n)
{
	pthread_mutex_lock(&p->lock);
	p->cancel = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (unsigned k = 0; k < n; k++)
		pthread_join(p->w[k].thread, NULL);
}

static void pipe_stop(struct nf_recs_pipe *p)
{
	if (p->threaded)
		stop_producers(p, NPROD);
	for (size_t k = 0; k < QUEUE; k++) {
		batch_clear(&p->b[k]);
		free(p->b[k].pool);
	}
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* The table from its first record, nothing cut. */
static void pipe_reset(struct nf_recs_pipe *p, const struct nf_recs *s, bool plain_uses)
{
	for (size_t k = 0; k < QUEUE; k++) {
		batch_clear(&p->b[k]);
		p->state[k] = SLOT_FREE;
	}
	p->cur = (struct cursor){.text = s->text, .pos = s->start + 1, .end = s->end - 1,
				 .count = s->count, .object = s->object, .plain_uses = plain_uses};
	p->next_cut = 0;
	p->cancel = false;
}

static struct nf_recs_pipe *pipe_start(const struct nf_recs *s, bool plain_uses)
{
	struct nf_recs_pipe *p = calloc(1, sizeof *p);
	unsigned started = 0;

	if (!p)
		return NULL;
	pipe_reset(p, s, plain_uses);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	for (; started < NPROD; started++) {
		p->w[started] = (struct worker){.p = p, .id = started};
		if (pthread_create(&p->w[started].thread, NULL, producer, &p->w[started]) != 0)
			break;
	}
	p->threaded = started == NPROD;
	if (!p->threaded) {
		/* each producer owns slots: all of them or none (the caller) */
		stop_producers(p, started);
		pipe_reset(p, s, plain_uses);
	}
	return p;
}

/* The next item; the one before it stays valid until the batch is left. */
static const struct item *next_item(struct nf_recs_pipe *p)
{
	static const struct item end = {.kind = ITEM_END}, failed = {.kind = ITEM_FAIL};

	if (p->last)
		return p->last == ITEM_END ? &end : &failed;
	if (!p->holding || p->at == p->b[p->head].n) {
		if (p->threaded) {
			pthread_mutex_lock(&p->lock);
			if (p->holding) {
				p->state[p->head] = SLOT_RELEASED;
				p->head = (p->head + 1) % QUEUE;
				pthread_cond_broadcast(&p->cond);
			}
			while (p->state[p->head] != SLOT_READY)
				pthread_cond_wait(&p->cond, &p->lock);
			pthread_mutex_unlock(&p->lock);
		} else {
			batch_clear(&p->b[0]);
			cut(&p->cur, &p->b[0]);
			parse(&p->cur, &p->b[0]);
		}
		p->holding = true;
		p->at = 0;
	}
	const struct item *it = &p->b[p->head].item[p->at++];
	if (it->kind == ITEM_END || it->kind == ITEM_FAIL)
		p->last = it->kind;
	return it;
}

void nf_recs_tree(struct nf_recs *s, json_t *tree, bool *failed)
{
	memset(s, 0, sizeof *s);
	s->tree = tree;
	s->object = json_is_object(tree);
	s->count = s->object ? json_object_size(tree) : json_array_size(tree);
	s->iter = s->object ? json_object_iter(tree) : NULL;
	s->failed = failed;
}

void nf_recs_text(struct nf_recs *s, const char *text, size_t start, size_t end, size_t count,
		  bool *failed)
{
	memset(s, 0, sizeof *s);
	s->text = text;
	s->object = text[start] == '{';
	s->start = start;
	s->end = end;
	s->count = count;
	s->failed = failed;
}

static int tree_next(struct nf_recs *s, json_t **v, const char **key)
{
	if (s->object) {
		if (!s->iter)
			return 0;
		*v = json_object_iter_value(s->iter);
		if (key)
			*key = json_object_iter_key(s->iter);
		s->iter = json_object_iter_next(s->tree, s->iter);
	} else {
		if (s->i >= s->count)
			return 0;
		*v = json_array_get(s->tree, s->i);
	}
	s->i++;
	return 1;
}

/* The next streamed record: 1 (*v), 2 (plain Use, s->plain[]) or 0. */
static int text_next(struct nf_recs *s, bool plain_uses, json_t **v, const char **key)
{
	json_decref(s->reparsed);
	s->reparsed = NULL;
	if (*s->failed || !s->text)
		return 0;
	if (!s->pipe && !(s->pipe = pipe_start(s, plain_uses))) {
		*s->failed = true; /* out of memory: the whole-text parse reports it */
		return 0;
	}
	const struct item *it = next_item(s->pipe);
	if (it->kind == ITEM_END)
		return 0;
	if (it->kind == ITEM_FAIL) {
		*s->failed = true;
		return 0;
	}
	const char *pool = s->pipe->b[s->pipe->head].pool;
	s->cur_start = it->start;
	s->cur_end = it->end;
	s->i++;
	if (key)
		*key = it->key != NONE ? pool + it->key : NULL;
	if (it->kind == ITEM_PLAIN && plain_uses) {
		for (int k = 0; k < 3; k++)
			s->plain[k] = it->plain[k] != NONE ? pool + it->plain[k] : NULL;
		*v = NULL;
		return 2;
	}
	*v = it->v;
	if (it->kind == ITEM_PLAIN) {
		/* a caller that switched to nf_recs_next: give it the tree */
		s->reparsed = nf_json_load_range(s->text, it->start, it->end);
		if (!s->reparsed) {
			*s->failed = true;
			return 0;
		}
		*v = s->reparsed;
	}
	return 1;
}

int nf_recs_next(struct nf_recs *s, json_t **v, const char **key)
{
	return s->tree ? tree_next(s, v, key) : text_next(s, false, v, key);
}

int nf_recs_next_use(struct nf_recs *s, json_t **v)
{
	return s->tree || !s->text ? nf_recs_next(s, v, NULL) : text_next(s, true, v, NULL);
}

void nf_recs_done(struct nf_recs *s)
{
	/* A streamed table must end where the scan said it ends. */
	if (!s->tree && s->text && !*s->failed) {
		if (!s->pipe)
			s->pipe = pipe_start(s, false);
		if (!s->pipe || next_item(s->pipe)->kind != ITEM_END)
			*s->failed = true;
	}
	json_decref(s->reparsed);
	s->reparsed = NULL;
	if (s->pipe)
		pipe_stop(s->pipe);
	s->pipe = NULL;
}
