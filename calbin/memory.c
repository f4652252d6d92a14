/* calbin/memory.c — interval arithmetic for Gate D (seed §6: "地址覆盖统计要
 * 先把 [address,address+bytes) 区间去重并合并").  The union is static address
 * coverage, never peak live memory: the package has no tensor lifetimes. */
#include <stdlib.h>

#include "calbin/internal.h"

static int by_begin(const void *a, const void *b)
{
	const struct cb_range *x = a, *y = b;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

uint64_t cb_union_bytes(struct cb_range *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof *v, by_begin);
	uint64_t total = 0, begin = 0, end = 0;
	bool open = false;
	for (size_t i = 0; i < n; i++) {
		if (v[i].end <= v[i].begin)
			continue;
		if (open && v[i].begin <= end) {
			if (v[i].end > end)
				end = v[i].end;
			continue;
		}
		if (open)
			total += end - begin;
		begin = v[i].begin;
		end = v[i].end;
		open = true;
	}
	if (open)
		total += end - begin;
	return total;
}
