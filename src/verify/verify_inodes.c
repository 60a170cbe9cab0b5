// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verify_inodes.c - the blocks every in-use inode references
 *
 * One inode scan, as e2fsck's pass 1 makes it: the data, the block map
 * (extent tree or indirect blocks) and the extended attribute block of
 * every inode that is in use go into the map verify.c checks the free
 * runs against.  See verify.c for what "in use" means and why.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "e2trim_int.h"
#include "itable_read.h"
#include "verify_int.h"

#include <ext2fs/ext3_extents.h>	/* needs ext2fs.h's types first */

/*
 * Indirect blocks come with a negative blockcnt, data blocks with >= 0.
 *
 * The resize inode's "data" are the backups of the reserved GDT blocks,
 * which e2fsck's pass 1 does not mark as the inode's (process_block()
 * marks only its DIND block): it leaves them to the table blocks, the
 * superblock backups' layout, which verify_ref_metadata() keeps too.  The
 * two differ on a 1 KiB-block bigalloc filesystem: its first data block
 * is 0, the primary reserved GDT blocks start a block later than in a
 * backup group, and the resize inode names every backup one block past
 * the one reserved for it.  The last such block can open a cluster the
 * bitmap calls free, which e2fsck -f finds clean and would not change:
 * marking it refused such a filesystem with advice that could not help.
 * Its indirect blocks (the primary reserved GDT blocks) are still kept.
 */
static int ref_mapped_block(ext2_filsys fs, blk64_t *blocknr,
			    e2_blkcnt_t blockcnt, blk64_t ref_blk,
			    int ref_offset, void *priv)
{
	struct verify *v = priv;
	struct owner who = { blockcnt < 0 ? OWN_INDIRECT : OWN_DATA, v->ino };

	(void)fs;
	(void)ref_blk;
	(void)ref_offset;
	if (v->ino == EXT2_RESIZE_INO && blockcnt >= 0)
		return 0;
	v->cb_err = verify_ref(v, *blocknr, 1, who);
	return v->cb_err ? BLOCK_ABORT : 0;
}

static errcode_t ref_block_map(struct verify *v)
{
	errcode_t err;

	v->cb_err = 0;
	err = ext2fs_block_iterate3(v->fs, v->ino, BLOCK_FLAG_READ_ONLY,
				    v->block_buf, ref_mapped_block, v);
	return v->cb_err ? v->cb_err : err;
}

/*
 * Most files keep all their extents in the inode: a tree of depth 0, up
 * to four leaves right after the header.  An extent handle costs two
 * allocations and two frees per file, on which glibc also consolidates
 * its heap: a third of the verification of 200 000 small files (117 ms of
 * CPU instead of 79).  So once libext2fs has verified the header, such
 * leaves are decoded here as ext2fs_extent_get() decodes them.  Returns 0
 * when the tree is not that simple: the extent handle then takes over
 * (and reports a bad header).
 */
static int ref_root_leaves(struct verify *v, errcode_t *err)
{
	struct ext3_extent_header *eh = (void *)v->inode->i_block;
	struct ext3_extent *ex = (struct ext3_extent *)(eh + 1);
	struct owner who = { OWN_DATA, v->ino };
	unsigned int i, n, len;
	blk64_t blk;

	if (ext2fs_extent_header_verify(eh, sizeof(v->inode->i_block)) ||
	    le16toh(eh->eh_depth))
		return 0;
	n = le16toh(eh->eh_entries);
	for (i = 0, *err = 0; i < n && !*err; i++, ex++) {
		blk = le32toh(ex->ee_start) |
		      (blk64_t)le16toh(ex->ee_start_hi) << 32;
		len = le16toh(ex->ee_len);
		if (len > EXT_INIT_MAX_LEN)	/* unwritten: allocated too */
			len -= EXT_INIT_MAX_LEN;
		*err = verify_ref(v, blk, len, who);
	}
	return 1;
}

/*
 * Depth first, each node once: an index entry names the block of the node
 * below it (marked before the iterator reads it), a leaf a run of data.
 * Unwritten extents are allocated all the same.
 */
static errcode_t ref_extents(struct verify *v)
{
	struct owner who = { OWN_DATA, v->ino };
	ext2_extent_handle_t handle;
	struct ext2fs_extent ext;
	int op = EXT2_EXTENT_ROOT;
	errcode_t err;

	if (ref_root_leaves(v, &err))
		return err;
	err = ext2fs_extent_open2(v->fs, v->ino, v->inode, &handle);
	if (err)
		return err;
	while (!(err = ext2fs_extent_get(handle, op, &ext))) {
		op = EXT2_EXTENT_NEXT;
		if (ext.e_flags & EXT2_EXTENT_FLAGS_SECOND_VISIT)
			continue;
		if (ext.e_flags & EXT2_EXTENT_FLAGS_LEAF) {
			who.kind = OWN_DATA;
			err = verify_ref(v, ext.e_pblk, ext.e_len, who);
		} else {
			who.kind = OWN_EXTENT_TREE;
			err = verify_ref(v, ext.e_pblk, 1, who);
		}
		if (err)
			break;
	}
	ext2fs_extent_free(handle);
	return err == EXT2_ET_EXTENT_NO_NEXT ? 0 : err;
}

