/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open_table.h - open: the partition table of a whole-disk image
 *                (open_table.c)
 */
#ifndef E2TRIM_OPEN_TABLE_H
#define E2TRIM_OPEN_TABLE_H

#include "e2trim_int.h"

/*
 * -p N or a byte offset: find where the filesystem starts and ends, set
 * t->offset_bytes, t->size_bytes and the io options libext2fs opens with.
 * A byte offset into an image whose table cannot be read whole is
 * refused (24): nothing would bound the filesystem.
 */
errcode_t open_locate_partition(struct e2trim *t);

/*
 * A loop device set up at an offset into its file (losetup -o): the
 * file's partition table bounds the filesystem as it bounds ?offset= on
 * the file (t->size_bytes, t->bound_what).  Nothing to bound: as it was.
 * A table in the file that cannot be read whole: its code (24).
 */
errcode_t open_bound_loop(struct e2trim *t);

/*
 * No -p, no offset: an ext2/3/4 superblock at byte 0 beside an MBR or
 * GPT with partitions is refused (24, naming -p N and wipefs).
 */
errcode_t open_stale_zero(struct e2trim *t);

/*
 * Any signature libblkid knows besides the ext superblock in the
 * filesystem's bytes (t->offset_bytes, t->size_bytes; through NBD and
 * RBD a copy of their edges): an LVM or RAID label, LUKS, another
 * filesystem or table is E2TRIM_ERR_SIGNATURE (24), naming it.
 */
errcode_t open_foreign_sigs(struct e2trim *t);

/* A partition table and no filesystem at byte 0?  Through NBD too. */
int open_whole_disk(struct e2trim *t);

/* e2trim_partitions(): the table's partitions, *@out malloc'd. */
errcode_t open_partition_list(struct e2trim *t, struct e2trim_partition **out,
			      unsigned int *n);

/*
 * No ext superblock (@err, bad magic): E2TRIM_ERR_NOT_EXT, saying what
 * libblkid finds there instead (xfs, vfat, swap; at an offset with
 * nothing, the type of the partition that starts there).
 */
errcode_t open_not_ext(struct e2trim *t, errcode_t err);

#endif /* E2TRIM_OPEN_TABLE_H */
