/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gates.h - the superblock's refusals: every reason e2trim will not trim
 */
#ifndef E2TRIM_GATES_H
#define E2TRIM_GATES_H

#include <ext2fs/ext2_fs.h>
#include <ext2fs/ext2fs.h>

/*
 * Check the superblock alone: features, journal, orphans, clean state.
 * Returns 0 or the code of the first gate that fails.  With @force the
 * state gates pass, and their codes are added to @forced (room for
 * @max, *@nforced counts them).
 */
errcode_t gates_check_super(const struct ext2_super_block *sb, int force,
			    errcode_t *forced, unsigned int max,
			    unsigned int *nforced);

#endif /* E2TRIM_GATES_H */
