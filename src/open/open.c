// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open.c - open the filesystem and pass every safety gate, or refuse
 *
 * Order matters: nothing that is mounted is opened for writing, the device
 * is claimed (O_EXCL) before its superblock is trusted, and the bitmap is
 * read only once the superblock and descriptors say it can be believed.
 * Here the target is opened and held (the name resolved once, its format,
 * its locks, its partition, every other path to its bytes); open_fs.c
 * then has libext2fs open the filesystem read-only and passes the
 * superblock's gates: only MMP, on filesystems that have it, makes e2trim
 * write the MMP block, exactly as e2fsck does.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "e2trim_int.h"
#include "image_rbd.h"
#include "nbd_io.h"
#include "open.h"
#include "open_fs.h"
#include "open_hold.h"
#include "open_witness.h"
#include "open_nbd.h"
#include "open_paths.h"
#include "open_rbd.h"
#include "open_table.h"
#include "partition.h"
#include "ramfs_io.h"
#include "test_pause.h"

/* A directory: most likely the mount point of the filesystem meant. */
static errcode_t not_a_mount_point(struct e2trim *t)
{
	char dir[PATH_MAX], src[PATH_MAX] = "";
	struct mntent *m;
	FILE *f;

	if (!realpath(t->path, dir))
		return lib_fail(t, E2TRIM_ERR_NOT_BLOCK_OR_FILE, NULL);
	f = setmntent("/proc/self/mounts", "r");
	/* the last entry for the directory is the one on top */
	while (f && (m = getmntent(f)))
		if (!strcmp(m->mnt_dir, dir))
			snprintf(src, sizeof(src), "%s", m->mnt_fsname);
	if (f)
		endmntent(f);
	if (!*src)
		return lib_fail(t, E2TRIM_ERR_NOT_BLOCK_OR_FILE, "a directory");
	return lib_fail(t, E2TRIM_ERR_NOT_BLOCK_OR_FILE, "it is the mount "
			"point of %s, a mounted filesystem: e2trim trims "
			"unmounted ones; fstrim %s trims it mounted", src,
			t->path);
}

static errcode_t check_not_mounted(struct e2trim *t)
{
	char mtpt[PATH_MAX + 1] = "";
	int flags = 0;
	errcode_t err;

	err = hold_mount_check(t->path, &flags, mtpt, sizeof(mtpt));
	if (err)
		return lib_fail_cause(t, E2TRIM_ERR_MOUNT_CHECK, err, NULL);
	/* libext2fs flags swap MOUNTED too: swap first, or it is never said */
	if (flags & EXT2_MF_SWAP)
		return open_swap_refusal(t, t->path);
	if (flags & EXT2_MF_MOUNTED)
		return lib_fail(t, E2TRIM_ERR_MOUNTED, "mounted on %s", mtpt);
	if (flags & EXT2_MF_BUSY)
		return lib_fail(t, E2TRIM_ERR_BUSY, "busy");
	return 0;
}

/*
 * What the real run would meet at its first request, asked now, the same
 * for a dry run (which opens read-only), without changing anything (issue
 * 34).  A read-only block device (losetup -r, blockdev --setro, a
 * write-protected disk) takes no discard nor write (EPERM).
 */
static errcode_t can_write(struct e2trim *t)
{
	int ro = 0;

	if (t->is_blkdev && !ioctl(t->fd, BLKROGET, &ro) && ro)
		return lib_fail_cause(t, E2TRIM_ERR_OPEN, EROFS,
				      "the device is read-only (losetup -r, "
				      "blockdev --setro, or write-protected)");
	return 0;
}

/*
 * A raw image file on ramfs, which has no fallocate() at all, cannot
 * have holes punched (nor zeroed by --zeroout); --zero-fill writes.  A
 * host that refuses a punch for another reason is known only at the
 * real run's first punch (nothing punched before it): probing with a
 * punch would change the file's times.  A VM image is qemu's to write.
 */
static errcode_t can_punch(struct e2trim *t)
{
	if (t->is_blkdev || t->nbd || !t->on_ramfs ||
	    (t->opt.mode != E2TRIM_DISCARD && t->opt.mode != E2TRIM_ZEROOUT))
		return 0;
	lib_fail(t, E2TRIM_ERR_DISCARD_UNSUPPORTED, "on ramfs, which cannot "
		 "punch holes");
	lib_fix(t, E2TRIM_ERR_DISCARD_UNSUPPORTED, "run e2trim again with "
		"--zero-fill, which writes zeroes over the free space that is "
		"not zero already");
	return E2TRIM_ERR_DISCARD_UNSUPPORTED;
}

