// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_histogram.c - the free-extent histogram: plan_hist_add()'s buckets
 * and what plan_run() counts (every extent, before the minimum, merged
 * across the source's splits)
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "e2trim.h"
#include "plan.h"

static struct e2trim_histogram fresh(uint64_t unit)
{
	struct e2trim_histogram h;

	memset(&h, 0, sizeof(h));
	h.unit_bytes = unit;
	return h;
}

/* Bucket i: [unit << i, unit << (i + 1)); shorter than a unit: bucket 0. */
static void test_bucket_edges(void **state)
{
	struct e2trim_histogram h = fresh(4096);

	(void)state;
	plan_hist_add(&h, 4096);		/* 0 */
	plan_hist_add(&h, 8191);		/* 0 */
	plan_hist_add(&h, 8192);		/* 1 */
	plan_hist_add(&h, 1024);		/* 0: a range's edge */
	plan_hist_add(&h, (1ULL << 20) - 4096);	/* 7: 512 KiB .. 1 MiB */
	plan_hist_add(&h, 1ULL << 20);		/* 8 */
	assert_int_equal(h.bucket[0].extents, 3);
	assert_int_equal(h.bucket[0].bytes, 4096 + 8191 + 1024);
	assert_int_equal(h.bucket[1].extents, 1);
	assert_int_equal(h.bucket[7].extents, 1);
	assert_int_equal(h.bucket[8].extents, 1);
	assert_int_equal(h.nbuckets, 9);
	assert_int_equal(h.extents, 6);
	assert_int_equal(h.bytes, 4096 + 8191 + 8192 + 1024 +
			 (1ULL << 20) - 4096 + (1ULL << 20));
}

/* The largest lengths land in the last bucket, never past it. */
static void test_huge(void **state)
{
	struct e2trim_histogram h = fresh(1024);

	(void)state;
	plan_hist_add(&h, UINT64_MAX);
	assert_int_equal(h.nbuckets, 54);	/* 2^10 << 53 = 2^63 */
	assert_int_equal(h.bucket[53].extents, 1);
	h = fresh(1);
	plan_hist_add(&h, UINT64_MAX);
	assert_int_equal(h.nbuckets, 64);
}

/* Free blocks 0-2, 3-4 (split: one extent), 10, 20-35 of 64 blocks. */
struct runs {
	uint64_t s[4], e[4];
	int n;
};

static errcode_t runs_next(void *priv, uint64_t from, uint64_t last,
			   uint64_t *rs, uint64_t *re)
{
	struct runs *r = priv;
	int i;

	for (i = 0; i < r->n; i++)
		if (r->e[i] > from && r->s[i] <= last) {
			*rs = r->s[i];
			*re = r->e[i];
			return 0;
		}
	return ENOENT;
}

static int emit_none(void *priv, uint64_t s, uint64_t l)
{
	(void)priv;
	(void)s;
	(void)l;
	return 0;
}

static void test_plan_counts_before_minimum(void **state)
{
	struct runs r = { { 1, 3, 10, 20 }, { 3, 5, 11, 36 }, 4 };
	struct plan_geometry geo = { 1024, 1, 1, 64 };
	struct plan_range range = { 0, UINT64_MAX, 8 * 1024 };
	struct plan_source src = { runs_next, &r };
	struct plan_stats st;

	(void)state;
	assert_int_equal(plan_run(&geo, &range, &src, emit_none, NULL, &st), 0);
	/* 1-4 merged (4 KiB), 10 (1 KiB), 20-35 (16 KiB) */
	assert_int_equal(st.hist.extents, 3);
	assert_int_equal(st.hist.bytes, 21 * 1024);
	assert_int_equal(st.hist.unit_bytes, 1024);
	assert_int_equal(st.hist.bucket[0].extents, 1);
	assert_int_equal(st.hist.bucket[2].extents, 1);
	assert_int_equal(st.hist.bucket[4].extents, 1);
	assert_int_equal(st.hist.bucket[4].min_bytes, 16 * 1024);
	/* the minimum drops two of them from the plan, not the histogram */
	assert_int_equal(st.extents, 1);
	assert_int_equal(st.skipped_extents, 2);
}

/* Bigalloc: the unit is a cluster. */
static void test_plan_bigalloc_unit(void **state)
{
	struct runs r = { { 16 }, { 48 }, 1 };
	struct plan_geometry geo = { 4096, 16, 0, 64 };
	struct plan_range range = { 0, UINT64_MAX, 0 };
	struct plan_source src = { runs_next, &r };
	struct plan_stats st;

	(void)state;
	assert_int_equal(plan_run(&geo, &range, &src, emit_none, NULL, &st), 0);
	assert_int_equal(st.hist.unit_bytes, 65536);
	assert_int_equal(st.hist.bucket[1].extents, 1);	/* 2 clusters */
	assert_int_equal(st.hist.nbuckets, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_edges),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_plan_counts_before_minimum),
		cmocka_unit_test(test_plan_bigalloc_unit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
