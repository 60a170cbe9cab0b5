/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * journal_check.h - a journal that holds transactions is not clean
 */
#ifndef E2TRIM_JOURNAL_CHECK_H
#define E2TRIM_JOURNAL_CHECK_H

#include <ext2fs/ext2fs.h>

/*
 * Read the journal's superblock (internal, or external found by UUID) and
 * refuse what e2fsck would replay or question although needs_recovery is
 * clear.  With @force only warn.  Returns EXIT_OK, EXIT_JOURNAL (log not
 * empty, journal superblock unreadable or not accepted by e2fsck) or
 * EXIT_NOT_CLEAN (the journal recorded an error), after printing why.
 */
int journal_check(const char *device, ext2_filsys fs, int force);

#endif /* E2TRIM_JOURNAL_CHECK_H */
