// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open.c - open the filesystem and pass every safety gate, or refuse
 *
 * Order matters: nothing that is mounted is opened for writing, the device
 * is claimed (O_EXCL) before its superblock is trusted, and the bitmap is
 * read only once the superblock and descriptors say it can be believed.
 * libext2fs opens the filesystem read-only; only MMP, on filesystems that
 * have it, makes e2trim write the MMP block, exactly as e2fsck does.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include <et/com_err.h>

#include "gates.h"
#include "gates_super.h"
#include "journal_check.h"
#include "open.h"
#include "partition.h"

static int check_not_mounted(const char *device)
{
	char mtpt[PATH_MAX + 1] = "";
	int flags = 0;
	errcode_t err;

	err = ext2fs_check_mount_point(device, &flags, mtpt, sizeof(mtpt));
	if (err) {
		com_err(program_name, err,
			"while determining whether %s is mounted", device);
		return EXIT_ERROR;
	}
	if (flags & EXT2_MF_MOUNTED) {
		char detail[PATH_MAX + 32];

		snprintf(detail, sizeof(detail), "mounted on %s", mtpt);
		return refuse(device, EXIT_IN_USE, detail);
	}
	if (flags & EXT2_MF_SWAP)
		return refuse(device, EXIT_IN_USE, "in use as swap");
	if (flags & EXT2_MF_BUSY)
		return refuse(device, EXIT_IN_USE, "busy");
	return EXIT_OK;
}

/*
 * An image attached to a loop device can be mounted through it at any
 * moment.  Claim every such loop device with O_EXCL for the whole run: if
 * one is already claimed (mounted, or held by another tool), refuse.
 */
static int hold_loop_devices(const char *device, const struct stat *st,
			     struct e2trim_fs *tfs)
{
	char path[PATH_MAX], backing[PATH_MAX];
	struct dirent *de;
	struct stat bst;
	DIR *dir;
	FILE *f;
	int ret = EXIT_OK;

	dir = opendir("/sys/block");
	if (!dir)
		return EXIT_OK;
	while (ret == EXIT_OK && (de = readdir(dir))) {
		if (strncmp(de->d_name, "loop", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(backing, sizeof(backing), f))
			backing[0] = '\0';
		fclose(f);
		backing[strcspn(backing, "\n")] = '\0';
		if (stat(backing, &bst) || bst.st_dev != st->st_dev ||
		    bst.st_ino != st->st_ino)
			continue;

		snprintf(path, sizeof(path), "/dev/%s", de->d_name);
		if (tfs->nloops == MAX_LOOP_HOLDS) {
			ret = refuse(device, EXIT_IN_USE,
				     "attached to too many loop devices");
			break;
		}
		tfs->loop_fds[tfs->nloops] = open(path, O_RDONLY | O_EXCL |
						  O_CLOEXEC);
		if (tfs->loop_fds[tfs->nloops] < 0) {
			char detail[PATH_MAX + 64];

			snprintf(detail, sizeof(detail),
				 "attached to %s, which is in use", path);
			ret = refuse(device, EXIT_IN_USE, detail);
			break;
		}
		tfs->nloops++;
	}
	closedir(dir);
	return ret;
}

static int open_device(const struct e2trim_control *ctl,
		       struct e2trim_fs *tfs)
{
	int mode = ctl->dryrun ? O_RDONLY : O_RDWR;
	struct stat st;

	if (stat(ctl->device, &st)) {
		fprintf(stderr, "%s: %s: cannot open: %s\n", program_name,
			ctl->device, strerror(errno));
		return EXIT_ERROR;
	}
	tfs->is_blkdev = S_ISBLK(st.st_mode);
	if (!tfs->is_blkdev && !S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: %s: not a block device or image file\n",
			program_name, ctl->device);
		return EXIT_USAGE;
	}

	/* O_EXCL on a block device fails while it is mounted or claimed. */
	tfs->fd = open(ctl->device, mode | O_CLOEXEC |
		       (tfs->is_blkdev ? O_EXCL : 0));
	if (tfs->fd < 0 && errno == EBUSY)
		return refuse(ctl->device, EXIT_IN_USE,
			      "opened exclusively by another program");
	if (tfs->fd < 0) {
		fprintf(stderr, "%s: %s: cannot open%s: %s\n", program_name,
			ctl->device, ctl->dryrun ? "" : " for writing",
			strerror(errno));
		return EXIT_ERROR;
	}

