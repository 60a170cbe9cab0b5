// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fiemap.c - an image file's own written extents, from FS_IOC_FIEMAP
 *
 * --zero-fill zeroes such extents in place without reading them
 * (FALLOC_FL_ZERO_RANGE turns them unwritten).  The others it reads:
 * an unwritten extent reads as zeros already (but FIEMAP does not see
 * data still in the page cache over it, which a read does), and zeroing
 * a shared one would cost a host with reflinks (XFS, btrfs) new blocks,
 * the old ones staying with the other file; a `cp` of an image there is
 * such a copy by default (coreutils 9).
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#include "fiemap.h"

#define FM_EXTENTS	32	/* asked for at a time */

static int own_data(const struct fiemap_extent *e)
{
	return !(e->fe_flags & (FIEMAP_EXTENT_UNWRITTEN |
				FIEMAP_EXTENT_SHARED));
}

int fiemap_own_data(int fd, uint64_t off, uint64_t end, uint64_t *run_end)
{
	union {
		struct fiemap fm;
		char space[sizeof(struct fiemap) +
			   FM_EXTENTS * sizeof(struct fiemap_extent)];
	} u;
	const struct fiemap_extent *e;
	uint64_t pos = off;
	int own = -1;		/* the run's kind, once the first is seen */
	unsigned int i;

	while (pos < end) {
		memset(&u, 0, sizeof(u));
		u.fm.fm_start = pos;
		u.fm.fm_length = end - pos;
		u.fm.fm_extent_count = FM_EXTENTS;
		if (ioctl(fd, FS_IOC_FIEMAP, &u.fm))
			return -errno;
		for (i = 0; i < u.fm.fm_mapped_extents; i++) {
			e = &u.fm.fm_extents[i];
			/* a hole before it is not own data */
			if (e->fe_logical > pos) {
				if (own == 1)
					goto out;
				own = 0;
				pos = e->fe_logical < end ? e->fe_logical : end;
			}
			if (own >= 0 && own != own_data(e))
				goto out;
			own = own_data(e);
			/* the first may begin before @off */
			if (e->fe_logical + e->fe_length <= pos)
				return -EIO;	/* the host went backwards */
			pos = e->fe_logical + e->fe_length;
			if (pos >= end || (e->fe_flags & FIEMAP_EXTENT_LAST))
				break;
		}
		if (i < u.fm.fm_mapped_extents ||
		    u.fm.fm_mapped_extents == 0) {
			/* the last extent, or none: a hole to @end */
			if (pos < end && own == 1)
				goto out;
			own = own == 1 ? 1 : 0;
			if (pos < end)
				pos = end;
		}
	}
out:
	*run_end = pos < end ? pos : end;
	return own == 1;
}
