/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open_hold.h - what e2trim holds on an image file for the run
 *               (open_hold.c)
 */
#ifndef E2TRIM_OPEN_HOLD_H
#define E2TRIM_OPEN_HOLD_H

#include <stdint.h>
#include <sys/stat.h>

#include "e2trim_int.h"

/*
 * Bytes of a file, as a loop device over them is found: the file's dev
 * and inode, [start, end) of its bytes, and a loop device that is the
 * target itself (not "another path"; 0: none).
 */
struct hold_bytes {
	dev_t dev;
	ino_t ino;
	uint64_t start_bytes, end_bytes;
	dev_t self;
};

/* The bytes the handle's target lives in (t->file_*). */
void hold_bytes_of(const struct e2trim *t, struct hold_bytes *m);

typedef errcode_t (*hold_loop_fn)(struct e2trim *t, void *ctx,
				  const char *name);

/*
 * Each loop device over @m (by LOOP_GET_STATUS64's device and inode, any
 * name, deleted or not; its offset range meeting @m's): @fn(@t, @ctx,
 * "loopN"), until one returns nonzero, which is returned.
 */
errcode_t hold_each_loop(struct e2trim *t, const struct hold_bytes *m,
			 hold_loop_fn fn, void *ctx);

/*
 * Claim loop device @name (O_EXCL) for the run, into t->loop_fds; refuse
 * (10) if it is claimed already (mounted, held, swap).  A hold_loop_fn.
 */
errcode_t hold_loop(struct e2trim *t, void *ctx, const char *name);

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
