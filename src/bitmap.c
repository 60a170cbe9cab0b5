// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bitmap.c - the filesystem geometry the plan needs
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
