// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bitmap.c - the filesystem geometry the plan needs, and batched marks
 *
 * The free runs themselves come from bitmap_stream.c.
 */
#include "bitmap.h"

void bitmap_geometry(ext2_filsys fs, struct plan_geometry *geo)
{
	geo->block_size = fs->blocksize;
	geo->cluster_ratio = EXT2FS_CLUSTER_RATIO(fs);
	geo->first_data_block = fs->super->s_first_data_block;
	geo->blocks_count = ext2fs_blocks_count(fs->super);
}

void mark_run_add(struct mark_run *mr, blk64_t blk, blk64_t len)
{
	if (mr->len && blk == mr->start + mr->len &&
	    len <= UINT32_MAX - mr->len) {
		mr->len += len;
		return;
	}
	mark_run_flush(mr);
	mr->start = blk;
	mr->len = len;
}

void mark_run_flush(struct mark_run *mr)
{
	if (mr->len == 1)
		ext2fs_mark_block_bitmap2(mr->map, mr->start);
	else if (mr->len)
		ext2fs_mark_block_bitmap_range2(mr->map, mr->start, mr->len);
	mr->len = 0;
}
