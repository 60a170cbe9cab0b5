// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_walk.c - the idioms of walk.h, written once, held to their edges
 *
 * Every number they are asked about may come off a damaged disk: none of
 * them may wrap around 2^64, and a range that ends exactly at the end of
 * the other is inside it, one block further is not.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "walk.h"

static void test_range_inside(void **state)
{
	(void)state;
	assert_true(range_inside(10, 5, 10, 15));	/* exactly */
	assert_false(range_inside(10, 6, 10, 15));	/* one past the end */
	assert_false(range_inside(9, 1, 10, 15));	/* one before */
	assert_false(range_inside(15, 1, 10, 15));	/* at the end */
	assert_true(range_inside(14, 1, 10, 15));
	/* the length that would wrap start + len to inside */
	assert_false(range_inside(12, UINT64_MAX - 5, 10, 15));
	assert_false(range_inside(UINT64_MAX, 2, 0, UINT64_MAX));
	assert_true(range_inside(0, UINT64_MAX, 0, UINT64_MAX));
	/* an empty range is inside where it starts in [first, end] */
	assert_true(range_inside(15, 0, 10, 15));
	assert_false(range_inside(16, 0, 10, 15));
}

static void test_ranges_overlap(void **state)
{
	(void)state;
	assert_true(ranges_overlap(0, 10, 9, 1));
	assert_false(ranges_overlap(0, 10, 10, 1));	/* touch, no share */
	assert_false(ranges_overlap(10, 1, 0, 10));
	assert_true(ranges_overlap(5, 1, 0, 10));	/* inside */
	assert_true(ranges_overlap(0, 10, 5, 1));
	assert_false(ranges_overlap(0, 0, 0, 10));	/* empty shares nothing */
	assert_false(ranges_overlap(0, 10, 5, 0));
	/* ends past 2^64 do not wrap */
	assert_false(ranges_overlap(UINT64_MAX - 1, UINT64_MAX, 0, 1));
	assert_true(ranges_overlap(UINT64_MAX - 1, 5, UINT64_MAX, 1));
	assert_false(ranges_overlap(1, UINT64_MAX - 1, 0, 1));
}

static void test_run_advances(void **state)
{
	(void)state;
	assert_true(run_advances(10, 10, 11));
	assert_true(run_advances(10, 20, 30));
	assert_false(run_advances(10, 5, 10));		/* ends at from */
	assert_false(run_advances(10, 5, 9));		/* ends before */
	assert_false(run_advances(10, 12, 12));		/* empty */
	assert_false(run_advances(10, 13, 12));		/* backwards */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range_inside),
		cmocka_unit_test(test_ranges_overlap),
		cmocka_unit_test(test_run_advances),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
