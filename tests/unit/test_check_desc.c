// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_check_desc.c - check_desc_overlaps() says what ext2fs_check_desc()
 * says, on every geometry mke2fs makes
 *
 * The oracle is libext2fs itself: a filesystem laid out in memory by
 * ext2fs_initialize() and ext2fs_allocate_tables(), then one or two
 * descriptors moved at a time onto, next to or inside another table, a
 * superblock copy or its descriptors, or anywhere.  Where every table
 * still lies inside the filesystem (and its group without flex_bg: the
 * part check.c tests first), ext2fs_check_desc() fails exactly when
 * check_desc_overlaps() does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "check_desc.h"

struct geometry {
	const char *name;
	unsigned int log_block;		/* s_log_block_size */
	unsigned int log_cluster;
	blk64_t blocks;
	__u32 compat, incompat, ro_compat;
	unsigned int log_groups_per_flex;
	__u32 blocks_per_group;
};

#define FLEX EXT4_FEATURE_INCOMPAT_FLEX_BG
#define META EXT2_FEATURE_INCOMPAT_META_BG
#define B64 EXT4_FEATURE_INCOMPAT_64BIT
#define EXTENTS EXT3_FEATURE_INCOMPAT_EXTENTS
#define SPARSE EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER
#define RESIZE EXT2_FEATURE_COMPAT_RESIZE_INODE

static const struct geometry geometries[] = {
	{ "1k flex_bg", 0, 0, 65536, RESIZE, FLEX | EXTENTS, SPARSE, 4, 0 },
	{ "1k no flex_bg", 0, 0, 65536, RESIZE, 0, SPARSE, 0, 0 },
	{ "4k flex_bg 64bit", 2, 2, 40 * 32768, RESIZE, FLEX | B64 | EXTENTS,
	  SPARSE, 4, 0 },
	{ "4k meta_bg", 2, 2, 300 * 4096, 0, META | FLEX | EXTENTS, SPARSE, 4,
	  4096 },
	{ "4k no sparse_super", 2, 2, 12 * 8192, 0, 0, 0, 0, 8192 },
	{ "4k sparse_super2", 2, 2, 12 * 8192,
	  EXT4_FEATURE_COMPAT_SPARSE_SUPER2, FLEX | EXTENTS, SPARSE, 2, 8192 },
	{ "1k bigalloc", 0, 4, 16 * 8192 * 16, 0, FLEX | EXTENTS,
	  SPARSE | EXT4_FEATURE_RO_COMPAT_BIGALLOC, 2, 0 },
	{ "4k bigalloc", 2, 6, 8 * 32768 * 16, 0, FLEX | EXTENTS,
	  SPARSE | EXT4_FEATURE_RO_COMPAT_BIGALLOC, 2, 0 },
};

static ext2_filsys make_fs(const struct geometry *geo)
{
	struct ext2_super_block param = { 0 };
	char img[] = "/tmp/test_check_desc.XXXXXX";
	ext2_filsys fs;
	int fd;

	ext2fs_blocks_count_set(&param, geo->blocks);
	param.s_log_block_size = geo->log_block;
	param.s_log_cluster_size = geo->log_cluster;
	param.s_feature_compat = geo->compat;
	param.s_feature_incompat = geo->incompat;
	param.s_feature_ro_compat = geo->ro_compat;
	param.s_log_groups_per_flex = geo->log_groups_per_flex;
	param.s_blocks_per_group = geo->blocks_per_group;
	param.s_inodes_count = geo->blocks >> (geo->log_cluster -
						 geo->log_block + 3);
	param.s_rev_level = EXT2_DYNAMIC_REV;
	if (geo->compat & RESIZE)
		param.s_reserved_gdt_blocks = 7;
	if (geo->compat & EXT4_FEATURE_COMPAT_SPARSE_SUPER2) {
		param.s_backup_bgs[0] = 1;
		param.s_backup_bgs[1] = 9;
	}
	if (geo->incompat & B64)
		param.s_desc_size = EXT2_MIN_DESC_SIZE_64BIT;
	fd = mkstemp(img);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(truncate(img, 4096), 0);
	assert_int_equal(ext2fs_initialize(img, EXT2_FLAG_64BITS, &param,
					   unix_io_manager, &fs), 0);
	assert_int_equal(ext2fs_allocate_tables(fs), 0);
	unlink(img);
	return fs;
}

