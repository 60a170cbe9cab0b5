// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_partition.c - part_table_check(): which tables are refused
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "e2trim.h"
#include "partition.h"


#define S 512ULL	/* bytes per sector */

static struct part_entry part(unsigned int no, uint64_t start_sect,
			      uint64_t sects)
{
	struct part_entry e = { .partno = no, .start_bytes = start_sect * S,
				.size_bytes = sects * S };
	return e;
}

static struct part_entry area(uint64_t start_sect, uint64_t sects)
{
	struct part_entry e = part(0, start_sect, sects);

	e.table_area = 1;
	return e;
}

static enum part_problem_kind check(struct part_entry *e, unsigned int n,
				    struct part_problem *p)
{
	struct part_table t = { .type = "dos", .n = n, .entries = e };

	return part_table_check(&t, p);
}

static void test_fine_tables(void **state)
{
	struct part_entry e[] = {
		area(0, 1), part(1, 63, 1000), part(2, 1063, 1000),
		part(3, 4096, 0),	/* empty entry, inside nothing */
	};
	struct part_problem p;

	(void)state;
	assert_int_equal(check(e, 4, &p), PART_FINE);
	assert_null(p.a);
}

static void test_overlap_both_ways(void **state)
{
	/* 1 runs into 2; then 2 starts inside 1 */
	struct part_entry fwd[] = { part(1, 63, 2000), part(2, 2048, 1000) };
	struct part_entry back[] = { part(1, 2048, 1000), part(2, 63, 2000) };
	struct part_problem p;
	char msg[256];

	(void)state;
	assert_int_equal(check(fwd, 2, &p), PART_OVERLAP);
	assert_int_equal(p.a->partno, 1);
	assert_int_equal(p.b->partno, 2);
	part_problem_describe(&p, msg, sizeof(msg));
	assert_string_equal(msg, "partition 1 (bytes 32256-1056255) overlaps "
			    "partition 2 (bytes 1048576-1560575)");
	assert_int_equal(check(back, 2, &p), PART_OVERLAP);
	/* touching is not overlapping */
	fwd[0].size_bytes = (2048 - 63) * S;
	assert_int_equal(check(fwd, 2, &p), PART_FINE);
}

static void test_overlap_table_area(void **state)
{
	struct part_entry e[] = { area(0, 34), part(1, 20, 100) };
	struct part_problem p;
	char msg[256];

	(void)state;
	assert_int_equal(check(e, 2, &p), PART_OVERLAP);
	assert_int_equal(p.a->partno, 1);	/* the partition is named first */
	assert_true(p.b->table_area);
	part_problem_describe(&p, msg, sizeof(msg));
	assert_string_equal(msg, "partition 1 (bytes 10240-61439) overlaps "
			    "the partition table itself (bytes 0-17407)");
}

static void test_logical_partitions(void **state)
{
	struct part_entry e[] = {
		part(1, 63, 1000), part(2, 2048, 10000), part(5, 2049, 3000),
		part(6, 6000, 3000),
	};
	struct part_problem p;

	(void)state;
	e[1].extended = 1;
	e[2].logical = e[3].logical = 1;
	assert_int_equal(check(e, 4, &p), PART_FINE);

	/* a logical partition sticking out of its container */
	e[3].size_bytes = 7000 * S;
	assert_int_equal(check(e, 4, &p), PART_OUTSIDE);
	assert_int_equal(p.a->partno, 6);
	assert_int_equal(p.b->partno, 2);

	/* two logical partitions that overlap each other */
	e[3].start_bytes = 5000 * S;
	e[3].size_bytes = 1000 * S;
	assert_int_equal(check(e, 4, &p), PART_OVERLAP);
	assert_int_equal(p.a->partno, 5);
	assert_int_equal(p.b->partno, 6);

	/* a primary partition overlapping the container */
	e[3].start_bytes = 6000 * S;
	e[0].size_bytes = 3000 * S;
	assert_int_equal(check(e, 4, &p), PART_OVERLAP);
	assert_int_equal(p.a->partno, 1);
	assert_int_equal(p.b->partno, 2);
}

static void test_logical_without_container(void **state)
{
	struct part_entry e[] = { part(1, 63, 1000), part(5, 2049, 3000) };
	struct part_problem p;
	char msg[256];

	(void)state;
	e[1].logical = 1;
	assert_int_equal(check(e, 2, &p), PART_OUTSIDE);
	assert_null(p.b);
	part_problem_describe(&p, msg, sizeof(msg));
	assert_string_equal(msg, "logical partition 5 (bytes 1049088-2585087) "
			    "lies in no extended container");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fine_tables),
		cmocka_unit_test(test_overlap_both_ways),
		cmocka_unit_test(test_overlap_table_area),
		cmocka_unit_test(test_logical_partitions),
		cmocka_unit_test(test_logical_without_container),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
