/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open.h - open the filesystem and pass every safety gate, or refuse
 */
#ifndef E2TRIM_OPEN_H
#define E2TRIM_OPEN_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>

#include "bitmap.h"
#include "e2trim.h"

#define MAX_LOOP_HOLDS 8

struct e2trim_fs {
	ext2_filsys fs;		/* libext2fs handle */
	struct bitmap_stream *stream;	/* its block bitmap, group by group */
	int fd;			/* our own: O_EXCL on a block device */
	int is_blkdev;
	uint64_t size_bytes;	/* of the device, image or partition */
	uint64_t offset_bytes;	/* where the filesystem starts (partition) */
	char io_options[40];	/* "offset=N" for libext2fs, or empty */
	int loop_fds[MAX_LOOP_HOLDS];	/* loop devices over the image, held */
	int nloops;
};

/*
 * Open ctl->device, check every gate and every block bitmap's checksum.  Returns
 * EXIT_OK with @tfs ready, or the exit code after printing why; then
 * nothing is left open.  For a real trim the device is opened for writing
 * and, on a block device, held exclusively until e2trim_fs_close().
 */
int e2trim_fs_open(const struct e2trim_control *ctl, struct e2trim_fs *tfs);

/*
 * Only the first steps of e2trim_fs_open(), for --fsck before e2fsck runs:
 * refuse a device or image that is in use or cannot be opened, and find
 * where the filesystem starts (--partition: *@offset_bytes, else 0).
 * Returns EXIT_OK or the exit code after printing why; nothing is left
 * open either way, so that e2fsck can have the device to itself.
 */
int e2trim_fs_probe(const struct e2trim_control *ctl, uint64_t *offset_bytes);

void e2trim_fs_close(struct e2trim_fs *tfs);

#endif /* E2TRIM_OPEN_H */