/*
 * The name is resolved once (issue 41.3): the descriptor opened on it is
 * the target from here on, and every later open reaches that object
 * through /proc/self/fd/N, never the name again.  @st, what stat() said
 * of the name just before the open, must be what was opened; a symlink
 * re-pointed (or a file renamed over it) in between is refused with 26,
 * as a target that changed under e2trim.  @st becomes fstat()'s.
 */
static errcode_t same_object(struct e2trim *t, struct stat *st)
{
	struct stat fst;

	if (fstat(t->fd, &fst))
		return lib_fail_cause(t, E2TRIM_ERR_OPEN, errno, "cannot stat");
	if (fst.st_dev != st->st_dev || fst.st_ino != st->st_ino ||
	    (fst.st_mode & S_IFMT) != (st->st_mode & S_IFMT) ||
	    fst.st_rdev != st->st_rdev)
		return lib_fail(t, E2TRIM_ERR_RENAMED, "the name led to "
				"another file or device at the open than a "
				"moment before");
	*st = fst;
	snprintf(t->fd_name, sizeof(t->fd_name), "/proc/self/fd/%d", t->fd);
	/* without /proc, the name, compared again after libext2fs's open */
	if (access(t->fd_name, F_OK))
		t->fd_name[0] = '\0';
	return 0;
}

static errcode_t open_device(struct e2trim *t)
{
	int mode = t->opt.dryrun ? O_RDONLY : O_RDWR;
	struct stat st;
	errcode_t err;

	if (stat(t->path, &st))
		return lib_fail_cause(t, E2TRIM_ERR_OPEN, errno, "cannot open");
	t->is_blkdev = S_ISBLK(st.st_mode);
	if (S_ISDIR(st.st_mode))
		return not_a_mount_point(t);
	if (!t->is_blkdev && !S_ISREG(st.st_mode))
		return lib_fail(t, E2TRIM_ERR_NOT_BLOCK_OR_FILE, NULL);

	/* O_EXCL on a block device fails while it is mounted or claimed. */
	t->fd = open(t->path, mode | O_CLOEXEC | (t->is_blkdev ? O_EXCL : 0));
	if (t->fd < 0 && errno == EBUSY)
		return lib_fail(t, E2TRIM_ERR_EXCLUSIVE,
				"opened exclusively by another program");
	if (t->fd < 0 && errno == EPERM && hold_attr_refusal(t))
		return E2TRIM_ERR_OPEN;
	if (t->fd < 0)
		return lib_fail_cause(t, E2TRIM_ERR_OPEN, errno,
				      t->opt.dryrun ? "cannot open" :
				      "cannot open for writing");
	/* what was opened, not what the name said a moment before */
	err = same_object(t, &st);
	if (err)
		return err;

	err = can_write(t);
	if (err)
		return err;
	if (!t->is_blkdev) {
		/*
		 * On ramfs a read of a hole, or the readahead around any read,
		 * allocates it: no readahead here, and libext2fs reads through
		 * ramfs_io.c, which reads no hole (issue 33).
		 */
		t->on_ramfs = ramfs_io_wanted(t->fd);
		if (t->on_ramfs)
			posix_fadvise(t->fd, 0, 0, POSIX_FADV_RANDOM);
		t->size_bytes = st.st_size;
		/* before anything is punched: the "before" of the report */
		t->res.allocated_before_bytes = (uint64_t)st.st_blocks * 512;
		t->res.allocated_after_bytes = t->res.allocated_before_bytes;
		t->res.allocated_known = 1;
		/* its loop devices are held once its bytes are known */
		open_paths_file(t, &st);
		return 0;
	}
	if (ioctl(t->fd, BLKGETSIZE64, &t->size_bytes))
		return lib_fail_cause(t, E2TRIM_ERR_DEVICE_SIZE, errno, NULL);
	return 0;
}

/*
 * What open, probe and partitions refuse before they touch the handle: a
 * NULL argument, or a handle open already (it stays open, as it was).
 */
