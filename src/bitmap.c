// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bitmap.c - the filesystem's block bitmap as a source of free runs
 *
 * libext2fs finds runs a word at a time and across group edges by itself;
 * nothing here tests a single bit.
 */
#include <errno.h>

#include "bitmap.h"

void bitmap_geometry(ext2_filsys fs, struct plan_geometry *geo)
{
	geo->block_size = fs->blocksize;
	geo->cluster_ratio = EXT2FS_CLUSTER_RATIO(fs);
	geo->first_data_block = fs->super->s_first_data_block;
	geo->blocks_count = ext2fs_blocks_count(fs->super);
}

/*
 * On bigalloc there is one bit per cluster, but these calls take and
 * return block numbers: a zero bit found for block b means the whole
 * cluster holding b is free, so the run comes back starting on a cluster
 * edge and ending on one (the plan clips it to the range).
 */
static errcode_t next_free(void *priv, uint64_t from, uint64_t last,
			   uint64_t *run_start, uint64_t *run_end)
{
	ext2_filsys fs = priv;
	blk64_t zero, set;
	errcode_t err;

	err = ext2fs_find_first_zero_block_bitmap2(fs->block_map, from, last,
						   &zero);
	if (err)
		return err;	/* ENOENT: no free block left in [from, last] */

	err = ext2fs_find_first_set_block_bitmap2(fs->block_map, zero, last,
						  &set);
	if (err == ENOENT)
		set = last + 1;	/* free up to the end of the window */
	else if (err)
		return err;

	*run_start = zero;
	*run_end = set;
	return 0;
}

void bitmap_source(ext2_filsys fs, struct plan_source *src)
{
	src->next_free = next_free;
	src->priv = fs;
}
