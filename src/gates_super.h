/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gates_super.h - the superblock's constants, checked as e2fsck checks them
 */
#ifndef E2TRIM_GATES_SUPER_H
#define E2TRIM_GATES_SUPER_H

#include <stddef.h>
#include <ext2fs/ext2fs.h>

/*
 * 1 when a superblock field is out of the bounds e2fsck's
 * check_super_block() holds it to (e2fsck then stops or asks), with what
 * and why written into @buf; 0 when all of them hold.
 */
int gates_super_constants(ext2_filsys fs, char *buf, size_t len);

#endif /* E2TRIM_GATES_SUPER_H */
