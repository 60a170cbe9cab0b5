// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_zero_fill.c - TRIM_ZERO_FILL over a real temporary image file
 *
 * What target_zero.c is held to, read back from the file itself:
 *  - every byte of each extent given reads zero afterwards, and no byte
 *    outside them changes (extents at 1 KiB edges, pieces larger than
 *    one read, a filesystem starting 512 bytes into the file);
 *  - the counts (zeroed, already zero) add up, and a second run writes
 *    nothing;
 *  - holes stay holes (SEEK_DATA), and their bytes count as sparse;
 *  - a dry run reads and counts, and changes nothing;
 *  - the stop flag stops it between pieces;
 *  - how it zeroes: on a host filesystem that can punch holes (ext4 /tmp,
 *    tmpfs /dev/shm) the data ranges are punched out without being read
 *    (the zero run too: nothing counts as already zero) and the allocated
 *    size drops by them; with zero_read set, only the 4 KiB units that
 *    held something are punched (the zero run is left alone, and counts
 *    as zero already); with zero_write set, the free space is read and
 *    zeros are written, with the same bytes and counts as with zero_read,
 *    and nothing is allocated or freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <cmocka.h>

#include "target.h"

#define K 1024ULL
#define M (1024ULL * K)
#define SIZE (8 * M)
#define BASE 512ULL		/* the filesystem starts here in the file */

static char path[64];
static unsigned char *want;	/* what the file must hold */

/* Where the file lives, and how it must be zeroed there. */
struct variant {
	const char *dir;
	int zero_write;		/* force written zeros */
	int zero_read;		/* force reading first */
	int punched;		/* the runs must become holes */
	int unread;		/* data ranges zeroed without a read */
};

static const struct variant *var;

/* A file of SIZE: 0x5a everywhere but a zero run and a hole. */
static int make_file(void)
{
	int fd;

	snprintf(path, sizeof(path), "%s/test_zero_fill.XXXXXX",
		 var ? var->dir : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	want = malloc(SIZE);
	assert_non_null(want);
	memset(want, 0x5a, SIZE);
	memset(want + 1 * M, 0, 64 * K);		/* zero, allocated */
	assert_int_equal(pwrite(fd, want, SIZE, 0), (ssize_t)SIZE);
	memset(want + 2 * M, 0, 256 * K);		/* a hole */
	assert_int_equal(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				   2 * M, 256 * K), 0);
	assert_int_equal(fsync(fd), 0);
	return fd;
}

static void check_file(int fd)
{
	unsigned char *got = malloc(SIZE);

	assert_non_null(got);
	assert_int_equal(pread(fd, got, SIZE, 0), (ssize_t)SIZE);
	assert_memory_equal(got, want, SIZE);
	free(got);
}

static void open_target(struct target *t, int fd, int dryrun)
{
	memset(t, 0, sizeof(*t));
	t->base_bytes = BASE;
	t->dryrun = dryrun;
	t->zero_write = var && var->zero_write;
	t->zero_read = var && var->zero_read;
	assert_int_equal(target_file_init(t, fd, TRIM_ZERO_FILL), 0);
	/* zero-fill frees nothing: no granularity to align to */
	assert_int_equal(t->lim.granularity, 1);
}

/* Extents in bytes of the filesystem (the file from BASE on). */
static const uint64_t ext[][2] = {
	{ 1 * K, 3 * K },		/* inside one 4 KiB unit of the file */
	{ 1 * M - BASE - 8 * K, 96 * K },	/* across the zero run */
	{ 2 * M - BASE - 4 * K, 300 * K },	/* across the hole */
	{ 3 * M - BASE + 1 * K, 3 * M + 7 * K },	/* several pieces */
};
#define NEXT (sizeof(ext) / sizeof(ext[0]))

static uint64_t run_all(struct target *t)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < NEXT; i++) {
		assert_int_equal(target_trim(t, ext[i][0], ext[i][1]), 0);
		total += ext[i][1];
	}
	assert_int_equal(target_finish(t), 0);
	return total;
}

/*
 * Bytes of the file's extents (FIEMAP): all of them, or with @unwritten
 * only the unwritten ones; -1 where the filesystem has no FIEMAP.
 */
