/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verify.h - never trust a bitmap blindly: check who owns the free space
 */
#ifndef E2TRIM_VERIFY_H
#define E2TRIM_VERIFY_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>

#include "e2trim.h"
#include "plan.h"

/*
 * Mark every block that an in-use inode or the filesystem's own metadata
 * references, then walk every free run that @src yields over the whole
 * filesystem and make sure none of them holds such a block; make sure no
 * directory entry names an inode the scan skipped as unused; and make
 * sure every group's summary counts agree with the bitmaps
 * (@free_clusters: the block bitmap's count per group, or NULL).  Nothing
 * is written.  The inode tables are read through @fd, the device or image
 * libext2fs has open, the filesystem @offset_bytes into it (-1: through
 * libext2fs only; see range_read.c).  Returns EXIT_OK, or the exit code
 * after printing why:
 * EXIT_UNVERIFIED (referenced blocks are marked free), EXIT_CORRUPT (an
 * inode, its block map or a directory cannot be followed),
 * EXIT_UNUSED_INODE, EXIT_COUNTS, EXIT_ERROR (read error, no memory).
 */
int verify_free_space(const struct e2trim_control *ctl, ext2_filsys fs,
		      int fd, uint64_t offset_bytes,
		      const struct plan_source *src,
		      const struct plan_geometry *geo,
		      const __u32 *free_clusters);

#endif /* E2TRIM_VERIFY_H */
