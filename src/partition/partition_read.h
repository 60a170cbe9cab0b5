/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * partition_read.h - how the partition code reads a disk or image
 *
 * The table is read through one small callback, whatever holds the
 * bytes: pread() on a raw image or a block device, the NBD connection on
 * a VM image.  So every check of a table (each EBR of an MBR's logical
 * chain, both GPT copies) reads the real bytes in every format, and a
 * fuzzer can hand the readers a buffer.
 */
#ifndef E2TRIM_PARTITION_READ_H
#define E2TRIM_PARTITION_READ_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

struct part_reader {
	/* @len bytes at @off into @buf: 0, or an errno value (ENXIO for a
	   short read) */
	errcode_t (*read)(void *ctx, void *buf, size_t len, uint64_t off);
	void *ctx;
	uint64_t size_bytes;		/* of the whole disk or image */
	unsigned int sector_size;	/* the table's LBAs, in bytes */
	/*
	 * 1: sector_size is a device's logical sector size, the only one
	 * its tables are read at (as the kernel reads them).  0: an image
	 * file, which may have been written for a 512-byte or a 4Kn disk;
	 * a GPT not found at sector_size is looked for at the other.
	 */
	unsigned int sector_fixed;
	/*
	 * For libblkid, which reads only file descriptors, and only for
	 * the rarer tables e2trim does not read itself (sun, bsd, ...):
	 * the image, or a copy of its first and last MiBs; -1 if none.
	 */
	int blkid_fd;
};

/*
 * A reader of @fd, a regular file or a block device (its sector size).
 * 0 or an errno value.
 */
errcode_t part_reader_fd(struct part_reader *rd, int fd);

/* pread() of the whole @len, as part_reader's read */
errcode_t part_read_fd(void *ctx, void *buf, size_t len, uint64_t off);

/* @len bytes at @off, 0 or an errno value; past the end is ENXIO. */
errcode_t part_read(const struct part_reader *rd, void *buf, size_t len,
		    uint64_t off);

/*
 * Which ext2/3/4 filesystem starts at @off_bytes (@size_bytes 0: up to
 * the end), named as libblkid names it, into @type; 0 when none does.
 */
int part_ext_at(const struct part_reader *rd, uint64_t off_bytes,
		uint64_t size_bytes, char *type, size_t len);

/* ext4 with any feature ext3 lacks, ext3 with a journal, else ext2 */
const char *ext_type_name(uint32_t compat, uint32_t incompat,
			  uint32_t ro_compat);

#endif /* E2TRIM_PARTITION_READ_H */
