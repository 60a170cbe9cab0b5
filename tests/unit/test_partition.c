// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_partition.c - part_table_check(): which tables are refused;
 *                    mbr_read(): an MBR's EBR chains through a reader;
 *                    partition_bound_at(): where a filesystem at a byte
 *                    offset (?offset=, losetup -o) must end
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "e2trim.h"
#include "partition.h"
#include "partition_int.h"


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

static void test_ebr_in_container(void **state)
{
	struct part_entry e[] = {
		area(0, 1), part(2, 2048, 10000), area(2048, 1),
		part(5, 4096, 2000), area(6144, 1), part(6, 8192, 2000),
	};
	struct part_problem p;
	char msg[256];

	(void)state;
	e[1].extended = 1;
	e[3].logical = e[5].logical = 1;
	e[2].ebr = e[4].ebr = 1;
	assert_int_equal(check(e, 6, &p), PART_FINE);
	/* logical 5 over the next EBR */
	e[3].size_bytes = 2100 * S;
	assert_int_equal(check(e, 6, &p), PART_OVERLAP);
	part_problem_describe(&p, msg, sizeof(msg));
	assert_string_equal(msg, "logical partition 5 (bytes 2097152-3172351) "
			    "overlaps an EBR of the partition table "
			    "(bytes 3145728-3146239)");
}

/* An image in memory, read through a part_reader as NBD would be. */
static unsigned char disk[64 * 1024 * S / 64];

static errcode_t mem_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	(void)ctx;
	memcpy(buf, disk + off, len);
	return 0;
}

static void put_entry(uint64_t sect, int i, unsigned char type,
		      uint32_t start, uint32_t size)
{
	unsigned char *e = disk + sect * S + 446 + 16 * i;

	e[4] = type;
	memcpy(e + 8, &start, 4);	/* the test runs little-endian */
	memcpy(e + 12, &size, 4);
	disk[sect * S + 510] = 0x55;
	disk[sect * S + 511] = 0xAA;
}

static void test_mbr_ebr_chain(void **state)
{
	struct part_reader rd = { .read = mem_read, .size_bytes = sizeof(disk),
				  .sector_size = S, .blkid_fd = -1 };
	struct part_table t = { .type = "dos" };
	struct part_problem p;
	enum mbr_kind kind;

	(void)state;
	memset(disk, 0, sizeof(disk));
	put_entry(0, 0, 0x83, 64, 100);
	put_entry(0, 1, 0x05, 200, 800);
	/* EBR at 200: logical 5 at 210, link to the EBR at 200 + 300 */
	put_entry(200, 0, 0x83, 10, 200);
	put_entry(200, 1, 0x05, 300, 400);
	/* EBR at 500: logical 6 at 520 */
	put_entry(500, 0, 0x83, 20, 300);
	assert_int_equal(mbr_probe(&rd, &kind), 0);
	assert_int_equal(kind, MBR_DOS);
	assert_int_equal(mbr_read(&rd, &t), 0);
	/* MBR, 1, 2, EBR, 5, EBR, 6 */
	assert_int_equal(t.n, 7);
	assert_int_equal(t.entries[4].partno, 5);
	assert_true(t.entries[4].logical);
	assert_int_equal(t.entries[4].start_bytes, 210 * S);
	assert_int_equal(t.entries[6].partno, 6);
	assert_int_equal(t.entries[6].start_bytes, 520 * S);
	assert_int_equal(t.entries[6].size_bytes, 300 * S);
	assert_int_equal(part_table_check(&t, &p), PART_FINE);
	free(t.entries);

	/* a chain that links back to itself ends, and is refused */
	put_entry(500, 1, 0x05, 0, 400);
	assert_int_equal(mbr_read(&rd, &t), 0);
	assert_true(t.n < 2000);
	assert_int_equal(part_table_check(&t, &p), PART_OVERLAP);
	free(t.entries);

	/* type 0xEE: a GPT's protective MBR */
	put_entry(0, 2, 0xEE, 1, 10);
	assert_int_equal(mbr_probe(&rd, &kind), 0);
	assert_int_equal(kind, MBR_PROTECTIVE);
	/* a boot flag other than 0 and 0x80: no table, as for the kernel */
	disk[446] = 0x12;
	assert_int_equal(mbr_probe(&rd, &kind), 0);
	assert_int_equal(kind, MBR_NONE);
	disk[446] = 0;
	/* "FAT" where a BPB names it: a FAT boot sector only with a BPB */
	memcpy(disk + 0x36, "FAT16   ", 8);
	assert_int_equal(mbr_probe(&rd, &kind), 0);
	assert_int_equal(kind, MBR_PROTECTIVE);
	disk[11] = 0x00;
	disk[12] = 0x02;	/* 512 bytes per sector */
	disk[13] = 8;		/* sectors per cluster */
	assert_int_equal(mbr_probe(&rd, &kind), 0);
	assert_int_equal(kind, MBR_NONE);
}

/*
 * A filesystem given by its byte offset ends where its partition ends,
 * or, starting in a gap between partitions, where the next one starts:
 * its "free" tail past that is the next partition's data.
 */
static void test_bound_at(void **state)
{
	struct part_reader rd = { .read = mem_read, .size_bytes = sizeof(disk),
				  .sector_size = S, .blkid_fd = -1 };
	struct part_bound b;
	struct e2trim *et;

	(void)state;
	assert_int_equal(e2trim_new(&et), 0);
	memset(disk, 0, sizeof(disk));
	/* 1 at 64 (100 sectors), 2 at 400 (300), a gap [164, 400) between */
	put_entry(0, 0, 0x83, 64, 100);
	put_entry(0, 1, 0x83, 400, 300);

	/* in a gap: up to the next partition's start */
	partition_bound_at(et, &rd, 200 * S, &b);
	assert_string_equal(b.table, "dos");
	assert_int_equal(b.partno, 0);
	assert_int_equal(b.end, 400 * S);
	/* right after partition 1 ends: the same gap */
	partition_bound_at(et, &rd, 164 * S, &b);
	assert_int_equal(b.partno, 0);
	assert_int_equal(b.end, 400 * S);
	/* before the first partition: up to partition 1 */
	partition_bound_at(et, &rd, 8 * S, &b);
	assert_int_equal(b.partno, 0);
	assert_int_equal(b.end, 64 * S);

	/* inside partition 1, at its start or further in: its end */
	partition_bound_at(et, &rd, 64 * S, &b);
	assert_int_equal(b.partno, 1);
	assert_int_equal(b.part_start, 64 * S);
	assert_int_equal(b.end, 164 * S);
	partition_bound_at(et, &rd, 100 * S, &b);
	assert_int_equal(b.partno, 1);
	assert_int_equal(b.end, 164 * S);
	/* the last byte of partition 2 is still in it */
	partition_bound_at(et, &rd, 699 * S, &b);
	assert_int_equal(b.partno, 2);
	assert_int_equal(b.end, 700 * S);

	/* after the last partition: nothing bounds it */
	partition_bound_at(et, &rd, 700 * S, &b);
	assert_int_equal(b.partno, 0);
	assert_int_equal(b.end, 0);
	e2trim_free(et);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fine_tables),
		cmocka_unit_test(test_overlap_both_ways),
		cmocka_unit_test(test_overlap_table_area),
		cmocka_unit_test(test_logical_partitions),
		cmocka_unit_test(test_logical_without_container),
		cmocka_unit_test(test_ebr_in_container),
		cmocka_unit_test(test_mbr_ebr_chain),
		cmocka_unit_test(test_bound_at),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
