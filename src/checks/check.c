// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check.c - e2trim_check(): the gates that need more than the superblock
 *
 * open_fs.c has passed the superblock's gates; before any bitmap is believed
 * the device must hold the whole filesystem, every group descriptor must
 * be intact and in place, the journal must need nothing, and every block
 * bitmap's checksum must be right.  Each of them runs once.
 */
#include <ext2fs/ext2fs.h>

#include "check.h"
#include "check_desc.h"
#include "e2trim_int.h"
#include "journal_check.h"
#include "open_paths.h"
#include "walk.h"

/*
 * The image or device must hold every block the filesystem claims.  open_fs.c
 * asks this first, before MMP and the state gates: a fix for a state
 * (e2fsck -fy) printed for a filesystem that outgrows its partition runs
 * e2fsck past the partition's end, into the next one (issue 42), and on
 * an image too short e2fsck aborts and the same fix is printed again.
 */
errcode_t check_size(struct e2trim *t)
{
	uint64_t need = ext2fs_blocks_count(t->fs->super) *
			(uint64_t)t->fs->blocksize;

	if (t->size_bytes >= need)
		return 0;
	/* a partition holds less than the superblock says (-p N, ?offset=) */
	if (t->bound_what[0])
		return lib_fail(t, E2TRIM_ERR_TRUNCATED, "the filesystem needs "
				"%llu bytes, but %s holds only %llu: the "
				"partition was shrunk without resize2fs, or "
				"the filesystem is not this partition's; grow "
				"the partition back (resize2fs shrinks a "
				"filesystem first), or give the right "
				"partition", (unsigned long long)need,
				t->bound_what,
				(unsigned long long)t->size_bytes);
	return lib_fail(t, E2TRIM_ERR_TRUNCATED,
			"filesystem needs %llu bytes, only %llu are there",
			(unsigned long long)need,
			(unsigned long long)t->size_bytes);
}

/*
 * Where a group's bitmaps and inode table are: inside the filesystem, and
 * inside the group itself unless flex_bg lets them move: the first half
 * of ext2fs_check_desc(); check_desc.c does the overlaps.
 */
static errcode_t check_group_layout(ext2_filsys fs, dgrp_t g,
				    const struct group_tables *gt)
{
	blk64_t first = fs->super->s_first_data_block;
	blk64_t end = ext2fs_blocks_count(fs->super);

	if (!ext2fs_has_feature_flex_bg(fs->super)) {
		first = ext2fs_group_first_block2(fs, g);
		end = ext2fs_group_last_block2(fs, g) + 1;
	}
	/*
	 * Block s_first_data_block holds the primary superblock, whatever
	 * the block size: no bitmap or inode table is there.  (A descriptor
	 * that says block 0 on a 4 KiB-block filesystem passed, and its
	 * "bitmap" was read from the superblock's block.)
	 */
	if (first == fs->super->s_first_data_block)
		first++;
	if (!range_inside(gt->block_bitmap, 1, first, end))
		return EXT2_ET_GDESC_BAD_BLOCK_MAP;
	if (!range_inside(gt->inode_bitmap, 1, first, end))
		return EXT2_ET_GDESC_BAD_INODE_MAP;
	if (!range_inside(gt->inode_table, fs->inode_blocks_per_group, first,
			  end))
		return EXT2_ET_GDESC_BAD_INODE_TABLE;
	return 0;
}

/*
 * libext2fs does not verify group descriptor checksums on open, and a
 * group whose descriptor is bad may carry a BLOCK_UNINIT flag that hides
 * data: check every one before its bitmap is believed.  And where
 * ext2fs_check_desc() fails, e2fsck takes a backup's descriptors instead
 * (see check_desc.c): whatever the primary's bitmaps say is then moot.
 */
static errcode_t check_descriptors(struct e2trim *t)
{
	ext2_filsys fs = t->fs;
	struct group_tables gt;
	char what[256];
	errcode_t err;
	dgrp_t g;

	for_each_group_tables(fs, g, &gt) {
		if (!ext2fs_group_desc_csum_verify(fs, g))
			return lib_fail(t, E2TRIM_ERR_DESC_CSUM,
					"group %u descriptor checksum does not match",
					g);
		err = check_group_layout(fs, g, &gt);
		if (err)
			return lib_fail(t, E2TRIM_ERR_DESC_LAYOUT,
					"group %u: %s", g, error_message(err));
	}
	err = check_desc_overlaps(fs, what, sizeof(what));
	if (err == EXT2_ET_NO_MEMORY)
		return lib_fail_cause(t, E2TRIM_ERR_NO_MEMORY, err, NULL);
	if (err)
		return lib_fail(t, E2TRIM_ERR_DESC_LAYOUT,
				"%s: %s (e2fsck would use a backup superblock)",
				what, error_message(err));
	return 0;
}

/*
 * Every group's bitmap is read and its checksum verified before the first
 * discard, so that a bad one refuses the whole run instead of stopping it
 * half way.  The free runs found on the way are kept for verification and
 * the plan, up to KEEP_RUNS_MAX (16 MiB); a filesystem with more is
 * read again for each, since its trim is a million requests or more, next
 * to which the reads do not count.
 */
#define KEEP_RUNS_MAX (1U << 20)

static errcode_t open_bitmap(struct e2trim *t)
{
	dgrp_t g = 0;
	errcode_t err;

	err = bitmap_stream_open(t->fs, lib_read_fd(t), t->offset_bytes, &t->stream);
	if (err)
		return lib_fail_cause(t, E2TRIM_ERR_BITMAP_READ, err, NULL);
	err = bitmap_stream_check(t->stream, KEEP_RUNS_MAX, &g);
	if (!err)
		return 0;
	/* refused: e2trim_check() again opens a new one */
	bitmap_stream_close(t->stream);
	t->stream = NULL;
	if (err == EXT2_ET_BLOCK_BITMAP_CSUM_INVALID ||
	    err == EXT2_ET_GDESC_BAD_BLOCK_MAP)
		return lib_fail(t, E2TRIM_ERR_BITMAP_CSUM, "group %u: %s", g,
				error_message(err));
	return lib_fail(t, E2TRIM_ERR_BITMAP_READ, "group %u: %s", g,
			error_message(err));
}

errcode_t e2trim_check(struct e2trim *t)
{
	errcode_t err;

	if (!t)
		return E2TRIM_ERR_INVALID_ARGUMENT;
	if (!t->fs)
		return lib_fail(t, E2TRIM_ERR_BAD_CALL, NULL);
	if (t->checked)
		return 0;
	/*
	 * the size and the superblock's own gates ran in open_fs(), before
	 * MMP; the journal inode is found through the descriptors: them first
	 */
	err = check_descriptors(t);
	if (!err)
		err = journal_check(t);
	if (!err)
		err = open_bitmap(t);
	if (!err)
		t->checked = 1;
	/* a refusal because another writer came meanwhile says so (26),
	 * and one still there is named (10) */
	return open_paths_in_use_first(t, err);
}