/*
 * e2fsck keeps the inodes special by number (the quota inodes the
 * superblock names too) whatever their links and bitmap bit say.
 */
static int inode_in_use(const struct verify *v, ext2_ino_t ino)
{
	return v->inode->i_links_count ||
	       verify_special_inode(v->fs->super, ino) ||
	       ext2fs_test_inode_bitmap2(v->fs->inode_map, ino);
}

/*
 * Mark what inode @ino (in v->inode) references.  @read_err is what
 * reading it said: an in-use inode with a bad checksum, or in a bad block
 * of the inode table, cannot be believed either way.  With @check_csum
 * the checksum is still to be verified.
 */
static errcode_t ref_inode(struct verify *v, ext2_ino_t ino,
			   errcode_t read_err, int check_csum)
{
	struct owner who = { OWN_XATTR, ino };
	errcode_t err;
	blk64_t blk;

	if (!inode_in_use(v, ino))
		return 0;
	v->ino = ino;
	if (read_err)
		return read_err;
	if (check_csum && !ext2fs_inode_csum_verify(v->fs, ino,
			(struct ext2_inode_large *)v->inode))
		return EXT2_ET_INODE_CSUM_INVALID;
	err = verify_inode_rules(v, ino);
	if (err)
		return err;
	err = verify_note_dir(v, ino);
	if (err)
		return err;
	blk = ext2fs_file_acl_block(v->fs, v->inode);
	if (blk) {
		err = verify_ref(v, blk, 1, who);
		if (err)
			return err;
	}
	/* The bad blocks inode has no mode, yet i_block[] lists blocks. */
	if (ino == EXT2_BAD_INO)
		return ref_block_map(v);
	/* devices, fast symlinks and inline data have no blocks */
	if (!verify_inode_maps_blocks(v->fs, v->inode))
		return 0;
	if (v->inode->i_flags & EXT4_EXTENTS_FL)
		return ref_extents(v);
	return ref_block_map(v);
}

/*
 * Inodes of group @g from @next on are in its unused area, which the
 * scan does not read, as e2fsck does not.  An inode there that the inode
 * bitmap marks in use contradicts the descriptor: read it anyway, one at
 * a time.
 */
static errcode_t ref_unused_area(ext2_filsys fs, dgrp_t g, ext2_ino_t next,
				 void *priv)
{
	struct verify *v = priv;
	ext2_ino_t ipg = EXT2_INODES_PER_GROUP(fs->super);
	ext2_ino_t first = next, last = g * ipg + ipg, ino;
	errcode_t err = 0;

	v->scanned = next - 1;
	while (first <= last &&
	       !ext2fs_find_first_set_inode_bitmap2(fs->inode_map, first,
						    last, &ino)) {
		v->ino = ino;
		err = ext2fs_read_inode_full(fs, ino, v->inode,
					     v->inode_size);
		if (err && err != EXT2_ET_INODE_CSUM_INVALID)
			break;
		err = ref_inode(v, ino, err, 0);
		if (err || ino == last)
			break;
		first = ino + 1;
	}
	if (!err)
		v->ino = 0;
	return err;
}

/* Groups done of all: the inode tables are what verification reads. */
static void verify_progress(struct verify *v, uint64_t groups_done)
{
	uint64_t per = (uint64_t)v->fs->inode_blocks_per_group *
		       v->fs->blocksize;

	if (!v->naming)
		lib_progress(v->t, E2TRIM_STAGE_VERIFY, groups_done * per,
			     v->fs->group_desc_count * per);
}

static errcode_t scanned_group(void *priv, dgrp_t g, ext2_ino_t next)
{
	struct verify *v = priv;
	errcode_t err;

	verify_progress(v, (uint64_t)g + 1);
	err = ref_unused_area(v->fs, g, next, v);
	/* a group at a time (8 MiB of inode table at most): the cancel's bound */
	if (!err && !v->naming && lib_cancelled(v->t))
		err = E2TRIM_ERR_INTERRUPTED;
	return err;
}

/*
 * An inode the scan read.  On a little-endian host its checksum is
 * verified here, for in-use inodes only: unused inodes reference nothing,
 * and checksums were the largest single cost of the libext2fs scan (a
 * third).  On a big-endian host itable_scan() has verified it.
 */
static errcode_t scanned_inode(void *priv, ext2_ino_t ino,
			       const struct ext2_inode *inode, errcode_t err)
{
	struct verify *v = priv;

	memcpy(v->inode, inode, v->inode_size);
	v->scanned = ino;
	v->ino = 0;
	err = ref_inode(v, ino, err, v->late_csum);
	if (!err)
		v->ino = 0;
	return err;
}

/*
 * Every inode table, read in large requests with many in flight (see
 * itable_read.c): what libext2fs's inode scan returns, in the same order
 * and with the same errors, at the speed of the device.
 */
errcode_t verify_ref_inodes(struct verify *v)
{
	static const struct itable_ops ops = { scanned_inode, scanned_group,
					       verify_imap_pre,
					       verify_imap_pre_data };

	v->ino = 0;
	verify_progress(v, 0);
	return itable_scan(v->fs, v->fd, v->offset_bytes, &ops, v);
}
