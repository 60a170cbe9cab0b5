// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verify_imap.c - the inode bitmap, read for verification
 *
 * Read like ext2fs_read_inode_bitmap() would (an INODE_UNINIT group with
 * a valid descriptor is all zeros; every other group's block is read and
 * its checksum verified), but only the groups that have a bitmap are
 * copied in: libext2fs loads every group bit by bit, which on a sparse
 * map of a 15 TiB filesystem costs 0.3 s.
 *
 * The blocks are read in the same stream as the inode tables
 * (itable_read.h's pre()), each run of consecutive bitmap blocks named
 * just before the table of the run's first group: with flex_bg a flex
 * group's 16 inode bitmaps end where its 16 tables begin, so both come
 * in the same requests.  Read on their own first, the 16 384 bitmaps of a
 * 2 TiB filesystem were 1 024 more requests of 64 KiB, a third of
 * verification's time cold; read one at a time, seconds.
 *
 * A group's bitmap is in before its first inode is handed on, which is
 * all the scan asks of the map; the rest of verification runs once the
 * scan is over, with all of it.  Should the walk stop early, the map is
 * read again on its own, whole, and its error, if any, is the one
 * reported: the same refusal, in the same order, as when the map was read
 * before the walk began.
 */
#include "verify_int.h"
#include "range_read.h"
#include "walk.h"

static int imap_on_disk(ext2_filsys fs, dgrp_t g)
{
	return !(ext2fs_has_group_desc_csum(fs) &&
		 ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT) &&
		 ext2fs_group_desc_csum_verify(fs, g));
}

/*
 * Group @g's bitmap is the next in the stream: check it and copy it in.
 * @cons: the next group whose bitmap is due, moved past @g.
 */
static errcode_t imap_block(ext2_filsys fs, dgrp_t *cons, blk64_t blk,
			    const unsigned char *buf)
{
	__u32 ipg = EXT2_INODES_PER_GROUP(fs->super);
	dgrp_t g;

	while (*cons < fs->group_desc_count && !imap_on_disk(fs, *cons))
		(*cons)++;
	g = (*cons)++;
	if (g >= fs->group_desc_count ||
	    blk != ext2fs_inode_bitmap_loc(fs, g))
		return EXT2_ET_INVALID_ARGUMENT;	/* never seen */
	if (!ext2fs_inode_bitmap_csum_verify(fs, g, (void *)buf, ipg / 8))
		return EXT2_ET_INODE_BITMAP_CSUM_INVALID;
	return ext2fs_set_inode_bitmap_range2(fs->inode_map,
					      (__u64)g * ipg + 1, ipg,
					      (void *)buf);
}

/* The map, empty, once every bitmap's place is known to be sound. */
static errcode_t imap_alloc(ext2_filsys fs)
{
	struct group_tables gt;
	errcode_t err;
	dgrp_t g;

	err = ext2fs_allocate_inode_bitmap(fs, "inodes in use", &fs->inode_map);
	/* block 0: no bitmap (first_data_block is 0 or 1) */
	for_each_group_tables(fs, g, &gt) {
		if (err)
			break;
		if (imap_on_disk(fs, g) &&
		    !(gt.inode_bitmap && blocks_in_fs(fs, gt.inode_bitmap, 1)))
			err = EXT2_ET_INODE_BITMAP_READ;
	}
	return err;
}

/* What reading the map says, as ext2fs_read_inode_bitmap() would. */
static errcode_t imap_error(ext2_filsys fs, errcode_t err)
{
	if (err && err != EXT2_ET_INODE_BITMAP_CSUM_INVALID &&
	    err != EXT2_ET_NO_MEMORY && err != EXT2_ET_INVALID_ARGUMENT)
		err = EXT2_ET_INODE_BITMAP_READ;
	if (err && fs->inode_map) {
		ext2fs_free_inode_bitmap(fs->inode_map);
		fs->inode_map = NULL;
	}
	return err;
}

/* The whole map on its own: one bitmap block a range, joined in order. */
struct imap_read {
	ext2_filsys fs;
	dgrp_t prod, cons;	/* the next group to name, to copy in */
};

static int imap_next(void *priv, blk64_t *blk, blk64_t *len)
{
	struct imap_read *ir = priv;

	while (ir->prod < ir->fs->group_desc_count &&
	       !imap_on_disk(ir->fs, ir->prod))
		ir->prod++;
	if (ir->prod >= ir->fs->group_desc_count)
		return 1;
	*blk = ext2fs_inode_bitmap_loc(ir->fs, ir->prod++);
	*len = 1;
	return 0;
}

static errcode_t imap_data(void *priv, blk64_t blk, blk64_t len,
			   const unsigned char *buf)
{
	struct imap_read *ir = priv;
	errcode_t err = 0;

	for (; len && !err; len--, blk++, buf += ir->fs->blocksize)
		err = imap_block(ir->fs, &ir->cons, blk, buf);
	return err;
}

/* Again from the start, into the map verify_imap_begin() made. */
static errcode_t read_whole(struct verify *v)
{
	static const struct range_read_ops ops = { imap_next, imap_data };
	struct imap_read ir = { v->fs, 0, 0 };

	ext2fs_clear_inode_bitmap(v->fs->inode_map);
	return imap_error(v->fs, range_read(v->fs, v->fd, v->offset_bytes,
					    &ops, &ir));
}

/* Has every bitmap on disk come in? */
static int imap_complete(const struct verify *v)
{
	dgrp_t g;

	for (g = v->imap_cons; g < v->fs->group_desc_count; g++)
		if (imap_on_disk(v->fs, g))
			return 0;
	return 1;
}

errcode_t verify_imap_begin(struct verify *v)
{
	errcode_t err = imap_alloc(v->fs);

	v->imap_cons = 0;
	v->imap_pending = !err;
	return imap_error(v->fs, err);
}

/*
 * itable_read.h's pre(): group @g starts a run of bitmaps when its own is
 * on disk and does not follow the previous group's; the run goes on while
 * the next group's bitmap is the next block.  A pure function of the
 * descriptors, as pre() must be.
 */
void verify_imap_pre(void *priv, dgrp_t g, blk64_t *blk, blk64_t *len)
{
	struct verify *v = priv;
	ext2_filsys fs = v->fs;
	blk64_t b, n = 1;

	*len = 0;
	if (!v->imap_pending || !imap_on_disk(fs, g))
		return;
	b = ext2fs_inode_bitmap_loc(fs, g);
	if (g && imap_on_disk(fs, g - 1) &&
	    ext2fs_inode_bitmap_loc(fs, g - 1) + 1 == b)
		return;		/* named with the run it belongs to */
	while (g + n < fs->group_desc_count && imap_on_disk(fs, g + n) &&
	       ext2fs_inode_bitmap_loc(fs, g + n) == b + n)
		n++;
	*blk = b;
	*len = n;
}

errcode_t verify_imap_pre_data(void *priv, blk64_t blk,
			       const unsigned char *buf)
{
	struct verify *v = priv;

	return imap_block(v->fs, &v->imap_cons, blk, buf);
}

errcode_t verify_imap_end(struct verify *v, errcode_t walk_err)
{
	errcode_t err;

	if (!v->imap_pending)
		return walk_err;
	v->imap_pending = 0;
	if (!walk_err && imap_complete(v))
		return 0;	/* the usual case: every group was opened */
	err = read_whole(v);
	if (!err)
		return walk_err;
	/* reported as it was when the map was read before the walk */
	v->ino = 0;
	v->scanned = 0;
	v->damage = DMG_NONE;
	return err;
}
