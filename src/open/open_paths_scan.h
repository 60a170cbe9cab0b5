/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open_paths_scan.h - the processes and mounts that reach a file's bytes
 *                     (open_paths_scan.c)
 */
#ifndef E2TRIM_OPEN_PATHS_SCAN_H
#define E2TRIM_OPEN_PATHS_SCAN_H

#include <stddef.h>
#include <sys/types.h>

#include "e2trim_int.h"
#include "open_hold.h"

/*
 * The processes (other than this one and its children, such as the
 * qemu-nbd e2trim started) that hold @m's file, or one of the @nrdevs
 * block devices @rdevs, open: a FUSE daemon serving the file is refused
 * (10) naming its mount, else the first that holds one open for writing
 * (10) naming it; 0 if none.
 */
errcode_t open_paths_scan(struct e2trim *t, const struct hold_bytes *m,
			  const dev_t *rdevs, unsigned int nrdevs);

/*
 * What uses block device @rdev ("loopN" in sysfs: @name) so that it is
 * not free to hold: mounted (mountinfo's major:minor), or a dm/md device
 * built on it (sysfs holders).  1 with the words in @use, or 0.
 */
int open_paths_device_use(dev_t rdev, const char *name, char *use,
			  size_t len);

#endif /* E2TRIM_OPEN_PATHS_SCAN_H */
