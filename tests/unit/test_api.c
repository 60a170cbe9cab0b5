// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_api.c - the public API that can grow (issue 25 point 1): options
 *              through setters, partitions one at a time, structs that
 *              say their size
 *
 * Real images by mke2fs and sfdisk.  The oracles: the partition table as
 * sfdisk wrote it (the starts given to it), the labels given to mke2fs,
 * blkid's type of each partition, the sizeof and offsetof of the header
 * this test is built with, and what a fresh handle says of the same image.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "unit_sh.h"

#include "e2trim.h"

static char dir[] = "/tmp/e2trim-test-api.XXXXXX";
static char good[128], disk[128];

/* the three partitions of disk.img, in 512-byte sectors (sfdisk's input) */
static const uint64_t part_start[3] = { 2048, 18432, 34816 };
#define PART_SECTORS 16384

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(good, sizeof(good), "%s/good.img", dir);
	snprintf(disk, sizeof(disk), "%s/disk.img", dir);
	/* free space full of 'Z', no holes: a dry run has bytes to count */
	sh("PATH=$PATH:/sbin:/usr/sbin; cd %s && "
	   "head -c 32M /dev/zero | tr '\\0' Z > good.img && "
	   "cp good.img disk.img && "
	   "mke2fs -q -F -t ext4 -b 4096 -E nodiscard good.img 32M && "
	   "head -c 300000 /dev/urandom > data && "
	   "debugfs -w -R 'write data data' good.img >/dev/null 2>&1 && "
	   "printf 'label: dos\\nstart=%llu, size=%u, type=83\\n"
	   "start=%llu, size=%u, type=83\\nstart=%llu, size=%u, type=83\\n' | "
	   "sfdisk -q disk.img && "
	   "mke2fs -q -F -t ext2 -L one -E nodiscard,offset=%llu disk.img 8M && "
	   "mke2fs -q -F -t ext4 -L two -E nodiscard,offset=%llu disk.img 8M && "
	   "test \"$(blkid -p -o value -s TYPE -O %llu disk.img)\" = ext4",
	   dir, (unsigned long long)part_start[0], PART_SECTORS,
	   (unsigned long long)part_start[1], PART_SECTORS,
	   (unsigned long long)part_start[2], PART_SECTORS,
	   (unsigned long long)part_start[0] * 512,
	   (unsigned long long)part_start[1] * 512,
	   (unsigned long long)part_start[1] * 512);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", dir);
	return 0;
}