static errcode_t open_refused(struct e2trim *t, const char *path)
{
	if (!t)
		return E2TRIM_ERR_INVALID_ARGUMENT;
	if (!path)
		return lib_fail(t, E2TRIM_ERR_INVALID_ARGUMENT, "no path");
	if (!t->path)
		return 0;
	lib_fail(t, E2TRIM_ERR_BAD_CALL, "a second open: the handle is already "
		 "opened on %s", t->path);
	lib_fix(t, E2TRIM_ERR_BAD_CALL, "a handle is opened once: take a new "
		"one (e2trim_new()) for each open, a dry run then a real run too");
	return E2TRIM_ERR_BAD_CALL;
}

/*
 * A new open starts from a handle as e2trim_new() made it, whatever a
 * failed open, a probe or a listing left in it (the options, callbacks
 * and the partition list stay).
 */
static void reset_for_open(struct e2trim *t)
{
	t->is_blkdev = 0;
	t->on_ramfs = 0;
	t->size_bytes = 0;
	t->offset_bytes = 0;
	t->io_options[0] = '\0';
	t->fd_name[0] = '\0';
	t->bound_what[0] = '\0';
	t->cluster_bytes = 0;
	t->file_known = 0;
	t->file_start_bytes = 0;
	t->file_end_bytes = 0;
	t->self_loop = 0;
	t->nbd_reopen = 0;
	t->loops_checked_ns = 0;
	t->paths_next_ns = 0;
	t->nforced = 0;
	t->nwarnings = 0;
	t->range = (struct plan_range){ 0, UINT64_MAX, 0 };
	lib_reset_result(t);
	t->progress_next = 0;
}

/* The first steps, shared by open and probe. */
static errcode_t open_steps(struct e2trim *t, const char *path)
{
	errcode_t err;

	reset_for_open(t);
	t->path = strdup(path);
	if (!t->path)
		return lib_fail(t, E2TRIM_ERR_NO_MEMORY, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t->opened);
	t->res.dryrun = t->opt.dryrun;
	if (e2t_nbd_is_uri(path)) {
		err = open_nbd_uri(t);
	} else if (e2t_rbd_is_spec(path)) {
		err = open_rbd(t);
	} else {
		err = check_not_mounted(t);
		if (!err)
			err = open_device(t);
		/*
		 * a test may re-point the name here, before libext2fs or
		 * qemu-nbd opens it (E2TRIM_TEST_PAUSE=opened:)
		 */
		if (!err)
			test_pause_point("opened", t->path);
		if (!err)
			err = open_image_format(t);
		/*
		 * a raw image or a block device: qemu's locks (a VM's disk can
		 * be either; O_EXCL does not see qemu), as qemu-nbd takes a VM
		 * image's
		 */
		if (!err)
			err = can_punch(t);
		if (!err && !t->nbd)
			err = hold_image_locks(t);
	}
	if (!err && (t->opt.partition || t->opt.offset_bytes))
		err = open_locate_partition(t);
	/* a loop device at an offset: its file's table bounds it too */
	if (!err && !t->opt.partition)
		err = open_bound_loop(t);
	/* every other path to those bytes, before any gate reads them */
	if (!err && !t->rbd_io && !e2t_nbd_is_uri(path))
		err = open_paths_hold(t);
	t->res.is_blkdev = t->is_blkdev;
	t->res.fs_offset_bytes = t->offset_bytes;
	t->res.size_bytes = t->size_bytes;
	return err;
}

errcode_t e2trim_open(struct e2trim *t, const char *path)
{
	errcode_t err;

	err = open_refused(t, path);
	if (err)
		return err;
	err = open_steps(t, path);
	/* a superblock at 0 beside a table: which one is stale? */
	if (!err && !t->opt.partition && !t->opt.offset_bytes)
		err = open_stale_zero(t);
	/* an LVM, RAID, LUKS... label at the same bytes: which is stale? */
	if (!err)
		err = open_foreign_sigs(t);
	if (!err)
		err = open_fs(t);
	/* what the plan will rest on, copied as libext2fs read it */
	if (!err && !t->opt.dryrun)
		err = witness_take(t);
	if (!err) {
		open_fs_geometry(t);
		return 0;
	}
	/* the fix names the target: spelled before it is forgotten */
	lib_keep_fix(t, err, e2trim_error_fix(err, E2TRIM_FIX_COMMAND));
	/* back to new: the result keeps what was learned, for the report */
	open_close(t);
	free(t->path);
	t->path = NULL;
	return err;
}

