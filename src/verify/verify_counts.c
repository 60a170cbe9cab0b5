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

#include "e2trim_int.h"
#include "verify_int.h"

/*
 * A group's counts and flags, read with one descriptor lookup: the
 * ext2fs_bg_*() accessors look the descriptor up once per field, a
 * sixth of the whole verification on 15 TiB (122 880 groups).  In memory
 * descriptors are in host order; a 64-byte descriptor has the high 16
 * bits of each count, a 32-byte one does not.
 */
struct desc_counts {
	__u32 free_blocks, free_inodes, used_dirs, itable_unused;
	__u16 flags;
};

static void read_desc(ext2_filsys fs, dgrp_t g, struct desc_counts *c)
{
	struct ext4_group_desc *gd =
		(struct ext4_group_desc *)ext2fs_group_desc(fs, fs->group_desc,
							    g);
	int big = EXT2_DESC_SIZE(fs->super) >= EXT2_MIN_DESC_SIZE_64BIT;

	c->free_blocks = gd->bg_free_blocks_count |
		(big ? (__u32)gd->bg_free_blocks_count_hi << 16 : 0);
	c->free_inodes = gd->bg_free_inodes_count |
		(big ? (__u32)gd->bg_free_inodes_count_hi << 16 : 0);
	c->used_dirs = gd->bg_used_dirs_count |
		(big ? (__u32)gd->bg_used_dirs_count_hi << 16 : 0);
	c->itable_unused = gd->bg_itable_unused |
		(big ? (__u32)gd->bg_itable_unused_hi << 16 : 0);
	c->flags = gd->bg_flags;
}

/* Free inodes of group @g by the inode bitmap, as pass 5 counts them. */
static errcode_t free_inodes(const struct verify *v, dgrp_t g, int uninit,
			     unsigned char *buf, __u32 *out)
{
	ext2_filsys fs = v->fs;
	__u32 ipg = EXT2_INODES_PER_GROUP(fs->super);
	errcode_t err;

	if (uninit) {
		*out = ipg;	/* no bitmap on disk: all free */
		return 0;
	}
	err = ext2fs_get_inode_bitmap_range2(fs->inode_map,
					     (__u64)g * ipg + 1, ipg, buf);
	if (!err)
		*out = ipg - ext2fs_bitcount(buf, ipg / 8);
	return err;
}

static errcode_t mismatch(const struct verify *v, dgrp_t g, const char *what,
			  __u32 desc, const char *from, __u32 counted)
{
	char detail[160];

	snprintf(detail, sizeof(detail), "group %u: %s count %u, %s has %u",
		 g, what, desc, from, counted);
	return lib_fail(v->t, E2TRIM_ERR_COUNTS, "%s", detail);
}

static errcode_t check_group(const struct verify *v, dgrp_t g, int csum,
			     const __u32 *free_clusters, unsigned char *buf)
{
	ext2_filsys fs = v->fs;
	struct desc_counts c;
	char detail[160];
	__u32 counted;
	errcode_t err;

	read_desc(fs, g, &c);
	if (free_clusters && c.free_blocks != free_clusters[g])
		return mismatch(v, g, EXT2FS_CLUSTER_RATIO(fs) > 1 ?
				"free clusters" : "free blocks", c.free_blocks,
				"block bitmap", free_clusters[g]);
	err = free_inodes(v, g, csum && (c.flags & EXT2_BG_INODE_UNINIT), buf,
			  &counted);
	if (err)
		return lib_fail_cause(v->t, E2TRIM_ERR_VERIFY_READ, err,
				      "while counting the free inodes");
	if (c.free_inodes != counted)
		return mismatch(v, g, "free inodes", c.free_inodes,
				"inode bitmap", counted);
	if (csum && c.itable_unused > c.free_inodes) {
		snprintf(detail, sizeof(detail),
			 "group %u: unused inodes count %u, more than its %u "
			 "free inodes", g, c.itable_unused, c.free_inodes);
		return lib_fail(v->t, E2TRIM_ERR_COUNTS, "%s", detail);
	}
	if (c.used_dirs != v->dirs_in_group[g])
		return mismatch(v, g, "directories", c.used_dirs,
				"inode table", v->dirs_in_group[g]);
	return 0;
}

errcode_t verify_group_counts(const struct verify *v, const __u32 *free_clusters)
{
	ext2_filsys fs = v->fs;
	unsigned char *buf = NULL;
	errcode_t err;
	dgrp_t g;
	errcode_t ret = 0;

	err = ext2fs_get_mem(EXT2_INODES_PER_GROUP(fs->super) / 8 + 8, &buf);
	if (err)
		return lib_fail_cause(v->t, E2TRIM_ERR_VERIFY_READ, err,
				      "while counting the inodes");
	for (g = 0; g < fs->group_desc_count && !ret; g++)
		ret = check_group(v, g, ext2fs_has_group_desc_csum(fs),
				  free_clusters, buf);
	ext2fs_free_mem(&buf);
	return ret;
}
