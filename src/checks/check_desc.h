/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check_desc.h - the overlap half of ext2fs_check_desc(), without its
 * bitmap of every block
 */
#ifndef E2TRIM_CHECK_DESC_H
#define E2TRIM_CHECK_DESC_H

#include <stddef.h>
#include <ext2fs/ext2fs.h>

/*
 * Does any group's block bitmap, inode bitmap or inode table share a
 * block with another group's, or with a superblock, its descriptors or
 * reserved GDT blocks?  ext2fs_check_desc() fails then, and e2fsck leaves
 * the primary descriptors for a backup.  The tables must already lie
 * inside the filesystem (and their group without flex_bg).  Returns 0,
 * EXT2_ET_GDESC_BAD_BLOCK_MAP, EXT2_ET_GDESC_BAD_INODE_MAP or
 * EXT2_ET_GDESC_BAD_INODE_TABLE with the two that overlap described in
 * @what, or EXT2_ET_NO_MEMORY.
 */
errcode_t check_desc_overlaps(ext2_filsys fs, char *what, size_t len);

#endif /* E2TRIM_CHECK_DESC_H */
