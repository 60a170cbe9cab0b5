// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_free_runs.c - the kept list of free runs and its source
 *
 * What the tests hold free_runs.c to: runs that touch are merged, runs
 * out of order are refused, the list is dropped (not truncated) beyond
 * its limit, and the source answers exactly as a bitmap source would:
 * the first run ending after @from, starting no earlier than @from,
 * ENOENT when it would start after @last, whether the queries walk
 * forward (the cursor) or jump about (the search).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "e2trim.h"
#include "free_runs.h"


static void add(struct free_runs *fr, uint64_t start, uint64_t end)
{
	assert_int_equal(free_runs_add(fr, start, end), 0);
}

static void expect_run(struct plan_source *src, uint64_t from, uint64_t last,
		       uint64_t want_start, uint64_t want_end)
{
	uint64_t s = 0, e = 0;

	assert_int_equal(src->next_free(src->priv, from, last, &s, &e), 0);
	assert_int_equal(s, want_start);
	assert_int_equal(e, want_end);
}

static void expect_none(struct plan_source *src, uint64_t from,
			uint64_t last)
{
	uint64_t s, e;

	assert_int_equal(src->next_free(src->priv, from, last, &s, &e),
			 ENOENT);
}

static void merges_touching_runs(void **state)
{
	struct free_runs fr = { .max = 10 };

	(void)state;
	add(&fr, 10, 20);
	add(&fr, 20, 30);	/* touches: one run */
	add(&fr, 31, 40);	/* a gap of one block: two */
	add(&fr, 40, 40);	/* empty: nothing */
	assert_int_equal(fr.n, 2);
	assert_int_equal(fr.run[0][0], 10);
	assert_int_equal(fr.run[0][1], 30);
	assert_int_equal(fr.run[1][0], 31);
	assert_int_equal(fr.run[1][1], 40);
	free_runs_free(&fr);
}

static void refuses_out_of_order(void **state)
{
	struct free_runs fr = { .max = 10 };

	(void)state;
	add(&fr, 10, 20);
	assert_int_equal(free_runs_add(&fr, 15, 25), EXT2_ET_INVALID_ARGUMENT);
	assert_int_equal(free_runs_add(&fr, 0, 5), EXT2_ET_INVALID_ARGUMENT);
	assert_int_equal(fr.n, 1);
	free_runs_free(&fr);
}

static void drops_the_list_beyond_max(void **state)
{
	struct free_runs fr = { .max = 3 };
	uint64_t b;

	(void)state;
	for (b = 0; b < 3; b++)
		add(&fr, 10 * b, 10 * b + 5);
	assert_false(fr.overflow);
	add(&fr, 30, 35);
	assert_true(fr.overflow);
	assert_null(fr.run);
	assert_int_equal(fr.n, 0);
	add(&fr, 50, 55);	/* ignored from now on */
	assert_int_equal(fr.n, 0);

	/* max 0 keeps nothing at all */
	struct free_runs none = { .max = 0 };
	add(&none, 1, 2);
	assert_true(none.overflow);
}

static void grows_past_its_first_allocation(void **state)
{
	struct free_runs fr = { .max = 100000 };
	struct plan_source src;
	uint64_t i;

	(void)state;
	for (i = 0; i < 5000; i++)
		add(&fr, 3 * i, 3 * i + 2);
	assert_false(fr.overflow);
	assert_int_equal(fr.n, 5000);
	free_runs_source(&fr, &src);
	expect_run(&src, 3 * 4999, UINT64_MAX, 3 * 4999, 3 * 4999 + 2);
	expect_run(&src, 7, UINT64_MAX, 7, 8);
	free_runs_free(&fr);
}

static void source_answers_like_a_bitmap(void **state)
{
	struct free_runs fr = { .max = 10 };
	struct plan_source src;

	(void)state;
	add(&fr, 10, 20);
	add(&fr, 30, 40);
	add(&fr, 100, 200);
	free_runs_source(&fr, &src);

	/* walking forward, as the plan does */
	expect_run(&src, 0, 1000, 10, 20);
	expect_run(&src, 20, 1000, 30, 40);
	expect_run(&src, 40, 1000, 100, 200);
	expect_none(&src, 200, 1000);

	/* from inside a run: it starts at from, ends where the run ends */
	expect_run(&src, 35, 1000, 35, 40);
	expect_run(&src, 39, 39, 39, 40);
	/* the run may end after last; it may not start after it */
	expect_run(&src, 0, 10, 10, 20);
	expect_none(&src, 0, 9);
	expect_none(&src, 20, 29);
	expect_run(&src, 20, 30, 30, 40);

	/* jumping backwards and forwards: the cursor must not mislead */
	expect_run(&src, 150, 1000, 150, 200);
	expect_run(&src, 0, 1000, 10, 20);
	expect_run(&src, 99, 1000, 100, 200);
	expect_run(&src, 11, 1000, 11, 20);
	expect_none(&src, 500, UINT64_MAX);

	/* a new source starts afresh */
	free_runs_source(&fr, &src);
	expect_run(&src, 0, 1000, 10, 20);
	free_runs_free(&fr);
}

static void empty_list_has_no_runs(void **state)
{
	struct free_runs fr = { .max = 10 };
	struct plan_source src;

	(void)state;
	free_runs_source(&fr, &src);
	expect_none(&src, 0, UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(merges_touching_runs),
		cmocka_unit_test(refuses_out_of_order),
		cmocka_unit_test(drops_the_list_beyond_max),
		cmocka_unit_test(grows_past_its_first_allocation),
		cmocka_unit_test(source_answers_like_a_bitmap),
		cmocka_unit_test(empty_list_has_no_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
