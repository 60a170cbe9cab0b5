/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ramfs_io.h - libext2fs's reads of an image file on ramfs, holes left
 *              holes
 */
#ifndef E2TRIM_RAMFS_IO_H
#define E2TRIM_RAMFS_IO_H

#include <ext2fs/ext2fs.h>

/* @fd is a regular file on ramfs (statfs), where a read fills holes. */
int ramfs_io_wanted(int fd);

/*
 * unix_io's reads without its side effect on ramfs: a page the file does
 * not hold reads as zeroes and stays a hole.  Read-only: a write is
 * refused (MMP cannot run on ramfs anyway: it opens with O_DIRECT).
 */
extern io_manager ramfs_io_manager;

#endif /* E2TRIM_RAMFS_IO_H */
