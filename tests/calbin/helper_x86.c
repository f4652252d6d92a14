/* tests/calbin/helper_x86.c — the fixture's CPU helper for x86-64 (seed
 * §2 "CPU helper SO"): a real shared object built by the compiler, so
 * libelf and readelf read a real ET_DYN with DT_NEEDED. */
#include <math.h>

float calc_cpu_softmax_max(const float *x, int n);
float calc_cpu_softmax_max(const float *x, int n)
{
	float m = -INFINITY;
	for (int i = 0; i < n; i++)
		m = fmaxf(m, x[i]);
	return expf(m);
}
