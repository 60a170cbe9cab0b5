/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * walk.h - the idioms every stage's walk shares, each written once:
 *
 *   - is a range of blocks (or bytes) inside another, or the filesystem;
 *     do two ranges overlap;
 *   - what a group's descriptor says about its tables, group by group,
 *     and where each block of the descriptors lies;
 *   - does a free run move a walk forward ("the source did not advance").
 *
 * All of them are asked of numbers read off a disk that may be damaged,
 * so none of them may wrap around 2^64.
 */
#ifndef E2TRIM_WALK_H
#define E2TRIM_WALK_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>

/*
 * Does [start, start + len) lie inside [first, end)?  (An empty range
 * does if it starts in [first, end]; no table is ever empty: the
 * superblock gate holds inodes_per_group to at least a block's worth.)
 */
static inline int range_inside(uint64_t start, uint64_t len, uint64_t first,
			       uint64_t end)
{
	return start >= first && start <= end && len <= end - start;
}

/* Do [a, a + alen) and [b, b + blen) share anything? */
static inline int ranges_overlap(uint64_t a, uint64_t alen, uint64_t b,
				 uint64_t blen)
{
	if (!alen || !blen)
		return 0;
	return a <= b ? b - a < alen : a - b < blen;
}

/*
 * Do blocks [blk, blk + len) lie in the filesystem?  Blocks below
 * s_first_data_block are not: on a 1 KiB-block filesystem block 0 is the
 * boot sector, in no group and no bitmap.
 */
static inline int blocks_in_fs(ext2_filsys fs, blk64_t blk, blk64_t len)
{
	return range_inside(blk, len, fs->super->s_first_data_block,
			    ext2fs_blocks_count(fs->super));
}

/*
 * Where group @g's descriptor puts its tables, and its flags.  Nothing
 * here is checked: check.c checks every descriptor (checksum, tables inside
 * the filesystem and, without flex_bg, inside the group) before any
 * bitmap is believed, and a walk that reads a table tests its blocks
 * again with blocks_in_fs().  The flags mean something only with
 * ext2fs_has_group_desc_csum(): without it the kernel ignores them.
 */
struct group_tables {
	blk64_t block_bitmap;
	blk64_t inode_bitmap;
	blk64_t inode_table;		/* fs->inode_blocks_per_group long */
	__u16 flags;			/* EXT2_BG_* */
};

static inline void group_tables(ext2_filsys fs, dgrp_t g,
				struct group_tables *gt)
{
	gt->block_bitmap = ext2fs_block_bitmap_loc(fs, g);
	gt->inode_bitmap = ext2fs_inode_bitmap_loc(fs, g);
	gt->inode_table = ext2fs_inode_table_loc(fs, g);
	gt->flags = ext2fs_bg_flags(fs, g);
}

static inline int group_tables_next(ext2_filsys fs, dgrp_t g,
				    struct group_tables *gt)
{
	if (g >= fs->group_desc_count)
		return 0;
	group_tables(fs, g, gt);
	return 1;
}

/* Every group @g, in order, with @gt its descriptor's tables. */
#define for_each_group_tables(fs, g, gt) \
	for ((g) = 0; group_tables_next((fs), (g), (gt)); (g)++)

/*
 * The block ext2fs_open2() read descriptor block @i from: the bytes of
 * fs->group_desc from @i * blocksize on.  It reads those before the
 * first meta_bg in one piece, from where group 0's layout puts them
 * (ext2fs_super_and_bgd_loc2()), and asks ext2fs_descriptor_block_loc2()
 * only for the meta_bg ones.  Asked for the others too, the latter is
 * wrong on a 1 KiB-block bigalloc filesystem: the first data block is 0,
 * the superblock in block 1, the descriptors from block 2, but it adds
 * that shift only to descriptor block 0 (libext2fs 1.45 to 1.47) and so
 * puts block 1 at 2 as well.  A look that read descriptor block 1 from
 * there compared the copy's second block with the medium's first, and
 * stopped every real run of such a filesystem with two descriptor blocks
 * (26, "written by another program").
 */
static inline blk64_t fs_desc_block(ext2_filsys fs, dgrp_t i)
{
	blk64_t super, old_desc, new_desc;
	dgrp_t contiguous = fs->desc_blocks;
	blk_t used;

	if (ext2fs_has_feature_meta_bg(fs->super) &&
	    fs->super->s_first_meta_bg < contiguous)
		contiguous = fs->super->s_first_meta_bg;
	if (i >= contiguous)
		return ext2fs_descriptor_block_loc2(fs,
				fs->super->s_first_data_block, i);
	ext2fs_super_and_bgd_loc2(fs, 0, &super, &old_desc, &new_desc, &used);
	return old_desc + i;
}

/*
 * Does a free run [start, end), found by a walk standing at @from, move
 * it forward?  It must end after @from and hold a block.  A source that
 * yields one that does not is damaged (or has a bug), and a walk that
 * took it would never end: every walk over free runs stops on it.
 */
static inline int run_advances(uint64_t from, uint64_t start, uint64_t end)
{
	return end > from && start < end;
}

#endif /* E2TRIM_WALK_H */
