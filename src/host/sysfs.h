/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sysfs.h - one line of a sysfs attribute, read the one way
 */
#ifndef E2TRIM_SYSFS_H
#define E2TRIM_SYSFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <et/com_err.h>

/*
 * The first line of @path, without its newline, into @buf: 0, or an errno
 * value (ENODATA: the file is empty).
 */
errcode_t sysfs_read_line(const char *path, char *buf, size_t len);

/* The same for /sys/dev/block/MAJ:MIN/<attr> of block device @dev. */
errcode_t sysfs_line(dev_t dev, const char *attr, char *buf, size_t len);

/* A number there; 0 if absent or not a number. */
uint64_t sysfs_u64(dev_t dev, const char *attr);

#endif /* E2TRIM_SYSFS_H */
