/* calbin/image.c — a chip's reservation as a byte image (issue 13,
 * devices/chip<N>/<domain>), and the chips of the tree.
 *
 * The map lines of one chip and domain (seed §4.3) are laid at vaddr -
 * base.  Where lines overlap, the later line in the file shows (the one a
 * loader writing the lines in order would leave; §4.3 rule 5 says only
 * that overlaps are reported, so the rule is ours, in ninferfs.5).  One
 * sweep over the sorted boundaries with a max-heap of the lines active at
 * each point (lazily dropped once they end) gives, per elementary range,
 * its winner and how many lines map it: O(n log n), however the lines
 * nest.  Consecutive ranges of one winner become one piece; of one winner
 * and one count, one overlap entry. */
#include <errno.h>
#include <stdlib.h>

#include "calbin/internal.h"
#include "calbin/mount.h"

unsigned cb_package_chips(const struct cb_package *p)
{
	if (p->chips)
		return p->chips;
	unsigned chips = 0;
	for (size_t i = 0; i < p->nmaps; i++)
		for (unsigned c = chips; p->maps[i].valid && c < CB_MAX_CHIPS; c++)
			if (cb_mask_has(p->maps[i].mask, c))
				chips = c + 1;
	return chips;
}

struct line {
	uint64_t begin, end;   /* in the image */
	size_t map;
};

static int by_begin(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->map < y->map ? -1 : x->map > y->map;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A max-heap of indices into lines[], ordered by their map index. */
struct heap {
	size_t *v, n;
	const struct line *lines;
};

static bool above(const struct heap *h, size_t i, size_t j)
{
	return h->lines[h->v[i]].map > h->lines[h->v[j]].map;
}

static void swap(struct heap *h, size_t i, size_t j)
{
	size_t t = h->v[i];
	h->v[i] = h->v[j];
	h->v[j] = t;
}

static void heap_push(struct heap *h, size_t line)
{
	size_t i = h->n++;
	h->v[i] = line;
	while (i > 0 && above(h, i, (i - 1) / 2)) {
		swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_pop(struct heap *h)
{
	h->v[0] = h->v[--h->n];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && above(h, l, m))
			m = l;
		if (r < h->n && above(h, r, m))
			m = r;
		if (m == i)
			break;
		swap(h, i, m);
		i = m;
	}
}

/* Append a range of one winner; it joins the last piece when that is the
 * same line and ends where this begins. */
static void add_piece(struct cb_image *img, const struct cb_package *p, const struct line *w,
		      uint64_t begin, uint64_t end)
{
	struct cb_image_piece *last = img->npieces ? &img->pieces[img->npieces - 1] : NULL;
	img->data_bytes += end - begin;
	if (last && last->map == w->map && last->offset + last->length == begin) {
		last->length += end - begin;
		return;
	}
	img->pieces[img->npieces++] = (struct cb_image_piece){
		.offset = begin, .length = end - begin,
		.file_offset = p->maps[w->map].offset + (begin - w->begin), .map = w->map};
}

static void add_overlap(struct cb_image *img, size_t wins, size_t lines, uint64_t begin,
			uint64_t end)
{
	struct cb_image_overlap *last = img->noverlaps ? &img->overlaps[img->noverlaps - 1] : NULL;
	if (last && last->wins == wins && last->lines == lines && last->offset + last->length == begin) {
		last->length += end - begin;
		return;
	}
	img->overlaps[img->noverlaps++] = (struct cb_image_overlap){
		.offset = begin, .length = end - begin, .wins = wins, .lines = lines};
}

static size_t select_lines(const struct cb_package *p, unsigned chip, enum cb_domain d,
			   uint64_t base, struct line *out)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct cb_map *m = &p->maps[i];
		/* valid: the whole range lies in its reservation (MAP_DOMAIN),
		 * so begin and end fit the image without overflow. */
		if (!m->valid || m->domain != (int)d || !m->size || !cb_mask_has(m->mask, chip))
			continue;
		out[n++] = (struct line){m->vaddr - base, m->vaddr - base + m->size, i};
	}
	return n;
}

