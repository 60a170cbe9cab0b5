/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open_hold.h - what e2trim holds on an image file for the run
 *               (open_hold.c)
 */
#ifndef E2TRIM_OPEN_HOLD_H
#define E2TRIM_OPEN_HOLD_H

#include <sys/stat.h>

#include "e2trim_int.h"

/*
 * Claim (O_EXCL) every loop device over the image file @st for the run,
 * and remember the file; refuse (10) if one is in use.
 */
errcode_t hold_loop_devices(struct e2trim *t, const struct stat *st);

/* Refuse @dev, swap space (10), naming swapoff. */
errcode_t open_swap_refusal(struct e2trim *t, const char *dev);

/*
 * ext2fs_check_mount_point(), one caller at a time (getmntent()'s one
 * buffer).  0 or its error.
 */
errcode_t hold_mount_check(const char *path, int *flags, char *mtpt,
			   size_t len);

/*
 * Is the file @st (its dev and ino) the backing file of a loop device?
 * 1 with its /dev name in @name, or 0.
 */
int loop_over_file(const struct stat *st, char *name, size_t len);

/*
 * Is the image file behind a loop device that was not there at open?
 * Then refuse (10).  The _now_and_then form looks only when 100 ms
 * have passed since its last look (between batches of discards).
 */
errcode_t recheck_loop_devices(struct e2trim *t);
errcode_t recheck_loop_devices_now_and_then(struct e2trim *t);

/*
 * A raw image file or a block device (t->fd): take qemu's image locks for the run (not in
 * a dry run), and refuse (26, naming the holder) if another program
 * holds any of them.
 */
errcode_t hold_image_locks(struct e2trim *t);

/*
 * An open for writing of t->path failed with EPERM: E2TRIM_ERR_OPEN with
 * the particulars and fix when it is the file's attribute (chattr +i or
 * +a), 0 when it is not.
 */
errcode_t hold_attr_refusal(struct e2trim *t);

#endif /* E2TRIM_OPEN_HOLD_H */
