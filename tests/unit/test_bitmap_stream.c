// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_bitmap_stream.c - the free runs e2trim reads, against libext2fs's
 *
 * Real filesystems made by mke2fs and aged with debugfs (files written,
 * some removed), in the layouts where the free space is easiest to get
 * wrong: flex_bg with BLOCK_UNINIT groups whose metadata lives in other
 * groups, no flex_bg, bigalloc clusters, 1 KiB blocks (first_data_block
 * 1) with a partial last group, and ext2 without group checksums.
 *
 * The oracle is libext2fs itself: ext2fs_read_block_bitmap() builds the
 * whole bitmap (expanding BLOCK_UNINIT groups its own way), and its free
 * runs must equal, block for block, what every way of reading the
 * stream yields: the kept list, the bitmap read again (the list over its
 * limit, or none kept), batches through io_uring or reads through
 * libext2fs.
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
#include <setjmp.h>
#include <cmocka.h>
#include "unit_sh.h"
#include <et/com_err.h>

#include "bitmap.h"
#include "e2trim.h"

#define MAX_RUNS 100000

struct runs {
	size_t n;
	uint64_t start[MAX_RUNS], end[MAX_RUNS];
};

static char dir[] = "/tmp/e2trim-test-bitmap.XXXXXX";

static void add_run(struct runs *r, uint64_t start, uint64_t end)
{
	if (r->n && r->end[r->n - 1] == start) {
		r->end[r->n - 1] = end;	/* merge, as the plan does */
		return;
	}
	assert_true(r->n < MAX_RUNS);
	r->start[r->n] = start;
	r->end[r->n++] = end;
}

/* The oracle: libext2fs's whole bitmap, scanned. */
static void oracle_runs(ext2_filsys fs, struct runs *r)
{
	blk64_t end = ext2fs_blocks_count(fs->super);
	blk64_t from = fs->super->s_first_data_block, zero, set;

	assert_int_equal(ext2fs_read_block_bitmap(fs), 0);
	r->n = 0;
	while (from < end &&
	       !ext2fs_find_first_zero_block_bitmap2(fs->block_map, from,
						     end - 1, &zero)) {
		if (ext2fs_find_first_set_block_bitmap2(fs->block_map, zero,
							end - 1, &set))
			set = end;
		add_run(r, zero, set);
		from = set;
	}
	ext2fs_free_block_bitmap(fs->block_map);
	fs->block_map = NULL;
}

/*
 * Free clusters per group by libext2fs's own bitmap, cluster by cluster
 * (e2fsck's pass 5 counts so), into @nfree; and the descriptors must say
 * the same, the images being made by mke2fs and debugfs alone.
 */
static void oracle_free_clusters(ext2_filsys fs, __u32 *nfree)
{
	blk64_t end = ext2fs_blocks_count(fs->super), b;
	int ratio = EXT2FS_CLUSTER_RATIO(fs);
	dgrp_t g;

	assert_int_equal(ext2fs_read_block_bitmap(fs), 0);
	for (g = 0; g < fs->group_desc_count; g++) {
		nfree[g] = 0;
		for (b = ext2fs_group_first_block2(fs, g);
		     b <= ext2fs_group_last_block2(fs, g) && b < end;
		     b += ratio)
			nfree[g] += !ext2fs_test_block_bitmap2(fs->block_map, b);
		assert_int_equal(nfree[g], ext2fs_bg_free_blocks_count(fs, g));
	}
	ext2fs_free_block_bitmap(fs->block_map);
	fs->block_map = NULL;
}

static void source_runs(ext2_filsys fs, const struct plan_source *src,
			struct runs *r)
{
	uint64_t from = fs->super->s_first_data_block, s, e;
	uint64_t end = ext2fs_blocks_count(fs->super);
	errcode_t err;

	r->n = 0;
	while (from < end) {
		err = src->next_free(src->priv, from, end - 1, &s, &e);
		if (err == ENOENT)
			break;
		assert_int_equal(err, 0);
		assert_true(s >= from);
		assert_true(e > s);
		if (e > end)
			e = end;
		add_run(r, s, e);
		from = e;
	}
}

