/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * journal_inode.h - the internal journal e2fsck would load (below
 * journal_check.c, which decides what its superblock means)
 */
#ifndef E2TRIM_JOURNAL_INODE_H
#define E2TRIM_JOURNAL_INODE_H

#include <stddef.h>

#include <ext2fs/ext2fs.h>

/* The part of the journal superblock e2fsck looks at before replaying. */
#define JOURNAL_SB_SIZE		1024

/*
 * The internal journal's superblock, read through inode
 * s_journal_inum when e2fsck would take that inode as the journal, and the
 * journal's length in blocks (its size).  Returns 0, or 1 with @why saying
 * why e2fsck would not use the inode as it is (then e2fsck loads the
 * superblock's backup of its block map, or deletes the journal) or why the
 * superblock cannot be read.
 */
int journal_inode_sb(ext2_filsys fs, unsigned char *jsb, blk64_t *total_len,
		     char *why, size_t len);

#endif /* E2TRIM_JOURNAL_INODE_H */
