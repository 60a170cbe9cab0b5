// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gates_super.c - the superblock's constants, checked as e2fsck checks them
 *
 * Before e2fsck looks at a single inode, check_super_block() holds the
 * superblock's geometry to fixed bounds, and where one is out of bounds
 * it stops ("Corruption found in superblock", exit 8) or asks.  libext2fs
 * opens many such filesystems all the same: a first_ino of 5 makes inodes
 * 5 to 10 ordinary ones, a wrong inodes_count hides or invents inodes.
 * e2trim would then decide what is in use from a geometry that e2fsck
 * refuses to believe, so it refuses too, with exit 16.  Nothing here
 * reads more than the superblock libext2fs already holds.
 */
#include <stdio.h>

#include "e2trim_int.h"
#include "gates_super.h"

/* Is @v a power of two (0 counts, as e2fsck's LOG2_CHECK lets 0 pass)? */
static int log2_ok(__u64 v)
{
	return (v & (v - 1)) == 0;
}

/*
 * Write "superblock: <field> is <value>, e2fsck wants <lo> to <hi>" into
 * @buf and return 1, or return 0 when @val lies in [@lo, @hi].
 */
static int out_of(char *buf, size_t len, const char *field, __u64 val,
		  __u64 lo, __u64 hi)
{
	if (val >= lo && val <= hi)
		return 0;
	snprintf(buf, len, "superblock: %s is %llu, e2fsck accepts %llu to "
		 "%llu", field, (unsigned long long)val,
		 (unsigned long long)lo, (unsigned long long)hi);
	return 1;
}

/* The bounds check_super_block() computes from the block size. */
static int geometry_bad(ext2_filsys fs, char *buf, size_t len)
{
	struct ext2_super_block *sb = fs->super;
	__u64 blocks = ext2fs_blocks_count(sb), blks_max;
	__u32 ipb = EXT2_INODES_PER_BLOCK(sb), bpg = sb->s_blocks_per_group;
	__u64 ipg_max, cpg_max, bpg_max;

	blks_max = (1ULL << 32) * EXT2_MAX_BLOCKS_PER_GROUP(sb);
	if (blks_max > (ext2fs_has_feature_64bit(sb) ? (1ULL << 48) - 1 :
						       (1ULL << 32) - 1))
		blks_max = ext2fs_has_feature_64bit(sb) ? (1ULL << 48) - 1 :
							  (1ULL << 32) - 1;
	ipg_max = bpg > 4 ? (__u64)ipb * (bpg - 4) : 0;
	if (ipg_max > EXT2_MAX_INODES_PER_GROUP(sb))
		ipg_max = EXT2_MAX_INODES_PER_GROUP(sb);
	cpg_max = 8ULL * fs->blocksize;
	if (cpg_max > EXT2_MAX_CLUSTERS_PER_GROUP(sb))
		cpg_max = EXT2_MAX_CLUSTERS_PER_GROUP(sb);
	bpg_max = 8ULL * fs->blocksize * EXT2FS_CLUSTER_RATIO(fs);
	if (bpg_max > EXT2_MAX_BLOCKS_PER_GROUP(sb))
		bpg_max = EXT2_MAX_BLOCKS_PER_GROUP(sb);

	return out_of(buf, len, "inodes_count", sb->s_inodes_count, 1,
		      UINT32_MAX) ||
	       out_of(buf, len, "blocks_count", blocks, 1, blks_max) ||
	       out_of(buf, len, "first_data_block", sb->s_first_data_block, 0,
		      blocks) ||
	       out_of(buf, len, "clusters_per_group", sb->s_clusters_per_group,
		      8, cpg_max) ||
	       out_of(buf, len, "blocks_per_group", bpg, 8, bpg_max) ||
	       out_of(buf, len, "inodes_per_group", sb->s_inodes_per_group,
		      ipb, ipg_max) ||
	       out_of(buf, len, "r_blocks_count", ext2fs_r_blocks_count(sb), 0,
		      blocks / 2) ||
	       out_of(buf, len, "reserved_gdt_blocks",
		      sb->s_reserved_gdt_blocks, 0,
		      fs->blocksize / sizeof(__u32)) ||
	       out_of(buf, len, "desc_size", sb->s_desc_size, 0,
		      EXT2_MAX_DESC_SIZE);
}

/* The fields that must agree with each other, not only lie in bounds. */
static int relations_bad(ext2_filsys fs, char *buf, size_t len)
{
	struct ext2_super_block *sb = fs->super;
	__u64 inodes = (__u64)sb->s_inodes_per_group * fs->group_desc_count;
	unsigned int isize = EXT2_INODE_SIZE(sb);
	/* 1 KiB blocks without bigalloc leave block 0 to the boot sector */
	__u32 first = sb->s_log_block_size == 0 &&
		      EXT2FS_CLUSTER_RATIO(fs) == 1;

	if (!log2_ok(sb->s_desc_size)) {
		snprintf(buf, len, "superblock: desc_size %u is not a power "
			 "of two", sb->s_desc_size);
		return 1;
	}
	if (sb->s_inodes_count != inodes) {
		snprintf(buf, len, "superblock: inodes_count is %u, its groups "
			 "hold %llu", sb->s_inodes_count,
			 (unsigned long long)inodes);
		return 1;
	}
	if (sb->s_rev_level > EXT2_GOOD_OLD_REV &&
	    out_of(buf, len, "first_ino", sb->s_first_ino,
		   EXT2_GOOD_OLD_FIRST_INO, sb->s_inodes_count))
		return 1;
	if (out_of(buf, len, "inode_size", isize, EXT2_GOOD_OLD_INODE_SIZE,
		   fs->blocksize))
		return 1;
	if (!log2_ok(isize)) {
		snprintf(buf, len, "superblock: inode_size %u is not a power "
			 "of two", isize);
		return 1;
	}
	if (sb->s_blocks_per_group !=
	    sb->s_clusters_per_group * EXT2FS_CLUSTER_RATIO(fs)) {
		snprintf(buf, len, "superblock: blocks_per_group %u is not "
			 "clusters_per_group %u times the cluster ratio",
			 sb->s_blocks_per_group, sb->s_clusters_per_group);
		return 1;
	}
	if (sb->s_first_data_block != first) {
		snprintf(buf, len, "superblock: first_data_block is %u, must "
			 "be %u", sb->s_first_data_block, first);
		return 1;
	}
	return 0;
}

int gates_super_constants(ext2_filsys fs, char *buf, size_t len)
{
	return geometry_bad(fs, buf, len) || relations_bad(fs, buf, len);
}

errcode_t gates_super_check(struct e2trim *t)
{
	char detail[160];

	if (!gates_super_constants(t->fs, detail, sizeof(detail)))
		return 0;
	return lib_fail(t, E2TRIM_ERR_SUPER_DAMAGED, "%s", detail);
}
