// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * partition_read.c - the partition code's one way of reading bytes, and
 *                    what it asks of them besides the table: is there an
 *                    ext2/3/4 superblock here?
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include <ext2fs/ext2fs.h>

#include "partition_read.h"

errcode_t part_read_fd(void *ctx, void *buf, size_t len, uint64_t off)
{
	int fd = *(const int *)ctx;
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done,
			  (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (!n)
			return ENXIO;
		done += (size_t)n;
	}
	return 0;
}

errcode_t part_reader_fd(struct part_reader *rd, int fd)
{
	struct stat st;
	int ss = 512;
	uint64_t size;

	if (fstat(fd, &st))
		return errno;
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &size) ||
		    ioctl(fd, BLKSSZGET, &ss))
			return errno;
	} else {
		size = (uint64_t)st.st_size;
	}
	memset(rd, 0, sizeof(*rd));
	rd->blkid_fd = fd;
	rd->ctx = &rd->blkid_fd;
	rd->read = part_read_fd;
	rd->size_bytes = size;
	rd->sector_size = ss >= 512 ? (unsigned int)ss : 512;
	rd->sector_fixed = S_ISBLK(st.st_mode);
	return 0;
}

errcode_t part_read(const struct part_reader *rd, void *buf, size_t len,
		    uint64_t off)
{
	if (off > rd->size_bytes || len > rd->size_bytes - off)
		return ENXIO;
	return rd->read(rd->ctx, buf, len, off);
}

const char *ext_type_name(uint32_t compat, uint32_t incompat,
			  uint32_t ro_compat)
{
	if ((incompat & ~(EXT3_FEATURE_INCOMPAT_RECOVER |
			  EXT2_FEATURE_INCOMPAT_FILETYPE |
			  EXT2_FEATURE_INCOMPAT_META_BG)) ||
	    (ro_compat & ~(EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER |
			   EXT2_FEATURE_RO_COMPAT_LARGE_FILE)))
		return "ext4";
	if (compat & EXT3_FEATURE_COMPAT_HAS_JOURNAL)
		return "ext3";
	return "ext2";
}

static uint32_t le32_at(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return ext2fs_le32_to_cpu(v);
}

int part_ext_at(const struct part_reader *rd, uint64_t off_bytes,
		uint64_t size_bytes, char *type, size_t len)
{
	struct ext2_super_block sb;
	const unsigned char *raw = (const unsigned char *)&sb;

	if (size_bytes && size_bytes < SUPERBLOCK_OFFSET + sizeof(sb))
		return 0;
	if (part_read(rd, &sb, sizeof(sb), off_bytes + SUPERBLOCK_OFFSET) ||
	    ext2fs_le16_to_cpu(sb.s_magic) != EXT2_SUPER_MAGIC)
		return 0;
	/* an external journal's device carries the magic too: not a fs */
	if (le32_at(raw + offsetof(struct ext2_super_block,
				   s_feature_incompat)) &
	    EXT3_FEATURE_INCOMPAT_JOURNAL_DEV)
		return 0;
	snprintf(type, len, "%s", ext_type_name(
		 le32_at(raw + offsetof(struct ext2_super_block,
					s_feature_compat)),
		 le32_at(raw + offsetof(struct ext2_super_block,
					s_feature_incompat)),
		 le32_at(raw + offsetof(struct ext2_super_block,
					s_feature_ro_compat))));
	return 1;
}