static void assert_same_runs(const struct runs *want, const struct runs *got,
			     const char *what)
{
	size_t i;

	if (want->n != got->n)
		fail_msg("%s: %zu free runs, libext2fs says %zu", what,
			 got->n, want->n);
	for (i = 0; i < want->n; i++)
		if (want->start[i] != got->start[i] ||
		    want->end[i] != got->end[i])
			fail_msg("%s: run %zu is [%llu, %llu), libext2fs says "
				 "[%llu, %llu)", what, i,
				 (unsigned long long)got->start[i],
				 (unsigned long long)got->end[i],
				 (unsigned long long)want->start[i],
				 (unsigned long long)want->end[i]);
}

/* Read @img every way there is and compare each with the oracle. */
static void check_image(const char *img)
{
	static struct runs want, got;
	static __u32 nfree[4096];
	static const size_t keep[] = { 1U << 20, 7, 0 };
	ext2_filsys fs;
	struct bitmap_stream *bs;
	struct plan_source src;
	char what[256];
	dgrp_t bad = 0;
	size_t k;
	int fd, use_fd, pass;

	assert_int_equal(ext2fs_open2(img, NULL, EXT2_FLAG_64BITS, 0, 0,
				      unix_io_manager, &fs), 0);
	oracle_runs(fs, &want);
	assert_true(want.n > 3);	/* aged: there is something to get wrong */
	assert_true(fs->group_desc_count <= 4096);
	oracle_free_clusters(fs, nfree);
	fd = open(img, O_RDONLY);
	assert_true(fd >= 0);
	for (use_fd = 0; use_fd < 2; use_fd++) {
		for (k = 0; k < sizeof(keep) / sizeof(keep[0]); k++) {
			assert_int_equal(bitmap_stream_open(fs,
					use_fd ? fd : -1, 0, &bs), 0);
			assert_int_equal(bitmap_stream_check(bs, keep[k],
							     &bad), 0);
			assert_memory_equal(bitmap_stream_free_clusters(bs),
					    nfree, fs->group_desc_count *
					    sizeof(__u32));
			/* twice: verification and the plan each take one */
			for (pass = 0; pass < 2; pass++) {
				bitmap_stream_source(bs, &src);
				source_runs(fs, &src, &got);
				snprintf(what, sizeof(what),
					 "%s (%s, keep %zu, pass %d)", img,
					 use_fd ? "batched" : "libext2fs",
					 keep[k], pass + 1);
				assert_same_runs(&want, &got, what);
			}
			bitmap_stream_close(bs);
		}
	}
	close(fd);
	ext2fs_close_free(&fs);
}

/*
 * mke2fs @opts, then write 40 files of 1..40 KiB each (from the same
 * seed) and remove every third: holes between the survivors.
 */
static void make_aged(const char *name, const char *size, const char *opts)
{
	char img[128];

	snprintf(img, sizeof(img), "%s/%s.img", dir, name);
	sh("PATH=$PATH:/sbin:/usr/sbin mke2fs -q -F %s %s %s >/dev/null", opts, img,
	   size);
	sh("cd %s && head -c 40960 /dev/urandom > data && "
	   "for i in $(seq 1 40); do head -c $((i * 1024)) data > f$i; "
	   "echo \"write f$i f$i\"; done > cmds && "
	   "for i in $(seq 1 3 40); do echo \"rm f$i\"; done >> cmds && "
	   "PATH=$PATH:/sbin:/usr/sbin debugfs -w -f cmds %s >/dev/null 2>&1",
	   dir, img);
	check_image(img);
}

static void ext4_flex_bg(void **state)
{
	(void)state;
	make_aged("flex", "256M", "-t ext4 -g 8192 -G 4 -E lazy_itable_init=1");
}

static void ext4_no_flex_bg(void **state)
{
	(void)state;
	make_aged("noflex", "256M", "-t ext4 -g 8192 -O ^flex_bg");
}

static void ext4_bigalloc(void **state)
{
	(void)state;
	make_aged("bigalloc", "512M", "-t ext4 -O bigalloc -C 16384");
}

static void ext4_1k_partial_group(void **state)
{
	(void)state;
	/* 8192 blocks per group: the last of 33 MiB has 1023 blocks */
	make_aged("ext4-1k", "33M", "-t ext4 -b 1024");
}

static void ext2_no_checksums(void **state)
{
	(void)state;
	make_aged("ext2", "48M", "-t ext2 -b 1024");
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	add_error_table(&et_ext2_error_table);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ext4_flex_bg),
		cmocka_unit_test(ext4_no_flex_bg),
		cmocka_unit_test(ext4_bigalloc),
		cmocka_unit_test(ext4_1k_partial_group),
		cmocka_unit_test(ext2_no_checksums),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