/* ext2fs_check_desc()'s first half: every table inside its limits */
static int tables_inside(ext2_filsys fs)
{
	blk64_t first = fs->super->s_first_data_block;
	blk64_t last = ext2fs_blocks_count(fs->super) - 1, b;
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++) {
		if (!ext2fs_has_feature_flex_bg(fs->super)) {
			first = ext2fs_group_first_block2(fs, g);
			last = ext2fs_group_last_block2(fs, g);
		}
		b = ext2fs_block_bitmap_loc(fs, g);
		if (b < first || b > last)
			return 0;
		b = ext2fs_inode_bitmap_loc(fs, g);
		if (b < first || b > last)
			return 0;
		b = ext2fs_inode_table_loc(fs, g);
		/* as check.c's range_inside(): no wrap past 2^64 */
		if (b < first || b > last - (fs->inode_blocks_per_group - 1))
			return 0;
	}
	return 1;
}

static blk64_t table_loc(ext2_filsys fs, int kind, dgrp_t g)
{
	if (kind == 0)
		return ext2fs_block_bitmap_loc(fs, g);
	if (kind == 1)
		return ext2fs_inode_bitmap_loc(fs, g);
	return ext2fs_inode_table_loc(fs, g);
}

static void set_loc(ext2_filsys fs, int kind, dgrp_t g, blk64_t b)
{
	if (kind == 0)
		ext2fs_block_bitmap_loc_set(fs, g, b);
	else if (kind == 1)
		ext2fs_inode_bitmap_loc_set(fs, g, b);
	else
		ext2fs_inode_table_loc_set(fs, g, b);
}

/*
 * Somewhere a table of group @own could be moved to that may collide with
 * another; without flex_bg, mostly inside group @own.
 */
static blk64_t target(ext2_filsys fs, dgrp_t own)
{
	dgrp_t g = random() % fs->group_desc_count;
	blk64_t super, old_desc, new_desc, b;
	blk_t used;

	if (!ext2fs_has_feature_flex_bg(fs->super) && random() % 4) {
		g = own;
		if (random() % 4 == 0)
			return ext2fs_group_first_block2(fs, g) + random() %
			       ext2fs_group_blocks_count(fs, g);
	}

	switch (random() % 4) {
	case 0:
		b = table_loc(fs, random() % 3, g);
		break;
	case 1:
		b = ext2fs_inode_table_loc(fs, g) +
		    fs->inode_blocks_per_group - 1;
		break;
	case 2:
		ext2fs_super_and_bgd_loc2(fs, g, &super, &old_desc, &new_desc,
					  &used);
		b = random() % 2 ? super : old_desc ? old_desc : new_desc;
		b += random() % 3;
		break;
	default:
		return random() % ext2fs_blocks_count(fs->super);
	}
	b += random() % 3;
	b -= random() % 3 * (random() % 2 ? 1 : fs->inode_blocks_per_group);
	return b;
}

static void test_agrees_with_libext2fs(void **state)
{
	unsigned int i, n, trial, compared, failed;
	char what[256];
	errcode_t ours, theirs;

	(void)state;
	srandom(23);
	for (i = 0; i < sizeof(geometries) / sizeof(geometries[0]); i++) {
		ext2_filsys fs = make_fs(&geometries[i]);
		dgrp_t groups = fs->group_desc_count, g[2];
		blk64_t old[2];
		int kind[2];

		assert_int_equal(ext2fs_check_desc(fs), 0);
		assert_int_equal(check_desc_overlaps(fs, what, sizeof(what)), 0);
		compared = failed = 0;
		for (trial = 0; trial < 5000; trial++) {
			n = 1 + random() % 2;
			for (unsigned int j = 0; j < n; j++) {
				g[j] = random() % groups;
				kind[j] = random() % 3;
				old[j] = table_loc(fs, kind[j], g[j]);
				set_loc(fs, kind[j], g[j], target(fs, g[j]));
			}
			if (tables_inside(fs)) {
				theirs = ext2fs_check_desc(fs);
				ours = check_desc_overlaps(fs, what,
							   sizeof(what));
				if (!theirs != !ours)
					fail_msg("%s, trial %u: "
						 "ext2fs_check_desc %ld, "
						 "ours %ld (%s)",
						 geometries[i].name, trial,
						 (long)theirs, (long)ours,
						 ours ? what : "");
				compared++;
				failed += theirs != 0;
			}
			while (n--)
				set_loc(fs, kind[n], g[n], old[n]);
		}
		print_message("%s: %u groups, %u layouts compared, "
			      "%u rejected\n", geometries[i].name, groups,
			      compared, failed);
		assert_true(compared > 500 && failed > 100 &&
			    compared - failed > 100);
		ext2fs_free(fs);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agrees_with_libext2fs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
