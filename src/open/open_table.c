// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_table.c - open: the partition table of a whole-disk image
 *
 * The table is read as the filesystem will be: the image or device
 * itself, or a VM image through its NBD connection (libblkid's rarer
 * tables from a copy of the image's edges, open_nbd_shadow()).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/loop.h>

#include <blkid.h>

#include "e2trim_int.h"
#include "nbd_io.h"
#include "open_nbd.h"
#include "open_table.h"
#include "partition.h"
#include "rbd_io.h"
#include "sysfs.h"

/* e2t_nbd_conn_pread() as a part_reader's read */
static errcode_t nbd_table_read(void *ctx, void *buf, size_t len,
				uint64_t off)
{
	return e2t_nbd_conn_pread(ctx, buf, len, off);
}

/* e2t_rbd_io_pread() as a part_reader's read */
static errcode_t rbd_table_read(void *ctx, void *buf, size_t len,
				uint64_t off)
{
	return e2t_rbd_io_pread(ctx, buf, len, off);
}

/*
 * What the partition code reads: the image or device itself, or a VM
 * image through its connection, as the filesystem is read (libblkid's
 * rarer tables from a copy of its edges).  table_reader_done() after.
 */
static errcode_t table_reader_of(struct e2trim *t, struct part_reader *rd,
				 int rare)
{
	errcode_t rc;

	memset(rd, 0, sizeof(*rd));
	rd->blkid_fd = -1;
	if (!t->nbd && !t->rbd_io) {
		rc = part_reader_fd(rd, t->fd);
		/* MBR and GPT only: libblkid gets no descriptor */
		if (!rare) {
			rd->ctx = &t->fd;
			rd->blkid_fd = -1;
		}
	} else {
		rd->read = t->rbd_io ? rbd_table_read : nbd_table_read;
		rd->ctx = t->rbd_io ? (void *)t->rbd_io : (void *)t->nbd;
		rd->size_bytes = t->size_bytes;
		rd->sector_size = 512;
		rc = rare ? open_nbd_shadow(t, &rd->blkid_fd) : 0;
	}
	if (!rc)
		return 0;
	rd->blkid_fd = -1;
	return lib_fail_cause(t, E2TRIM_ERR_OPEN, rc,
			      "cannot read the partition table");
}

static errcode_t table_reader(struct e2trim *t, struct part_reader *rd)
{
	return table_reader_of(t, rd, 1);
}

static void table_reader_done(struct e2trim *t, struct part_reader *rd)
{
	if ((t->nbd || t->rbd_io) && rd->blkid_fd >= 0)
		close(rd->blkid_fd);
	rd->blkid_fd = -1;
}

/*
 * A filesystem at byte @start of a disk whose table is @b may use the
 * bytes up to b->end only: *@size shrinks to that, and t->bound_what
 * says why for check.c's message.  @where names the disk.
 */
static void apply_bound(struct e2trim *t, const struct part_bound *b,
			uint64_t start, uint64_t *size, const char *where)
{
	if (!b->end || b->end <= start || b->end - start >= *size)
		return;
	*size = b->end - start;
	if (b->partno && b->part_start == start)
		snprintf(t->bound_what, sizeof(t->bound_what), "partition %u "
			 "of %s's %s table, where it starts,", b->partno,
			 where, b->table);
	else if (b->partno)
		snprintf(t->bound_what, sizeof(t->bound_what), "the rest of "
			 "partition %u of %s's %s table, in which it starts,",
			 b->partno, where, b->table);
	else
		snprintf(t->bound_what, sizeof(t->bound_what), "the space "
			 "before the next partition of %s's %s table", where,
			 b->table);
}

/*
 * ?offset=: the table of the image or device itself, if it has one,
 * bounds the filesystem as -p N would.
 */
static errcode_t bound_by_own_table(struct e2trim *t, uint64_t start,
				    uint64_t *size)
{
	struct part_reader rd;
	struct part_bound b;
	errcode_t err = table_reader(t, &rd);

	if (err)
		return err;
	err = partition_bound_at(t, &rd, start, &b);
	table_reader_done(t, &rd);
	if (!err)
		apply_bound(t, &b, start, size, "the image");
	return err;
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
	/* the entry, not the image's end, is what the filesystem outgrew */
	else if (t->opt.partition)
		snprintf(t->bound_what, sizeof(t->bound_what),
			 "partition %u", t->opt.partition);
	if (!t->opt.partition) {
		err = bound_by_own_table(t, start, &size);
		if (err)
			return err;
	}
	t->offset_bytes = start;
	t->size_bytes = size;
	snprintf(t->io_options, sizeof(t->io_options), "offset=%llu",
		 (unsigned long long)start);
	return 0;
}

/*
 * The file behind loop device @fd, opened read-only, if it is still the
 * one the device was set up on (its dev and inode).  -1 if not.
 */
/* conventions: an fd, or -1 for none, as open() */
static int loop_backing_fd(int fd, const struct loop_info64 *li,
			   char *name, size_t len)
{
	struct stat st;
	int bfd;

	if (fstat(fd, &st) || sysfs_line(st.st_rdev, "loop/backing_file",
					 name, len))
		return -1;
	bfd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (bfd < 0)
		return -1;
	if (fstat(bfd, &st) || st.st_ino != li->lo_inode ||
	    st.st_dev != (dev_t)li->lo_device) {
		close(bfd);
		return -1;
	}
	return bfd;
}

errcode_t open_bound_loop(struct e2trim *t)
{
	char name[PATH_MAX], where[PATH_MAX + 32];
	struct loop_info64 li;
	struct part_reader rd;
	struct part_bound b;
	uint64_t start, size = t->size_bytes;
	errcode_t err = 0;
	int bfd;

	/* LOOP_GET_STATUS64 has no size in its number: valgrind cannot see
	   that it fills @li */
	memset(&li, 0, sizeof(li));
	if (!t->is_blkdev || t->nbd || t->fd < 0 ||
	    ioctl(t->fd, LOOP_GET_STATUS64, &li) || !li.lo_offset)
		return 0;
	bfd = loop_backing_fd(t->fd, &li, name, sizeof(name));
	if (bfd < 0)
		return 0;
	start = li.lo_offset + t->offset_bytes;
	if (!part_reader_fd(&rd, bfd)) {
		rd.blkid_fd = bfd;
		err = partition_bound_at(t, &rd, start, &b);
		snprintf(where, sizeof(where), "%s (behind %s)", name, t->path);
		if (!err)
			apply_bound(t, &b, start, &size, where);
		t->size_bytes = size;
	}
	close(bfd);
	return err;
}

errcode_t open_foreign_sigs(struct e2trim *t)
{
	errcode_t err;
	int fd;

	if (!t->nbd && !t->rbd_io)
		return t->fd < 0 ? 0 : partition_foreign_sigs(t, t->fd,
				t->offset_bytes, t->size_bytes);
	/*
	 * libblkid reads file descriptors only: a copy of the range's
	 * first and last MiBs, where every signature it knows lives, read
	 * through the connection as the filesystem is
	 */
	if (open_nbd_shadow_range(t, t->offset_bytes, t->size_bytes, &fd))
		return 0;
	err = partition_foreign_sigs(t, fd, 0, t->size_bytes);
	close(fd);
	return err;
}

errcode_t open_stale_zero(struct e2trim *t)
{
	struct part_reader rd;
	errcode_t err;

	/* MBR and GPT only: no copy of a VM image's edges for libblkid */
	if (table_reader_of(t, &rd, 0))
		return 0;
	err = partition_stale_zero(t, &rd);
	table_reader_done(t, &rd);
	return err;
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

/* GPT types a person knows by name (libblkid gives the GUID only) */
static const char *part_type_name(const char *type)
{
	static const char *const names[][2] = {
		{ "21686148-6449-6e6f-744e-656564454649", "a BIOS boot partition" },
		{ "c12a7328-f81f-11d2-ba4b-00a0c93ec93b", "an EFI system partition" },
		{ "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f", "a Linux swap partition" },
		{ "e6d6d379-f507-44c2-a23c-238f2a3df928", "a Linux LVM partition" },
		{ "a19d880f-05fc-4d3b-a006-743f0f84911e", "a Linux RAID partition" },
		{ "ca7d7ccb-63ed-4c53-861c-1742536059cc", "a LUKS partition" },
		{ "0fc63daf-8483-4772-8e79-3d69d8477de4", "a Linux filesystem "
		  "partition with no filesystem libblkid knows in it" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(type, names[i][0]))
			return names[i][1];
	return NULL;
}

/* The table's entry that starts at the filesystem's offset: its type. */
static void entry_type(blkid_probe pr, uint64_t offset, char *buf, size_t len)
{
	blkid_partlist ls = blkid_probe_get_partitions(pr);
	const char *type, *name;
	blkid_partition p;
	int i, n = ls ? blkid_partlist_numof_partitions(ls) : 0;

	for (i = 0; i < n; i++) {
		p = blkid_partlist_get_partition(ls, i);
		if (!p || (uint64_t)blkid_partition_get_start(p) * 512 != offset)
			continue;
		type = blkid_partition_get_type_string(p);
		name = type ? part_type_name(type) : NULL;
		if (name)
			snprintf(buf, len, "the partition is %s", name);
		else if (type)
			snprintf(buf, len, "the partition's type is %s", type);
		else
			snprintf(buf, len, "the partition's type is 0x%x",
				 blkid_partition_get_type(p));
		return;
	}
}

/*
 * No ext superblock (bad magic): what libblkid finds there instead, into
 * @buf ("" if nothing): "libblkid finds xfs there"; at an offset, the
 * type of the table's entry that starts there ("the partition is a BIOS
 * boot partition").  A file or device of ours only, not NBD or RBD.
 */
static void found_there(struct e2trim *t, char *buf, size_t len)
{
	const char *type = NULL;
	blkid_probe pr;

	buf[0] = '\0';
	if (t->fd < 0 || t->nbd || t->rbd_io)
		return;
	pr = blkid_new_probe();
	if (pr && !blkid_probe_set_device(pr, t->fd, t->offset_bytes,
					  t->size_bytes)) {
		blkid_probe_enable_superblocks(pr, 1);
		blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
		if (!blkid_do_safeprobe(pr) &&
		    !blkid_probe_lookup_value(pr, "TYPE", &type, NULL))
			snprintf(buf, len, "libblkid finds %s there", type);
	}
	if (pr && !*buf && t->offset_bytes &&
	    !blkid_probe_set_device(pr, t->fd, 0, 0)) {
		blkid_probe_enable_superblocks(pr, 0);
		blkid_probe_enable_partitions(pr, 1);
		entry_type(pr, t->offset_bytes, buf, len);
	}
	if (pr)
		blkid_free_probe(pr);
}

errcode_t open_not_ext(struct e2trim *t, errcode_t err)
{
	char found[128];

	found_there(t, found, sizeof(found));
	if (!*found)
		return lib_fail_cause(t, E2TRIM_ERR_NOT_EXT, err, NULL);
	return lib_fail(t, E2TRIM_ERR_NOT_EXT, "%s: %s", error_message(err),
			found);
}
