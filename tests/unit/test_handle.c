// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_handle.c - the handle's states (e2trim.h) and every call's answer
 *                 to a NULL argument or a call out of order
 *
 * Real images made by mke2fs and debugfs; a bitmap's checksum broken by
 * flipping a byte of group 0's block bitmap on disk.  The oracles are the
 * codes the header documents, the process's open descriptors
 * (/proc/self/fd) and what a fresh handle says of the same image; run
 * under valgrind (make valgrind-unit UNIT=test_handle) for the memory.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "unit_sh.h"
#include <ext2fs/ext2fs.h>

#include "e2trim.h"

static char dir[] = "/tmp/e2trim-test-handle.XXXXXX";
static char good[128], unclean[128], badcsum[128], missing[128];

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* What a dry run of @path counts, on a handle of its own. */
static uint64_t fresh_dry_run(const char *path)
{
	struct e2trim *t;
	uint64_t bytes;

	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	assert_int_equal(e2trim_open(t, path), 0);
	assert_int_equal(e2trim_apply(t, NULL, NULL), 0);
	bytes = e2trim_result(t)->bytes_trimmed;
	e2trim_free(t);
	return bytes;
}

/* Flip a byte of group 0's block bitmap: its checksum no longer matches. */
static void break_bitmap_csum(const char *img)
{
	ext2_filsys fs;
	unsigned char b;
	off_t off;
	int fd;

	assert_int_equal(ext2fs_open(img, 0, 0, 0, unix_io_manager, &fs), 0);
	assert_true(ext2fs_has_feature_metadata_csum(fs->super));
	off = (off_t)ext2fs_block_bitmap_loc(fs, 0) * fs->blocksize + 900;
	ext2fs_close_free(&fs);
	fd = open(img, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0xff;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(good, sizeof(good), "%s/good.img", dir);
	snprintf(unclean, sizeof(unclean), "%s/unclean.img", dir);
	snprintf(badcsum, sizeof(badcsum), "%s/badcsum.img", dir);
	snprintf(missing, sizeof(missing), "%s/missing.img", dir);
	sh("PATH=$PATH:/sbin:/usr/sbin; cd %s && "
	   "mke2fs -q -F -t ext4 -b 4096 -O metadata_csum good.img 32M "
	   ">/dev/null 2>&1 && "
	   "head -c 300000 /dev/urandom > data && "
	   "debugfs -w -R 'write data data' good.img >/dev/null 2>&1 && "
	   /* its holes allocated: a dry run counts the free space */
	   "fallocate -l 32M good.img && "
	   "cp good.img unclean.img && cp good.img badcsum.img && "
	   "debugfs -w -R 'ssv state 0' unclean.img >/dev/null 2>&1", dir);
	break_bitmap_csum(badcsum);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", dir);
	return 0;
}

/* Every call, a NULL handle: a documented code, never a crash. */
static void null_handle(void **state)
{
	unsigned int n;
	uint64_t off;
	char buf[256];

	(void)state;
	assert_int_equal(e2trim_new(NULL), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_set_partition(NULL, 1), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_set_offset(NULL, 0), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_set_mode(NULL, E2TRIM_DISCARD), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_set_flags(NULL, 0), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_set_format(NULL, NULL), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_open(NULL, good), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_probe(NULL, good, &off), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_partitions(NULL, good, &n), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_null(e2trim_partition(NULL, 0));
	assert_int_equal(e2trim_check(NULL), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_verify(NULL), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_set_range(NULL, 0, UINT64_MAX, 0),
			 E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_plan(NULL, NULL, NULL), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_apply(NULL, NULL, NULL), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_forced(NULL, 0, NULL), 0);
	assert_null(e2trim_warning(NULL, 0));
	assert_null(e2trim_result(NULL));
	assert_null(e2trim_histogram(NULL));
	assert_string_equal(e2trim_detail(NULL), "");
	e2trim_set_cancel(NULL, NULL);
	e2trim_set_progress(NULL, NULL, NULL);
	e2trim_free(NULL);
	assert_int_equal(e2trim_exit_code(E2TRIM_ERR_INVALID_ARGUMENT), 3);
	assert_non_null(strstr(e2trim_message(NULL, E2TRIM_ERR_INVALID_ARGUMENT,
					      buf, sizeof(buf)), "NULL"));
	assert_string_equal(e2trim_message(NULL, E2TRIM_ERR_OPEN, NULL, 9), "");
}

/* A handle, a NULL pointer beside it: refused, the handle as it was. */
static void null_pointers(void **state)
{
	unsigned int n = 7;
	struct e2trim *t;

	(void)state;
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_open(t, NULL), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_probe(t, good, NULL), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(e2trim_partitions(t, NULL, &n), E2TRIM_ERR_INVALID_ARGUMENT);
	assert_int_equal(n, 7);
	/* a NULL count is allowed: e2trim_partition() says where it ends */
	assert_int_equal(e2trim_partitions(t, good, NULL),
			 E2TRIM_ERR_NO_PARTITION_TABLE);
	assert_null(e2trim_partition(t, 0));
	/* still NEW: it opens */
	assert_int_equal(e2trim_open(t, good), 0);
	assert_int_equal(e2trim_check(t), 0);
	e2trim_free(t);
}

/* NEW: the stages are out of order. */
static void new_refuses_stages(void **state)
{
	struct e2trim *t;

	(void)state;
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_check(t), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(e2trim_verify(t), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(e2trim_set_range(t, 0, UINT64_MAX, 0), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(e2trim_plan(t, NULL, NULL), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(e2trim_apply(t, NULL, NULL), E2TRIM_ERR_BAD_CALL);
	assert_non_null(e2trim_result(t));
	assert_non_null(e2trim_histogram(t));
	e2trim_free(t);
}

/*
 * OPEN: a second open, a probe, a listing are refused and the handle
 * stays open: the stages then run on what was opened first.
 */
static void open_refuses_reopen(void **state)
{
	uint64_t want = fresh_dry_run(good), off = 7;
	unsigned int n = 7;
	struct e2trim *t;
	int fds;

	(void)state;
	assert_true(want > 0);
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	assert_int_equal(e2trim_open(t, good), 0);
	fds = open_fds();
	assert_int_equal(e2trim_open(t, good), E2TRIM_ERR_BAD_CALL);
	assert_non_null(strstr(e2trim_detail(t), "already opened"));
	/* worded as the misuse it is, not "was not opened" (issue 42) */
	{
		char msg[512];

		e2trim_message(t, E2TRIM_ERR_BAD_CALL, msg, sizeof(msg));
		assert_non_null(strstr(msg, "a second open"));
		assert_non_null(strstr(msg, "a handle is opened once"));
		assert_null(strstr(msg, "was not opened"));
	}
	assert_int_equal(e2trim_open(t, unclean), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(e2trim_probe(t, good, &off), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(off, 7);
	assert_int_equal(e2trim_partitions(t, good, &n), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(n, 7);
	assert_int_equal(open_fds(), fds);
	assert_int_equal(e2trim_check(t), 0);
	assert_int_equal(e2trim_verify(t), 0);
	assert_int_equal(e2trim_plan(t, NULL, NULL), 0);
	assert_int_equal(e2trim_apply(t, NULL, NULL), 0);
	assert_int_equal(e2trim_result(t)->bytes_trimmed, want);
	/* VERIFIED: apply again counts the same */
	assert_int_equal(e2trim_apply(t, NULL, NULL), 0);
	assert_int_equal(e2trim_result(t)->bytes_trimmed, want);
	e2trim_free(t);
}

/* A failed open leaves NEW: the handle opens the next image. */
static void failed_open_reusable(void **state)
{
	uint64_t want = fresh_dry_run(good);
	int fds = open_fds();
	struct e2trim *t;

	(void)state;
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	assert_int_equal(e2trim_open(t, missing), E2TRIM_ERR_OPEN);
	assert_int_equal(e2trim_check(t), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(e2trim_open(t, unclean), E2TRIM_ERR_NOT_CLEAN);
	assert_int_equal(open_fds(), fds);
	assert_int_equal(e2trim_apply(t, NULL, NULL), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(e2trim_open(t, good), 0);
	assert_int_equal(e2trim_apply(t, NULL, NULL), 0);
	assert_int_equal(e2trim_result(t)->bytes_trimmed, want);
	e2trim_free(t);
	assert_int_equal(open_fds(), fds);
}

/* probe and partitions keep nothing open: NEW after, and open follows. */
static void probe_and_list_then_open(void **state)
{
	int fds = open_fds();
	unsigned int n = 7;
	uint64_t off = 1;
	struct e2trim *t;

	(void)state;
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	assert_int_equal(e2trim_probe(t, good, &off), 0);
	assert_int_equal(off, 0);
	assert_int_equal(open_fds(), fds);
	assert_int_equal(e2trim_check(t), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(e2trim_probe(t, good, &off), 0);
	assert_int_equal(e2trim_partitions(t, good, &n),
			 E2TRIM_ERR_NO_PARTITION_TABLE);
	assert_int_equal(n, 0);
	assert_null(e2trim_partition(t, 0));
	assert_int_equal(open_fds(), fds);
	assert_int_equal(e2trim_open(t, good), 0);
	assert_int_equal(e2trim_verify(t), 0);
	e2trim_free(t);
	assert_int_equal(open_fds(), fds);
}

/*
 * A refused check (a bitmap's checksum) leaves OPEN; checking again runs
 * it again and refuses again, keeping no second stream (descriptors
 * counted; valgrind counts the memory).
 */
static void check_again_after_refusal(void **state)
{
	struct e2trim *t;
	int fds, i;

	(void)state;
	assert_int_equal(e2trim_new(&t), 0);
	assert_int_equal(e2trim_set_flags(t, E2TRIM_FLAG_DRYRUN), 0);
	assert_int_equal(e2trim_open(t, badcsum), 0);
	fds = open_fds();
	for (i = 0; i < 4; i++) {
		assert_int_equal(e2trim_check(t), E2TRIM_ERR_BITMAP_CSUM);
		assert_int_equal(open_fds(), fds);
	}
	assert_int_equal(e2trim_verify(t), E2TRIM_ERR_BITMAP_CSUM);
	assert_int_equal(e2trim_apply(t, NULL, NULL), E2TRIM_ERR_BITMAP_CSUM);
	assert_int_equal(open_fds(), fds);
	/* OPEN still: a second open is refused, the first stays */
	assert_int_equal(e2trim_open(t, good), E2TRIM_ERR_BAD_CALL);
	assert_int_equal(e2trim_check(t), E2TRIM_ERR_BITMAP_CSUM);
	e2trim_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(null_handle),
		cmocka_unit_test(null_pointers),
		cmocka_unit_test(new_refuses_stages),
		cmocka_unit_test(open_refuses_reopen),
		cmocka_unit_test(failed_open_reusable),
		cmocka_unit_test(probe_and_list_then_open),
		cmocka_unit_test(check_again_after_refusal),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