/* Each setter, once the handle is open: BAD_CALL, nothing changed. */
static void setters_refused_after_open(void **state)
{
	const struct e2trim_result *r;
	uint64_t bytes;
	struct e2trim *t;

	(void)state;
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	assert_int_equal(e2trim_open(t, good), 0);
	assert_int_equal(e2trim_set_partition(t, 1), E2TRIM_ERR_BAD_CALL);
	assert_non_null(strstr(e2trim_detail(t), "already opened"));
	/* worded as the misuse it is, not "was not opened" (issue 42) */
	{
		char msg[512];

		e2trim_message(t, E2TRIM_ERR_BAD_CALL, msg, sizeof(msg));
		assert_non_null(strstr(msg, "a setter called after e2trim_open()"));
		assert_non_null(strstr(msg, "set the options before e2trim_open()"));
		assert_null(strstr(msg, "was not opened"));
	}
	assert_int_equal(e2trim_set_partition(t, 0), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(e2trim_set_offset(t, 4096), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(e2trim_set_mode(t, E2TRIM_ZEROOUT), E2TRIM_ERR_BAD_CALL);
	/* a real trim asked for after a dry-run open: refused, still dry */
	assert_int_equal(e2trim_set_flags(t, 0), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(e2trim_set_format(t, "raw"), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(e2trim_apply(t, NULL, NULL), 0);
	r = e2trim_result(t);
	assert_int_equal(r->dryrun, 1);
	assert_int_equal(r->fs_offset_bytes, 0);
	assert_int_equal(r->bytes_zeroed, 0);
	bytes = r->bytes_trimmed;
	assert_true(bytes > 0);
	e2trim_free(t);
}

/*
 * A bad argument is refused where it is given, and the handle keeps what
 * was set before: the open that follows shows it.
 */
static void setters_refuse_bad_arguments(void **state)
{
	const struct e2trim_result *r;
	struct e2trim *t;

	(void)state;
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	/* a bit this library does not know */
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN | 0x100),
			 E2TRIM_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(e2trim_detail(t), "unknown flags 0x100"));
	assert_int_equal(e2trim_set_mode(t, E2TRIM_ZERO_FILL), 0);
	assert_int_equal(e2trim_set_mode(t, (enum e2trim_mode)99),
			 E2TRIM_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(e2trim_detail(t), "no such mode: 99"));
	assert_int_equal(e2trim_set_mode(t, (enum e2trim_mode)-1),
			 E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_set_partition(t, 2), 0);
	assert_int_equal(e2trim_set_offset(t, 4096),
			 E2TRIM_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(e2trim_detail(t), "exclude each other"));
	assert_int_equal(e2trim_set_format(t, "raw"), 0);
	assert_int_equal(e2trim_set_format(t, "qcow2;rm"),
			 E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_set_format(t, ""), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_set_format(t, "abcdefghijklmnop"),
			 E2TRIM_ERR_INVALID_ARGUMENT);
	/* the dry run, partition 2, zero-fill and raw set before stand */
	assert_int_equal(e2trim_open(t, disk), 0);
	assert_int_equal(e2trim_apply(t, NULL, NULL), 0);
	r = e2trim_result(t);
	assert_int_equal(r->dryrun, 1);
	assert_int_equal(r->fs_offset_bytes, part_start[1] * 512);
	assert_string_equal(r->label, "two");
	/* zero-fill (not discard) counted the free bytes, all of them Z */
	assert_true(r->bytes_zeroed > 0);
	assert_int_equal(r->bytes_zeroed + r->bytes_already_zero,
			 r->bytes_trimmed);
	assert_true(r->bytes_trimmed > 0);
	e2trim_free(t);
}

/*
 * Every setter in both orders and at its boundary values: a partition set
 * after an offset (or the other way round) is refused and the first one
 * stands, a zero on either side lets the other through; each mode up to
 * the last is taken and one past it is not; each flag bit alone is taken,
 * the first bit past them is not.  The open that follows shows what the
 * handle kept.
 */
static void open_label(struct e2trim *t, const char *want, uint64_t off)
{
	assert_int_equal(e2trim_open(t, disk), 0);
	assert_string_equal(e2trim_result(t)->label, want);
	assert_int_equal(e2trim_result(t)->fs_offset_bytes, off);
}

static void setters_every_order_and_boundary(void **state)
{
	const uint64_t one = part_start[0] * 512, two = part_start[1] * 512;
	unsigned int m, bit;
	struct e2trim *t;

	(void)state;
	/* an offset, then a partition: refused, the offset kept */
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	assert_int_equal(e2trim_set_offset(t, one), 0);
	assert_int_equal(e2trim_set_partition(t, 2),
			 E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_set_partition(t, 0), 0);
	open_label(t, "one", one);
	e2trim_free(t);
	/* a partition, then an offset: refused, the partition kept */
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	assert_int_equal(e2trim_set_partition(t, 2), 0);
	assert_int_equal(e2trim_set_offset(t, one), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_set_offset(t, 0), 0);
	open_label(t, "two", two);
	e2trim_free(t);
	/* cleared first, then the other: taken */
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	assert_int_equal(e2trim_set_partition(t, 1), 0);
	assert_int_equal(e2trim_set_partition(t, 0), 0);
	assert_int_equal(e2trim_set_offset(t, two), 0);
	open_label(t, "two", two);
	e2trim_free(t);
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	assert_int_equal(e2trim_set_offset(t, two), 0);
	assert_int_equal(e2trim_set_offset(t, 0), 0);
	assert_int_equal(e2trim_set_partition(t, 1), 0);
	open_label(t, "one", one);
	e2trim_free(t);

	assert_int_equal(e2trim_new(&t), 0);
	for (m = E2TRIM_DISCARD; m <= E2TRIM_ZERO_FILL; m++)
		assert_int_equal(e2trim_set_mode(t, (enum e2trim_mode)m), 0);
	/* one past the last mode: refused, the last one kept */
	assert_int_equal(e2trim_set_mode(t, (enum e2trim_mode)(E2TRIM_ZERO_FILL + 1)),
			 E2TRIM_ERR_INVALID_ARGUMENT);
	for (bit = 1; bit <= E2TRIM_FLAG_NO_VERIFY; bit <<= 1)
		assert_int_equal(e2trim_set_flags(t, bit), 0);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_NO_VERIFY << 1),
			 E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	assert_int_equal(e2trim_set_format(t, "raw"), 0);
	assert_int_equal(e2trim_set_format(t, NULL), 0);
	assert_int_equal(e2trim_open(t, good), 0);
	assert_int_equal(e2trim_apply(t, NULL, NULL), 0);
	/* zero-fill, the last mode, stood: the free bytes were all 'Z' */
	assert_true(e2trim_result(t)->bytes_zeroed > 0);
	assert_int_equal(e2trim_result(t)->dryrun, 1);
	e2trim_free(t);
}

/* Options stay set across a failed open, a probe and a listing. */
static void setters_stay_for_later_opens(void **state)
{
	uint64_t off = 1;
	struct e2trim *t;

	(void)state;
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	assert_int_equal(e2trim_set_partition(t, 3), 0);
	/* partition 3 holds no filesystem: refused, and the handle NEW */
	assert_int_equal(e2trim_open(t, disk), E2TRIM_ERR_NOT_EXT);
	assert_int_equal(e2trim_set_partition(t, 0), 0);
	assert_int_equal(e2trim_set_offset(t, part_start[0] * 512), 0);
	assert_int_equal(e2trim_probe(t, disk, &off), 0);
	assert_int_equal(off, part_start[0] * 512);
	assert_int_equal(e2trim_partitions(t, disk, NULL), 0);
	assert_int_equal(e2trim_open(t, disk), 0);
	assert_int_equal(e2trim_result(t)->fs_offset_bytes, part_start[0] * 512);
	assert_string_equal(e2trim_result(t)->label, "one");
	assert_string_equal(e2trim_result(t)->fs_type, "ext2");
	assert_int_equal(e2trim_result(t)->dryrun, 1);
	e2trim_free(t);
}

/* Partition 2 of 3, through e2trim_partition(), its size said. */
static void partition_two_of_three(void **state)
{
	const struct e2trim_partition *p;
	unsigned int i, n = 0;
	struct e2trim *t;

	(void)state;
	assert_int_equal(e2trim_new(&t), 0);
	/* listing is read-only whatever the flags, and ignores -p/offset */
	assert_int_equal(e2trim_set_partition(t, 1), 0);
	assert_int_equal(e2trim_partitions(t, disk, &n), 0);
	assert_int_equal(n, 3);
	for (i = 0; i < 3; i++) {
		p = e2trim_partition(t, i);
		assert_non_null(p);
		assert_int_equal(p->struct_size, sizeof(*p));
		assert_int_equal(p->partno, i + 1);
		assert_int_equal(p->start_bytes, part_start[i] * 512);
		assert_int_equal(p->size_bytes, (uint64_t)PART_SECTORS * 512);
		assert_true(E2TRIM_HAS(p, struct e2trim_partition, device));
		assert_string_equal(p->device, "");
	}
	p = e2trim_partition(t, 1);
	assert_string_equal(p->fs_type, "ext4");
	assert_string_equal(e2trim_partition(t, 0)->fs_type, "ext2");
	assert_string_equal(e2trim_partition(t, 2)->fs_type, "");
	assert_null(e2trim_partition(t, 3));
	assert_null(e2trim_partition(t, UINT32_MAX));
	/* a refused listing (after open) keeps the list */
	assert_int_equal(e2trim_set_partition(t, p->partno), 0);
	assert_int_equal(e2trim_open(t, disk), 0);
	assert_int_equal(e2trim_partitions(t, disk, &n), E2TRIM_ERR_BAD_CALL);
	assert_ptr_equal(e2trim_partition(t, 1), p);
	assert_int_equal(e2trim_result(t)->fs_offset_bytes, p->start_bytes);
	assert_string_equal(e2trim_result(t)->label, "two");
	e2trim_free(t);
	/* the next listing replaces it; one that fails leaves none */
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_partitions(t, disk, &n), 0);
	assert_non_null(e2trim_partition(t, 2));
	assert_int_equal(e2trim_partitions(t, good, &n),
			 E2TRIM_ERR_NO_PARTITION_TABLE);
	assert_int_equal(n, 0);
	assert_null(e2trim_partition(t, 0));
	e2trim_free(t);
}