errcode_t e2trim_probe(struct e2trim *t, const char *path,
		       uint64_t *fs_offset_bytes)
{
	errcode_t err = open_refused(t, path);

	if (!err && !fs_offset_bytes)
		err = lib_fail(t, E2TRIM_ERR_INVALID_ARGUMENT, "no offset");
	if (err)
		return err;
	err = open_steps(t, path);
	if (!err && !t->nbd && !t->rbd_io && !t->opt.partition &&
	    !t->opt.offset_bytes)
		err = open_stale_zero(t);
	/* e2fsck would repair a stale superblock over an LV's data */
	if (!err && !t->nbd && !t->rbd_io)
		err = open_foreign_sigs(t);
	/*
	 * e2fsck would only say "bad magic number" of a whole disk (27),
	 * also of a VM image's content (the e2trim command's --fsck shows
	 * it to e2fsck); an NBD export or RBD image is refused below (3)
	 */
	if (!err && !t->opt.partition && !t->opt.offset_bytes &&
	    !t->rbd_io && (!t->nbd || strcmp(t->res.image_format, "nbd")) &&
	    open_whole_disk(t))
		err = E2TRIM_ERR_WHOLE_DISK;
	/* bounds first: no e2fsck past a partition's end (?offset= too) */
	if (!err && !t->nbd && !t->rbd_io) {
		t->probing = 1;
		if (open_fs(t) == E2TRIM_ERR_TRUNCATED)
			err = E2TRIM_ERR_TRUNCATED;
		t->probing = 0;
	}
	/* e2fsck reads devices and raw images only, never through NBD */
	if (!err && (t->nbd || t->rbd_io))
		err = lib_fail(t, E2TRIM_ERR_USAGE, "e2fsck cannot check a VM "
			       "image or an NBD export (--fsck); check it "
			       "from inside, or convert it to raw first");
	*fs_offset_bytes = t->offset_bytes;
	open_close(t);
	free(t->path);
	t->path = NULL;
	return err;
}

/*
 * The list stays in the handle, handed out one entry at a time
 * (e2trim_partition()): no caller indexes an array of a struct that may
 * grow.
 */
errcode_t e2trim_partitions(struct e2trim *t, const char *path,
			    unsigned int *n)
{
	struct lib_options saved;
	errcode_t err;

	err = open_refused(t, path);
	if (err)
		return err;
	if (n)
		*n = 0;
	free(t->parts);
	t->parts = NULL;
	t->nparts = 0;
	/* read-only (listing writes nothing), the whole table, its format */
	saved = t->opt;
	t->opt.dryrun = 1;
	t->opt.partition = 0;
	t->opt.offset_bytes = 0;
	err = open_steps(t, path);
	if (!err)
		err = open_partition_list(t, &t->parts, &t->nparts);
	if (!err && t->is_blkdev)
		partition_devices(t->fd, t->parts, t->nparts);
	open_close(t);
	free(t->path);
	t->path = NULL;
	t->opt = saved;
	if (err) {
		free(t->parts);
		t->parts = NULL;
		t->nparts = 0;
	}
	if (n)
		*n = t->nparts;
	return err;
}

const struct e2trim_partition *e2trim_partition(const struct e2trim *t,
						unsigned int i)
{
	return t && i < t->nparts ? &t->parts[i] : NULL;
}

void open_close(struct e2trim *t)
{
	bitmap_stream_close(t->stream);
	t->stream = NULL;
	t->checked = 0;
	t->verified = 0;
	if (t->fs) {
		/*
		 * e2trim changes no metadata, so close must write none.  On a
		 * read-write open (MMP) ext2fs_close2() would add the MMP
		 * block's writes to s_kbytes_written and rewrite the
		 * superblock: release MMP here, then close read-only.  A
		 * child of the caller's fork() shares the block with its
		 * parent, which still holds it: only the taker releases it.
		 */
		if ((t->fs->flags & EXT2_FLAG_RW) && t->mmp_pid == getpid())
			ext2fs_mmp_stop(t->fs);
		t->fs->flags &= ~(EXT2_FLAG_RW | EXT2_FLAG_DIRTY |
				  EXT2_FLAG_CHANGED | EXT2_FLAG_BB_DIRTY |
				  EXT2_FLAG_IB_DIRTY);
		ext2fs_close_free(&t->fs);
	}
	witness_free(t);
	while (t->nloops > 0)
		close(t->loop_fds[--t->nloops]);
	open_paths_close(t);
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	open_nbd_close(t);
}