static int64_t mapped_bytes(int fd, int unwritten)
{
	size_t sz = sizeof(struct fiemap) + 256 * sizeof(struct fiemap_extent);
	struct fiemap *fm = calloc(1, sz);
	int64_t n = 0;
	unsigned int i;

	assert_non_null(fm);
	fm->fm_length = FIEMAP_MAX_OFFSET;
	fm->fm_flags = FIEMAP_FLAG_SYNC;
	fm->fm_extent_count = 256;
	if (ioctl(fd, FS_IOC_FIEMAP, fm)) {
		free(fm);
		return -1;
	}
	for (i = 0; i < fm->fm_mapped_extents; i++)
		if (!unwritten ||
		    (fm->fm_extents[i].fe_flags & FIEMAP_EXTENT_UNWRITTEN))
			n += fm->fm_extents[i].fe_length;
	free(fm);
	return n;
}

static blkcnt_t alloc_blocks(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_blocks;
}

static void test_zero_fill(void **state)
{
	struct target t;
	uint64_t total, holes = 0, zeros = 0;
	size_t i;
	int fd;
	blkcnt_t blocks;
	int64_t mapped, unwritten;

	var = *state;
	fd = make_file();
	blocks = alloc_blocks(fd);
	mapped = mapped_bytes(fd, 0);
	/* a dry run: counts, writes nothing */
	open_target(&t, fd, 1);
	total = run_all(&t);
	target_close(&t);
	check_file(fd);

	open_target(&t, fd, 0);
	run_all(&t);
	for (i = 0; i < NEXT; i++)
		memset(want + BASE + ext[i][0], 0, ext[i][1]);
	check_file(fd);
	/* what was a hole (2 MiB .. +256 KiB) still is one */
	assert_true(lseek(fd, 2 * M, SEEK_DATA) >= (off_t)(2 * M + 256 * K));
	holes = t.stats.sparse_bytes;
	assert_int_equal(holes, 256 * K);
	/* every byte: written, zero already, or a hole */
	assert_int_equal(t.stats.zeroed_bytes + t.stats.zero_bytes + holes,
			 total);
	assert_int_equal(t.stats.bytes, total - holes);
	zeros = t.stats.zero_bytes;
	/* unread, the zero run is zeroed again (it is data in the file) */
	assert_int_equal(zeros, var->unread ? 0 : 64 * K);
	target_close(&t);
	/*
	 * No data block allocated; punched, the runs are freed, all but the
	 * two 3 KiB edges zeroed inside a block of the host (and a block the
	 * host's extent tree may need for the split).
	 */
	if (mapped >= 0)
		assert_true(mapped_bytes(fd, 0) <= mapped);
	if (var->punched)
		assert_true(alloc_blocks(fd) <=
			    blocks - (blkcnt_t)((t.stats.zeroed_bytes - 10 * K) /
						512));
	else
		assert_true(alloc_blocks(fd) <= blocks);
	unwritten = mapped_bytes(fd, 1);
	if (unwritten >= 0)
		assert_int_equal(unwritten, 0);

	/* again: nothing left to write */
	open_target(&t, fd, 0);
	run_all(&t);
	assert_int_equal(t.stats.zeroed_bytes, 0);
	assert_int_equal(t.stats.requests, 0);
	target_close(&t);
	check_file(fd);

	close(fd);
	unlink(path);
	free(want);
}

static volatile sig_atomic_t stop;

static void test_stop(void **state)
{
	struct target t;
	int fd;

	(void)state;
	var = NULL;
	fd = make_file();
	open_target(&t, fd, 0);
	t.stop = &stop;
	stop = 1;
	assert_int_equal(target_trim(&t, 4 * M, 2 * M), E2TRIM_ERR_INTERRUPTED);
	assert_int_equal(target_finish(&t), 0);
	assert_int_equal(t.stats.zeroed_bytes, 0);
	target_close(&t);
	check_file(fd);
	close(fd);
	unlink(path);
	free(want);
}

/* /tmp is ext4 on the build machines, /dev/shm tmpfs: both punch holes */
static struct variant unread_var = { "/tmp", 0, 0, 1, 1 };
static struct variant range_var = { "/tmp", 0, 1, 1, 0 };
static struct variant write_var = { "/tmp", 1, 0, 0, 0 };
static struct variant tmpfs_var = { "/dev/shm", 0, 0, 1, 1 };

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_zero_fill, &unread_var),
		cmocka_unit_test_prestate(test_zero_fill, &range_var),
		cmocka_unit_test_prestate(test_zero_fill, &write_var),
		cmocka_unit_test_prestate(test_zero_fill, &tmpfs_var),
		cmocka_unit_test(test_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