/*
 * What the library hands out says its size, and E2TRIM_HAS is false for
 * a member past it: a copy with a smaller size plays an older library.
 */
static void has_macro_and_sizes(void **state)
{
	struct e2trim_result old;
	struct e2trim_histogram oldh;
	struct e2trim_partition oldp;
	const struct e2trim_result *r;
	const struct e2trim_histogram *h;
	const struct e2trim_result *none = NULL;
	struct e2trim *t;

	(void)state;
	assert_int_equal(e2trim_new(&t), 0);
	r = e2trim_result(t);
	h = e2trim_histogram(t);
	/* before any open too */
	assert_int_equal(r->struct_size, sizeof(*r));
	assert_int_equal(h->struct_size, sizeof(*h));
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	assert_int_equal(e2trim_open(t, good), 0);
	assert_int_equal(e2trim_plan(t, NULL, NULL), 0);
	assert_int_equal(r->struct_size, sizeof(*r));
	assert_int_equal(h->struct_size, sizeof(*h));
	assert_true(h->extents > 0);
	assert_true(E2TRIM_HAS(r, struct e2trim_result, seconds));
	assert_true(E2TRIM_HAS(h, struct e2trim_histogram, bucket));
	assert_false(E2TRIM_HAS(none, struct e2trim_result, struct_size));

	memcpy(&old, r, sizeof(old));
	old.struct_size = offsetof(struct e2trim_result, bytes_zeroed);
	assert_true(E2TRIM_HAS(&old, struct e2trim_result, extents_too_small_aligned));
	assert_false(E2TRIM_HAS(&old, struct e2trim_result, bytes_zeroed));
	assert_false(E2TRIM_HAS(&old, struct e2trim_result, seconds));
	/* one byte short of a member is not having it */
	old.struct_size = offsetof(struct e2trim_result, seconds) +
			  sizeof(double) - 1;
	assert_false(E2TRIM_HAS(&old, struct e2trim_result, seconds));
	assert_true(E2TRIM_HAS(&old, struct e2trim_result, allocated_after_bytes));

	memcpy(&oldh, h, sizeof(oldh));
	oldh.struct_size = offsetof(struct e2trim_histogram, bucket);
	assert_true(E2TRIM_HAS(&oldh, struct e2trim_histogram, bytes));
	assert_false(E2TRIM_HAS(&oldh, struct e2trim_histogram, bucket));

	memset(&oldp, 0, sizeof(oldp));
	oldp.struct_size = offsetof(struct e2trim_partition, device);
	assert_true(E2TRIM_HAS(&oldp, struct e2trim_partition, fs_type));
	assert_false(E2TRIM_HAS(&oldp, struct e2trim_partition, device));
	e2trim_free(t);
}

/* e2trim_version(): the header's version, and its numbers */
static void version_numbers(void **state)
{
	unsigned int a = 9, b = 9, c = 9;

	(void)state;
	assert_string_equal(e2trim_version(&a, &b, &c), E2TRIM_VERSION);
	assert_string_equal(E2TRIM_VERSION, "0.2.0");
	assert_int_equal(a, 0);
	assert_int_equal(b, 2);
	assert_int_equal(c, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(setters_refused_after_open),
		cmocka_unit_test(setters_refuse_bad_arguments),
		cmocka_unit_test(setters_stay_for_later_opens),
		cmocka_unit_test(setters_every_order_and_boundary),
		cmocka_unit_test(partition_two_of_three),
		cmocka_unit_test(has_macro_and_sizes),
		cmocka_unit_test(version_numbers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
