/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verify.h - never trust a bitmap blindly: check who owns the free space
 */
#ifndef E2TRIM_VERIFY_H
#define E2TRIM_VERIFY_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>

#include "e2trim_int.h"
#include "plan.h"

/*
 * Mark every block that an in-use inode or the filesystem's own metadata
 * references, then walk every free run that @src yields over the whole
 * filesystem and make sure none of them holds such a block.  Nothing is
 * written.  Returns 0, or the code with its particulars in @t:
 * E2TRIM_ERR_UNVERIFIED (referenced blocks are marked free),
 * E2TRIM_ERR_UNFOLLOWABLE (an inode or its block map cannot be followed),
 * E2TRIM_ERR_VERIFY_READ, E2TRIM_ERR_BITMAP_READ, E2TRIM_ERR_NO_MEMORY.
 */
errcode_t verify_free_space(struct e2trim *t, const struct plan_source *src,
			    const struct plan_geometry *geo);

#endif /* E2TRIM_VERIFY_H */
