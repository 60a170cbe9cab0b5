// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_table.c - open: the partition table of a whole-disk image
 *
 * The table is read as the filesystem will be: the image or device
 * itself, or a VM image through its NBD connection (libblkid's rarer
 * tables from a copy of the image's edges, open_nbd_shadow()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "e2trim_int.h"
#include "nbd_io.h"
#include "open_nbd.h"
#include "open_table.h"
#include "partition.h"
#include "rbd_io.h"

/* nbd_conn_pread() as a part_reader's read */
static errcode_t nbd_table_read(void *ctx, void *buf, size_t len,
				uint64_t off)
{
	return nbd_conn_pread(ctx, buf, len, off);
}

/* rbd_io_pread() as a part_reader's read */
static errcode_t rbd_table_read(void *ctx, void *buf, size_t len,
				uint64_t off)
{
	return rbd_io_pread(ctx, buf, len, off);
}

/*
 * What the partition code reads: the image or device itself, or a VM
 * image through its connection, as the filesystem is read (libblkid's
 * rarer tables from a copy of its edges).  table_reader_done() after.
 */
static errcode_t table_reader(struct e2trim *t, struct part_reader *rd)
{
	errcode_t rc;

	memset(rd, 0, sizeof(*rd));
	rd->blkid_fd = -1;
	if (!t->nbd && !t->rbd_io) {
		rc = part_reader_fd(rd, t->fd);
	} else {
		rd->read = t->rbd_io ? rbd_table_read : nbd_table_read;
		rd->ctx = t->rbd_io ? (void *)t->rbd_io : (void *)t->nbd;
		rd->size_bytes = t->size_bytes;
		rd->sector_size = 512;
		rc = open_nbd_shadow(t, &rd->blkid_fd);
	}
	if (!rc)
		return 0;
	rd->blkid_fd = -1;
	return lib_fail_cause(t, E2TRIM_ERR_OPEN, rc,
			      "cannot read the partition table");
}

static void table_reader_done(struct e2trim *t, struct part_reader *rd)
{
	if ((t->nbd || t->rbd_io) && rd->blkid_fd >= 0)
		close(rd->blkid_fd);
	rd->blkid_fd = -1;
}

/*
 * --partition N, or a byte offset: the filesystem lives inside a
 * whole-disk image.  Every read libext2fs makes and every hole e2trim
 * punches is shifted by its start, and the partition's end is the end of
 * the device.
 */
errcode_t open_locate_partition(struct e2trim *t)
{
	uint64_t start = t->opt.offset_bytes, size = UINT64_MAX;
	struct part_reader rd;
	errcode_t err;

	if (t->opt.partition && t->is_blkdev)
		return partition_on_blkdev(t, t->fd, t->opt.partition);
	if (t->opt.partition) {
		err = table_reader(t, &rd);
		if (!err)
			err = partition_locate(t, &rd, t->opt.partition,
					       &start, &size);
		table_reader_done(t, &rd);
		if (err)
			return err;
	}
	if (start >= t->size_bytes)
		return lib_fail(t, E2TRIM_ERR_PARTITION_PAST_END,
				"the partition starts past the end of the image");
	if (size > t->size_bytes - start)
		size = t->size_bytes - start;
	t->offset_bytes = start;
	t->size_bytes = size;
	snprintf(t->io_options, sizeof(t->io_options), "offset=%llu",
		 (unsigned long long)start);
	return 0;
}

/* A partition table and no filesystem at byte 0?  Through NBD too. */
int open_whole_disk(struct e2trim *t)
{
	struct part_reader rd;
	int ret = 0;

	if (!table_reader(t, &rd))
		ret = partition_whole_disk(t, &rd) != 0;
	table_reader_done(t, &rd);
	return ret;
}

errcode_t open_partition_list(struct e2trim *t, struct e2trim_partition **out,
			      unsigned int *n)
{
	struct part_reader rd;
	errcode_t err = table_reader(t, &rd);

	if (!err)
		err = partition_list(t, &rd, out, n);
	table_reader_done(t, &rd);
	return err;
}
