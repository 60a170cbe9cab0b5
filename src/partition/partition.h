/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * partition.h - find a partition inside a whole-disk image, and refuse a
 *               table whose entries cannot be trusted
 */
#ifndef E2TRIM_PARTITION_H
#define E2TRIM_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "e2trim_int.h"
#include "partition_read.h"
#include "partition_table.h"

/*
 * Where partition @partno (1-based, as in /dev/sda1) of the MBR or GPT
 * table @rd reads starts and how long it is, in bytes, once the whole table
 * has been checked.  Returns 0, or the code with its particulars in @et:
 * E2TRIM_ERR_NO_PARTITION_TABLE, E2TRIM_ERR_NO_PARTITION,
 * E2TRIM_ERR_PARTITION (entries that overlap, an extended container, a
 * damaged GPT without an intact backup, a filesystem at offset 0 under a
 * stray table), E2TRIM_ERR_PARTITION_TABLE, E2TRIM_ERR_NO_MEMORY.  A GPT
 * read from its backup is a warning (e2trim_warning()).
 */
errcode_t partition_locate(struct e2trim *et, const struct part_reader *rd,
			   unsigned int partno,
			   uint64_t *start_bytes, uint64_t *size_bytes);

/*
 * --partition with a block device @fd: E2TRIM_ERR_PARTITION_ON_BLKDEV,
 * the particulars saying which device to give instead (its partition
 * device, or for a loop device without partition scanning, losetup -P or
 * the image file).
 */
errcode_t partition_on_blkdev(struct e2trim *et, int fd,
			       unsigned int partno);

/*
 * Each partition's own device of the whole-disk block device @fd, as the
 * kernel named it in sysfs ("/dev/sdb2"), into p[i].device.
 */
void partition_devices(int fd, struct e2trim_partition *p, unsigned int n);

/*
 * Every partition of the table @rd reads that can hold a filesystem (not
 * the extended containers), in table order, once the whole table has
 * been checked as for partition_locate(); *@out is malloc'd.
 */
errcode_t partition_list(struct e2trim *et, const struct part_reader *rd,
			 struct e2trim_partition **out, unsigned int *n);

/*
 * Is what @rd reads a whole-disk image: no ext2/3/4 filesystem at offset 0, and a
 * table with ext partitions?  E2TRIM_ERR_WHOLE_DISK, listing them, or 0.
 */
errcode_t partition_whole_disk(struct e2trim *et,
			       const struct part_reader *rd);

/*
 * Is there an ext2/3/4 superblock at byte 0 of what @rd reads beside an
 * MBR or GPT whose entries hold partitions?  One of the two is stale and
 * they overlap (libblkid's safe probe calls it ambivalent):
 * E2TRIM_ERR_PARTITION, naming -p N and wipefs.  Else 0.
 */
errcode_t partition_stale_zero(struct e2trim *et, const struct part_reader *rd);

/*
 * Every signature libblkid knows in the @len bytes at @off of @fd (a
 * file, a device, or a copy of a VM image's edges), as wipefs lists
 * them: an ext2/3/4 superblock beside any other (an LVM or RAID label,
 * LUKS, another filesystem, a table other than MBR and GPT, which
 * partition.c weighs itself) is E2TRIM_ERR_SIGNATURE, naming what was
 * found and where.  Else 0 (also when libblkid cannot look).
 */
errcode_t partition_foreign_sigs(struct e2trim *et, int fd, uint64_t off,
				 uint64_t len);

/* What a partition table says of a filesystem starting at a byte. */
struct part_bound {
	const char *table;	/* "dos", "gpt" ...; NULL: no table read */
	unsigned int partno;	/* the partition it starts in; 0: none */
	uint64_t part_start;	/* that partition's first byte */
	uint64_t end;		/* the byte it must end before: the
				   partition's end, or in no partition the
				   next partition's start; 0: no bound */
};

/*
 * The bound the table @rd reads puts on a filesystem starting at byte
 * @start of it.  No table bounds nothing (0, b->table NULL).  A table
 * that cannot be read whole (damaged, overlapping, unreadable) returns
 * its code, as -p N would (E2TRIM_ERR_PARTITION mostly): a filesystem
 * bounded by nothing could run over the next partition.
 */
errcode_t partition_bound_at(struct e2trim *et, const struct part_reader *rd,
			     uint64_t start, struct part_bound *b);

#endif /* E2TRIM_PARTITION_H */
