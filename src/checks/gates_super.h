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

struct e2trim;

/* A geometry e2fsck would not check is not one to trim by: 16, or 0. */
errcode_t gates_super_check(struct e2trim *t);

#endif /* E2TRIM_GATES_SUPER_H */
