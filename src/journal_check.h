/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * journal_check.h - a journal that holds transactions is not clean
 */
#ifndef E2TRIM_JOURNAL_CHECK_H
#define E2TRIM_JOURNAL_CHECK_H

#include <ext2fs/ext2fs.h>

#include "e2trim_int.h"

/*
 * Read the journal's superblock (internal, or external found by UUID) and
 * refuse what e2fsck would replay or question although needs_recovery is
 * clear.  With --force only warn (e2trim_forced()).  Returns 0,
 * E2TRIM_ERR_JOURNAL (log not empty, journal superblock unreadable or not
 * accepted by e2fsck) or E2TRIM_ERR_NOT_CLEAN (the journal recorded an
 * error), the particulars in @t.
 */
errcode_t journal_check(struct e2trim *t);

/* The part of the journal superblock e2fsck looks at before replaying. */
#define JOURNAL_SB_SIZE		1024

/*
 * journal_inode.c: the internal journal's superblock, read through inode
 * s_journal_inum when e2fsck would take that inode as the journal, and the
 * journal's length in blocks (its size).  Returns 0, or 1 with @why saying
 * why e2fsck would not use the inode as it is (then e2fsck loads the
 * superblock's backup of its block map, or deletes the journal) or why the
 * superblock cannot be read.
 */
int journal_inode_sb(ext2_filsys fs, unsigned char *jsb, blk64_t *total_len,
		     char *why, size_t len);

#endif /* E2TRIM_JOURNAL_CHECK_H */
