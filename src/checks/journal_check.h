/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * journal_check.h - a journal that holds transactions is not clean
 */
#ifndef E2TRIM_JOURNAL_CHECK_H
#define E2TRIM_JOURNAL_CHECK_H

#include <ext2fs/ext2fs.h>

#include "e2trim_int.h"
#include "journal_inode.h"

/*
 * Read the journal's superblock (internal, or external found by UUID) and
 * refuse what e2fsck would replay or question although needs_recovery is
 * clear.  With --force only warn (e2trim_forced()).  Returns 0,
 * E2TRIM_ERR_JOURNAL (log not empty, journal superblock unreadable or not
 * accepted by e2fsck), E2TRIM_ERR_JOURNAL_MISSING (an external journal
 * not found) or E2TRIM_ERR_NOT_CLEAN (the journal recorded an
 * error), the particulars in @t.
 */
errcode_t journal_check(struct e2trim *t);

/*
 * An external journal device given as the target: E2TRIM_ERR_FEATURE with
 * what it is (whose journal, by UUID) and what can be done, or 0 when it
 * is none.
 */
errcode_t journal_dev_refusal(struct e2trim *t);

#endif /* E2TRIM_JOURNAL_CHECK_H */