	if (!tfs->is_blkdev) {
		tfs->size_bytes = st.st_size;
		return hold_loop_devices(ctl->device, &st, tfs);
	}
	if (ioctl(tfs->fd, BLKGETSIZE64, &tfs->size_bytes)) {
		fprintf(stderr, "%s: %s: cannot get device size: %s\n",
			program_name, ctl->device, strerror(errno));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/*
 * --partition N: the filesystem lives inside a whole-disk image.  Every
 * read libext2fs makes and every hole e2trim punches is shifted by the
 * partition's start, and the partition's end is the end of the device.
 */
static int locate_partition(const struct e2trim_control *ctl,
			    struct e2trim_fs *tfs)
{
	uint64_t start, size;
	int ret;

	if (tfs->is_blkdev)
		return partition_on_blkdev(ctl->device, tfs->fd, ctl->partition);
	ret = partition_locate(ctl->device, tfs->fd, ctl->partition, &start,
			       &size);
	if (ret)
		return ret;
	if (start >= tfs->size_bytes)
		return refuse(ctl->device, EXIT_TRUNCATED,
			      "the partition starts past the end of the image");
	if (size > tfs->size_bytes - start)
		size = tfs->size_bytes - start;
	tfs->offset_bytes = start;
	tfs->size_bytes = size;
	snprintf(tfs->io_options, sizeof(tfs->io_options), "offset=%llu",
		 (unsigned long long)start);
	return EXIT_OK;
}

static const char *io_options(const struct e2trim_fs *tfs)
{
	return tfs->io_options[0] ? tfs->io_options : NULL;
}

/* What a failed ext2fs_open2() means for the person running e2trim. */
static int open_error(const char *device, uint64_t size_bytes, errcode_t err)
{
	const char *msg = error_message(err);

	switch (err) {
	case EXT2_ET_SHORT_READ:
		/* too small to hold a superblock is simply not ext */
		if (size_bytes < 2048)
			return refuse(device, EXIT_NOT_EXT, NULL);
		return refuse(device, EXIT_TRUNCATED, msg);
	case EXT2_ET_BAD_MAGIC:
	case EXT2_ET_REV_TOO_HIGH:
	case EXT2_ET_UNEXPECTED_BLOCK_SIZE:
		return refuse(device, EXIT_NOT_EXT, msg);
	case EXT2_ET_UNSUPP_FEATURE:
	case EXT2_ET_RO_UNSUPP_FEATURE:
		return refuse(device, EXIT_FEATURE, msg);
	case EXT2_ET_MMP_FAILED:
	case EXT2_ET_MMP_FSCK_ON:
	case EXT2_ET_MMP_UNKNOWN_SEQ:
	case EXT2_ET_MMP_CHANGE_ABORT:
	case EXT2_ET_MMP_MAGIC_INVALID:
	case EXT2_ET_MMP_BAD_BLOCK:
	case EXT2_ET_MMP_CSUM_INVALID:
		return refuse(device, EXIT_MMP, msg);
	case EXT2_ET_SB_CSUM_INVALID:
	case EXT2_ET_CORRUPT_SUPERBLOCK:
	case EXT2_ET_GDESC_READ:
	case EXT2_ET_GDESC_BAD_BLOCK_MAP:
	case EXT2_ET_GDESC_BAD_INODE_MAP:
	case EXT2_ET_GDESC_BAD_INODE_TABLE:
	case EXT2_ET_BAD_DESC_SIZE:
	case EXT2_ET_UNKNOWN_CSUM:
		return refuse(device, EXIT_CORRUPT, msg);
	default:
		com_err(program_name, err, "while opening %s", device);
		return EXIT_ERROR;
	}
}

/* Read the MMP block only, and refuse unless it is clean. */
static int check_mmp_clean(const char *device, struct e2trim_fs *tfs)
{
	struct mmp_struct *mmp;
	errcode_t err;
	int ret = EXIT_OK;

	err = ext2fs_get_mem(tfs->fs->blocksize, &mmp);
	if (err)
		return open_error(device, tfs->size_bytes, err);
	err = ext2fs_mmp_read(tfs->fs, tfs->fs->super->s_mmp_block, mmp);
	if (err)
		ret = open_error(device, tfs->size_bytes, err);
	else if (mmp->mmp_seq == EXT4_MMP_SEQ_FSCK)
		ret = refuse(device, EXIT_MMP, "e2fsck is running on it");
	else if (mmp->mmp_seq != EXT4_MMP_SEQ_CLEAN)
		ret = refuse(device, EXIT_MMP, "its MMP block is not clean");
	ext2fs_free_mem(&mmp);
	return ret;
}

/*
 * Multi-mount protection.  A real trim takes MMP like e2fsck: libext2fs
 * starts it on a read-write open (it writes only the MMP block) and stops
 * it on close.  A dry run writes nothing, so it only reads the MMP block.
 * Either way e2trim refuses unless the last user left it clean.
 */
static int open_fs(const struct e2trim_control *ctl, struct e2trim_fs *tfs)
{
	int flags = EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP;
	errcode_t err;
	int ret;

	err = ext2fs_open2(ctl->device, io_options(tfs), flags, 0, 0,
			   unix_io_manager,
			   &tfs->fs);
	if (err) {
		tfs->fs = NULL;
		return open_error(ctl->device, tfs->size_bytes, err);
	}
	/*
	 * Every bitmap libext2fs builds for us (ext2fs_check_desc()'s, the
	 * stream's) is sparse: a bitarray of a 15 TiB filesystem is 500 MB.
	 */
	tfs->fs->default_bitmap_type = EXT2FS_BMAP64_RBTREE;
	if (!ext2fs_has_feature_mmp(tfs->fs->super))
		return EXIT_OK;

	/*
	 * A sequence that is not "clean" means a node holds the filesystem
	 * or died holding it.  libext2fs would take over a dead node's
	 * filesystem after waiting; that is e2fsck's job, so refuse.
	 */
	ret = check_mmp_clean(ctl->device, tfs);
	if (ret || ctl->dryrun)
		return ret;

	/* Unknown features are refused before MMP writes anything. */
	if (gates_check_super(ctl->device, tfs->fs->super, 0) == EXIT_FEATURE)
		return EXIT_FEATURE;
	ext2fs_close_free(&tfs->fs);
	err = ext2fs_open2(ctl->device, io_options(tfs),
			   EXT2_FLAG_64BITS | EXT2_FLAG_RW, 0, 0, unix_io_manager,
			   &tfs->fs);
	if (err) {
		tfs->fs = NULL;
		return open_error(ctl->device, tfs->size_bytes, err);
	}
	tfs->fs->default_bitmap_type = EXT2FS_BMAP64_RBTREE;
	return EXIT_OK;
}

/* A geometry e2fsck would not check is not one to trim by (16). */
static int check_super_constants(const char *device, ext2_filsys fs)
{
	char detail[160];

	if (!gates_super_constants(fs, detail, sizeof(detail)))
		return EXIT_OK;
	return refuse(device, EXIT_CORRUPT, detail);
}

/* The image or device must hold every block the filesystem claims. */
static int check_size(const char *device, const struct e2trim_fs *tfs)
{
	uint64_t need = ext2fs_blocks_count(tfs->fs->super) *
			(uint64_t)tfs->fs->blocksize;
	char detail[128];

	if (tfs->size_bytes >= need)
		return EXIT_OK;
	snprintf(detail, sizeof(detail),
		 "filesystem needs %llu bytes, only %llu are there",
		 (unsigned long long)need, (unsigned long long)tfs->size_bytes);
	return refuse(device, EXIT_TRUNCATED, detail);
}

/* Does [blk, blk + n) lie inside [first, last]? */
static int blocks_within(blk64_t blk, blk64_t n, blk64_t first, blk64_t last)
{
	return blk >= first && blk <= last && n - 1 <= last - blk;
}

/*
 * Where a group's bitmaps and inode table are: inside the filesystem, and
 * inside the group itself unless flex_bg lets them move.  This is the part
 * of ext2fs_check_desc() that bears on trimming; that function also looks
 * for overlaps, one block at a time (2 s on a 15 TiB filesystem), which
 * bitmap verification covers anyway.
 */
static errcode_t check_group_layout(ext2_filsys fs, dgrp_t g)
{
	blk64_t first = fs->super->s_first_data_block;
	blk64_t last = ext2fs_blocks_count(fs->super) - 1;

	if (!ext2fs_has_feature_flex_bg(fs->super)) {
		first = ext2fs_group_first_block2(fs, g);
		last = ext2fs_group_last_block2(fs, g);
	}
	/*
	 * Block s_first_data_block holds the primary superblock, whatever
	 * the block size: no bitmap or inode table is there.  (A descriptor
	 * that says block 0 on a 4 KiB-block filesystem passed, and its
	 * "bitmap" was read from the superblock's block.)
	 */
	if (first == fs->super->s_first_data_block)
		first++;
	if (!blocks_within(ext2fs_block_bitmap_loc(fs, g), 1, first, last))
		return EXT2_ET_GDESC_BAD_BLOCK_MAP;
	if (!blocks_within(ext2fs_inode_bitmap_loc(fs, g), 1, first, last))
		return EXT2_ET_GDESC_BAD_INODE_MAP;
	if (!blocks_within(ext2fs_inode_table_loc(fs, g),
			   fs->inode_blocks_per_group, first, last))
		return EXT2_ET_GDESC_BAD_INODE_TABLE;
	return 0;
}

/*
 * libext2fs does not verify group descriptor checksums on open, and a
 * group whose descriptor is bad may carry a BLOCK_UNINIT flag that hides
 * data: check every one before its bitmap is believed.
 */
static int check_descriptors(const char *device, ext2_filsys fs)
{
	char detail[160];
	errcode_t err;
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++) {
		if (!ext2fs_group_desc_csum_verify(fs, g)) {
			snprintf(detail, sizeof(detail),
				 "group %u descriptor checksum does not match",
				 g);
			return refuse(device, EXIT_CORRUPT, detail);
		}
		err = check_group_layout(fs, g);
		if (err) {
			snprintf(detail, sizeof(detail), "group %u: %s", g,
				 error_message(err));
			return refuse(device, EXIT_CORRUPT, detail);
		}
	}
	return EXIT_OK;
}

/*
 * Every group's bitmap is read and its checksum verified before the first
 * discard, so that a bad one refuses the whole run instead of stopping it
 * half way.  The free runs found on the way are kept for verification and
 * the plan, up to KEEP_RUNS_MAX (16 MiB); a filesystem with more is
 * read again for each, since its trim is a million requests or more, next
 * to which the reads do not count.
 */
#define KEEP_RUNS_MAX (1U << 20)

static int open_bitmap(const char *device, struct e2trim_fs *tfs)
{
	char detail[160];
	dgrp_t g = 0;
	errcode_t err;

	err = bitmap_stream_open(tfs->fs, tfs->fd, tfs->offset_bytes,
				 &tfs->stream);
	if (err) {
		com_err(program_name, err, "while reading block bitmaps of %s",
			device);
		return EXIT_ERROR;
	}
	err = bitmap_stream_check(tfs->stream, KEEP_RUNS_MAX, &g);
	if (!err)
		return EXIT_OK;
	snprintf(detail, sizeof(detail), "group %u: %s", g,
		 error_message(err));
	if (err == EXT2_ET_BLOCK_BITMAP_CSUM_INVALID ||
	    err == EXT2_ET_GDESC_BAD_BLOCK_MAP)
		return refuse(device, EXIT_CORRUPT, detail);
	fprintf(stderr, "%s: %s: cannot read block bitmap of %s\n",
		program_name, device, detail);
	return EXIT_ERROR;
}

int e2trim_fs_open(const struct e2trim_control *ctl, struct e2trim_fs *tfs)
{
	int ret;

	memset(tfs, 0, sizeof(*tfs));
	tfs->fd = -1;

	ret = check_not_mounted(ctl->device);
	if (ret == EXIT_OK)
		ret = open_device(ctl, tfs);
	if (ret == EXIT_OK && ctl->partition)
		ret = locate_partition(ctl, tfs);
	if (ret == EXIT_OK)
		ret = open_fs(ctl, tfs);
	if (ret == EXIT_OK)
		ret = gates_check_super(ctl->device, tfs->fs->super,
					ctl->force);
	if (ret == EXIT_OK)
		ret = check_super_constants(ctl->device, tfs->fs);
	if (ret == EXIT_OK)
		ret = check_size(ctl->device, tfs);
	/* the journal inode is found through the descriptors: them first */
	if (ret == EXIT_OK)
		ret = check_descriptors(ctl->device, tfs->fs);
	if (ret == EXIT_OK)
		ret = journal_check(ctl->device, tfs->fs, ctl->force);
	if (ret == EXIT_OK)
		ret = open_bitmap(ctl->device, tfs);
	if (ret != EXIT_OK)
		e2trim_fs_close(tfs);
	return ret;
}

int e2trim_fs_probe(const struct e2trim_control *ctl, uint64_t *offset_bytes)
{
	struct e2trim_fs tfs;
	int ret;

	memset(&tfs, 0, sizeof(tfs));
	tfs.fd = -1;
	ret = check_not_mounted(ctl->device);
	if (ret == EXIT_OK)
		ret = open_device(ctl, &tfs);
	if (ret == EXIT_OK && ctl->partition)
		ret = locate_partition(ctl, &tfs);
	*offset_bytes = tfs.offset_bytes;
	e2trim_fs_close(&tfs);
	return ret;
}

void e2trim_fs_close(struct e2trim_fs *tfs)
{
	bitmap_stream_close(tfs->stream);
	tfs->stream = NULL;
	if (tfs->fs) {
		/*
		 * e2trim changes no metadata, so close must write none.  On a
		 * read-write open (MMP) ext2fs_close2() would add the MMP
		 * block's writes to s_kbytes_written and rewrite the
		 * superblock: release MMP here, then close read-only.
		 */
		if (tfs->fs->flags & EXT2_FLAG_RW)
			ext2fs_mmp_stop(tfs->fs);
		tfs->fs->flags &= ~(EXT2_FLAG_RW | EXT2_FLAG_DIRTY |
				    EXT2_FLAG_CHANGED | EXT2_FLAG_BB_DIRTY |
				    EXT2_FLAG_IB_DIRTY);
		ext2fs_close_free(&tfs->fs);
	}
	while (tfs->nloops > 0)
		close(tfs->loop_fds[--tfs->nloops]);
	if (tfs->fd >= 0)
		close(tfs->fd);
	tfs->fd = -1;
}