/* The sweep over the sorted, distinct boundaries b[0..nb). */
static void sweep(struct cb_image *img, const struct cb_package *p, const struct line *lines,
		  size_t n, const uint64_t *b, size_t nb, const uint64_t *ends, struct heap *h)
{
	size_t next = 0, ended = 0, active = 0;
	for (size_t j = 0; j + 1 < nb; j++) {
		uint64_t x = b[j];
		for (; next < n && lines[next].begin == x; next++, active++)
			heap_push(h, next);
		for (; ended < n && ends[ended] == x; ended++)
			active--;
		while (h->n && lines[h->v[0]].end <= x)
			heap_pop(h);
		if (!h->n)
			continue;
		const struct line *w = &lines[h->v[0]];
		add_piece(img, p, w, x, b[j + 1]);
		if (active >= 2)
			add_overlap(img, w->map, active, x, b[j + 1]);
	}
}

int cb_image_build(const struct cb_package *p, unsigned chip, enum cb_domain d,
		   struct cb_image *img)
{
	*img = (struct cb_image){.chip = chip, .domain = d};
	if ((unsigned)d >= CB_DOMAIN_COUNT || !p->reservations[d].present)
		return -ENOENT;
	img->vaddr = p->reservations[d].vaddr;
	img->size = p->reservations[d].size;
	struct line *lines = p->nmaps ? malloc(p->nmaps * sizeof *lines) : NULL;
	if (p->nmaps && !lines)
		return -ENOMEM;
	size_t n = select_lines(p, chip, d, img->vaddr, lines);
	img->nlines = n;
	if (!n) {
		free(lines);
		return 0;
	}
	qsort(lines, n, sizeof *lines, by_begin);
	/* 2n boundaries make at most 2n - 1 elementary ranges: the bound of
	 * both output arrays. */
	uint64_t *b = malloc(2 * n * sizeof *b), *ends = malloc(n * sizeof *ends);
	struct heap h = {.v = malloc(n * sizeof *h.v), .lines = lines};
	img->pieces = malloc(2 * n * sizeof *img->pieces);
	img->overlaps = malloc(2 * n * sizeof *img->overlaps);
	if (!b || !ends || !h.v || !img->pieces || !img->overlaps) {
		free(b);
		free(ends);
		free(h.v);
		free(lines);
		cb_image_free(img);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		b[2 * i] = lines[i].begin;
		b[2 * i + 1] = ends[i] = lines[i].end;
	}
	qsort(b, 2 * n, sizeof *b, by_value);
	qsort(ends, n, sizeof *ends, by_value);
	size_t nb = 0;
	for (size_t i = 0; i < 2 * n; i++)
		if (!nb || b[nb - 1] != b[i])
			b[nb++] = b[i];
	sweep(img, p, lines, n, b, nb, ends, &h);
	free(b);
	free(ends);
	free(h.v);
	free(lines);
	/* Give back what the bound over-allocated (never fails to shrink
	 * meaningfully; keep the larger block if it does). */
	struct cb_image_piece *pc = reallocarray(img->pieces, img->npieces ? img->npieces : 1,
						 sizeof *pc);
	if (pc)
		img->pieces = pc;
	struct cb_image_overlap *ov = reallocarray(img->overlaps, img->noverlaps ? img->noverlaps : 1,
						   sizeof *ov);
	if (ov)
		img->overlaps = ov;
	return 0;
}

void cb_image_free(struct cb_image *img)
{
	free(img->pieces);
	free(img->overlaps);
	img->pieces = NULL;
	img->overlaps = NULL;
	img->npieces = img->noverlaps = 0;
}

size_t cb_image_find(const struct cb_image *img, uint64_t x)
{
	size_t lo = 0, hi = img->npieces;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cb_image_piece *pc = &img->pieces[mid];
		if (pc->offset + pc->length <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
