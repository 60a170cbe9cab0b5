// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verify_counts.c - the group descriptors' summary counts against the bitmaps
 *
 * The kernel changes a group's bitmaps and its descriptor's counts in the
 * same transaction, so on a cleanly unmounted filesystem they agree;
 * where they do not, something wrote one without the other, and the
 * bitmap e2trim is about to trust may be what is wrong.  e2fsck's pass 5
 * reports a group's free blocks, free inodes and directories count that
 * differ from what it counted as errors (e2fsck -n exits 4), and so does
 * this.  The superblock's totals are another matter: the kernel keeps
 * them only approximately (per-CPU counters, written back now and then),
 * and e2fsck corrects them without calling the filesystem damaged
 * (PR_NO_OK); they are not checked.
 *
 * Also from e2fsck (super.c): a group's unused inode count larger than
 * its free inode count is wrong, and e2fsck sets it to 0, so that pass 1
 * reads the whole table, and keeps whatever the inodes it had skipped
 * hold.  e2trim's scan would skip them: refuse.
 */
#include <stdio.h>

#include <et/com_err.h>

#include "gates.h"
#include "verify_int.h"

/* Free inodes of group @g by the inode bitmap, as pass 5 counts them. */
static errcode_t free_inodes(const struct verify *v, dgrp_t g,
			     unsigned char *buf, __u32 *out)
{
	ext2_filsys fs = v->fs;
	__u32 ipg = EXT2_INODES_PER_GROUP(fs->super);
	errcode_t err;

	if (ext2fs_has_group_desc_csum(fs) &&
	    ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT)) {
		*out = ipg;	/* no bitmap on disk: all free */
		return 0;
	}
	err = ext2fs_get_inode_bitmap_range2(fs->inode_map,
					     (__u64)g * ipg + 1, ipg, buf);
	if (!err)
		*out = ipg - ext2fs_bitcount(buf, ipg / 8);
	return err;
}

static int mismatch(const struct verify *v, dgrp_t g, const char *what,
		    __u32 desc, const char *from, __u32 counted)
{
	char detail[160];

	snprintf(detail, sizeof(detail), "group %u: %s count %u, %s has %u",
		 g, what, desc, from, counted);
	return refuse(v->device, EXIT_COUNTS, detail);
}

static int check_group(const struct verify *v, dgrp_t g,
		       const __u32 *free_clusters, unsigned char *buf)
{
	ext2_filsys fs = v->fs;
	__u32 desc, counted, unused;
	char detail[160];
	errcode_t err;

	desc = ext2fs_bg_free_blocks_count(fs, g);
	if (free_clusters && desc != free_clusters[g])
		return mismatch(v, g, EXT2FS_CLUSTER_RATIO(fs) > 1 ?
				"free clusters" : "free blocks", desc,
				"block bitmap", free_clusters[g]);
	err = free_inodes(v, g, buf, &counted);
	if (err) {
		com_err(program_name, err,
			"while counting the free inodes of %s", v->device);
		return EXIT_ERROR;
	}
	desc = ext2fs_bg_free_inodes_count(fs, g);
	if (desc != counted)
		return mismatch(v, g, "free inodes", desc, "inode bitmap",
				counted);
	unused = ext2fs_bg_itable_unused(fs, g);
	if (ext2fs_has_group_desc_csum(fs) && unused > desc) {
		snprintf(detail, sizeof(detail),
			 "group %u: unused inodes count %u, more than its %u "
			 "free inodes", g, unused, desc);
		return refuse(v->device, EXIT_COUNTS, detail);
	}
	desc = ext2fs_bg_used_dirs_count(fs, g);
	if (desc != v->dirs_in_group[g])
		return mismatch(v, g, "directories", desc, "inode table",
				v->dirs_in_group[g]);
	return EXIT_OK;
}

int verify_group_counts(const struct verify *v, const __u32 *free_clusters)
{
	ext2_filsys fs = v->fs;
	unsigned char *buf = NULL;
	errcode_t err;
	dgrp_t g;
	int ret = EXIT_OK;

	err = ext2fs_get_mem(EXT2_INODES_PER_GROUP(fs->super) / 8 + 8, &buf);
	if (err) {
		com_err(program_name, err, "while counting the inodes of %s",
			v->device);
		return EXIT_ERROR;
	}
	for (g = 0; g < fs->group_desc_count && !ret; g++)
		ret = check_group(v, g, free_clusters, buf);
	ext2fs_free_mem(&buf);
	return ret;
}
