/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * itable_read.h - every inode table, read as fast as the device allows
 *
 * What libext2fs's inode scan (ext2fs_get_next_inode_full()) returns, in
 * the same order, with the same errors, but read in large requests with
 * many in flight (range_read.h), and without the inodes that cannot be
 * in use: see itable_read.c.
 */
#ifndef E2TRIM_ITABLE_READ_H
#define E2TRIM_ITABLE_READ_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>

struct itable_ops {
	/*
	 * Inode @ino, EXT2_INODE_SIZE() bytes in host byte order, valid
	 * until it returns, and what reading it said: 0,
	 * EXT2_ET_BAD_BLOCK_IN_INODE_TABLE (its block is in the bad blocks
	 * list: not read, all zeros), or on a big-endian host
	 * EXT2_ET_INODE_CSUM_INVALID.  On a little-endian host checksums
	 * are left to the caller (ext2fs_inode_csum_verify()).
	 * A nonzero return stops the scan.
	 */
	errcode_t (*inode)(void *priv, ext2_ino_t ino,
			   const struct ext2_inode *inode, errcode_t err);
	/*
	 * Group @g is done, every group in order, as the scan's
	 * ext2fs_set_inode_callback() is called: inodes of @g from @next on
	 * were not read (its itable_unused tail, or all of an INODE_UNINIT
	 * group on a filesystem with group descriptor checksums).
	 */
	errcode_t (*group_done)(void *priv, dgrp_t g, ext2_ino_t next);
	/*
	 * Optional (NULL: none): other blocks to read in the same stream,
	 * before any inode of group @g is handed on: *@blk, *@len (0:
	 * none), the same answer whenever it is asked for @g.  Named just
	 * before @g's table, so that a range that ends where the table
	 * starts is read in the same requests (with flex_bg the inode
	 * bitmaps of a flex group lie right before its tables).  Their
	 * blocks come to pre_data() in order; a nonzero return stops the
	 * scan with it.
	 */
	void (*pre)(void *priv, dgrp_t g, blk64_t *blk, blk64_t *len);
	errcode_t (*pre_data)(void *priv, blk64_t blk,
			      const unsigned char *buf);
};

/*
 * Every inode of the used part of every inode table, except those that
 * are all zeros while the inode bitmap (fs->inode_map, when loaded) says
 * free and they are not reserved: such an inode references nothing.
 * @fd, @offset_bytes: as for range_read().  Returns 0, what a callback
 * returned, EXT2_ET_GDESC_BAD_INODE_TABLE, EXT2_ET_MISSING_INODE_TABLE
 * (after group_done() of the groups before), or EXT2_ET_NEXT_INODE_READ.
 */
errcode_t itable_scan(ext2_filsys fs, int fd, uint64_t offset_bytes,
		      const struct itable_ops *ops, void *priv);

#endif /* E2TRIM_ITABLE_READ_H */
