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

#include "verify_int.h"

#include <ext2fs/ext3_extents.h>	/* needs ext2fs.h's types first */

/* Indirect blocks come with a negative blockcnt, data blocks with >= 0. */
static int ref_mapped_block(ext2_filsys fs, blk64_t *blocknr,
			    e2_blkcnt_t blockcnt, blk64_t ref_blk,
			    int ref_offset, void *priv)
{
	struct verify *v = priv;
	struct owner who = { blockcnt < 0 ? OWN_INDIRECT : OWN_DATA, v->ino };

	(void)fs;
	(void)ref_blk;
	(void)ref_offset;
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
	if (!ext2fs_inode_has_valid_blocks2(v->fs, v->inode))
		return 0;
	if (v->inode->i_flags & EXT4_EXTENTS_FL)
		return ref_extents(v);
	return ref_block_map(v);
}

/* The blocks of group @g's inode table that the scan reads. */
static blk64_t itable_scanned_blocks(ext2_filsys fs, dgrp_t g)
{
	__u32 ipg = EXT2_INODES_PER_GROUP(fs->super), used = ipg;

	if (ext2fs_has_group_desc_csum(fs)) {
		if (ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT))
			return 0;
		if (ext2fs_bg_itable_unused(fs, g) < ipg)
			used -= ext2fs_bg_itable_unused(fs, g);
		else
			used = 0;
	}
	return ((blk64_t)used * EXT2_INODE_SIZE(fs->super) +
		fs->blocksize - 1) / fs->blocksize;
}

/*
 * The scan reads an inode table 8 blocks at a time and waits for each
 * read.  e2fsck asks the kernel to read inode tables ahead, and so does
 * this: the scan at group @g keeps READAHEAD_BYTES requested beyond it.
 * That is for real disks, where the wait is a seek; the cached virtual
 * disk of the test machine shows no difference either way.
 */
#define READAHEAD_BYTES (8U << 20)

static void readahead_itables(struct verify *v, dgrp_t g)
{
	ext2_filsys fs = v->fs;
	blk64_t window = READAHEAD_BYTES / fs->blocksize, n;

	if (g < v->ra_next) {
		n = itable_scanned_blocks(fs, g);
		v->ra_blocks -= n < v->ra_blocks ? n : v->ra_blocks;
	}
	for (; v->ra_next < fs->group_desc_count && v->ra_blocks < window;
	     v->ra_next++) {
		n = itable_scanned_blocks(fs, v->ra_next);
		if (!n)
			continue;
		io_channel_cache_readahead(fs->io,
				ext2fs_inode_table_loc(fs, v->ra_next), n);
		if (v->ra_next > g)
			v->ra_blocks += n;
	}
}

/*
 * The scan skips INODE_UNINIT groups and the itable_unused tail of the
 * others, as e2fsck does.  An inode there that the inode bitmap marks in
 * use contradicts the descriptor: read it anyway, one at a time.
 */
static errcode_t scan_group_done(ext2_filsys fs, ext2_inode_scan scan,
				 dgrp_t g, void *priv)
{
	struct verify *v = priv;
	ext2_ino_t ipg = EXT2_INODES_PER_GROUP(fs->super);
	ext2_ino_t first = g * ipg + 1, last = g * ipg + ipg, ino;
	int flags = fs->flags;
	errcode_t err = 0;

	(void)scan;
	if (v->scanned >= first)
		first = v->scanned + 1;
	/* called from inside the scan: check every checksum here */
	fs->flags &= ~EXT2_FLAG_IGNORE_CSUM_ERRORS;
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
	fs->flags = flags;
	if (!err && g + 1 < fs->group_desc_count)
		readahead_itables(v, g + 1);
	return err;
}

/*
 * With group descriptor checksums the scan sets EXT2_SF_DO_LAZY itself;
 * without them INODE_UNINIT means nothing and is not honoured.  A missing
 * inode table is an error, not a skip.
 *
 * The scan verifies the checksum of every inode it returns, in use or
 * not, and checksums are the largest single cost left (a third).  Unused
 * inodes reference nothing, so the scan is told to ignore checksums and
 * ref_inode() verifies those of in-use inodes only.  On a
 * big-endian host the scan returns byte-swapped inodes, which
 * ext2fs_inode_csum_verify() cannot check: there the scan does it all.
 */
errcode_t verify_ref_inodes(struct verify *v)
{
	ext2_filsys fs = v->fs;
	int flags = fs->flags;
	ext2_inode_scan scan;
	ext2_ino_t ino;
	errcode_t err;

	err = ext2fs_open_inode_scan(fs, 0, &scan);
	if (err)
		return err;
	ext2fs_set_inode_callback(scan, scan_group_done, v);
	v->ra_next = 0;
	v->ra_blocks = 0;
	if (!v->naming)
		readahead_itables(v, 0);
	for (;;) {
		v->ino = 0;
		if (v->late_csum)
			fs->flags |= EXT2_FLAG_IGNORE_CSUM_ERRORS;
		err = ext2fs_get_next_inode_full(scan, &ino, v->inode,
						 v->inode_size);
		fs->flags = flags;
		if (err && err != EXT2_ET_INODE_CSUM_INVALID &&
		    err != EXT2_ET_BAD_BLOCK_IN_INODE_TABLE)
			break;
		if (!ino)
			break;
		v->scanned = ino;
		err = ref_inode(v, ino, err, v->late_csum);
		if (err)
			break;
	}
	ext2fs_close_inode_scan(scan);
	return err;
}
