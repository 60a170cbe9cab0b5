// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_fs.c - libext2fs's open of the target e2trim holds, and the
 * superblock's gates
 *
 * open.c has the target open and held (claimed, its paths held, its
 * partition located); here libext2fs opens the filesystem on it, read-only,
 * the bounds are checked before the state, the MMP block is judged, then
 * the superblock's gates.  Only MMP, on a real run, reopens read-write
 * (libext2fs then writes the MMP block alone, exactly as e2fsck does).
 */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "e2trim_int.h"
#include "gates.h"
#include "gates_super.h"
#include "image_rbd.h"
#include "journal_check.h"
#include "nbd_io.h"
#include "open_fs.h"
#include "open_mmp.h"
#include "open_table.h"
#include "partition_read.h"
#include "ramfs_io.h"
#include "rbd_io.h"

/*
 * libext2fs opened by name (no /proc): the name must still lead to the
 * descriptor's object.  A narrow window stays (a name re-pointed away
 * and back between the open and this look): mount /proc to close it.
 */
static errcode_t same_object_again(struct e2trim *t)
{
	struct stat a, b;

	if (t->fd < 0 || t->fd_name[0] || t->nbd || t->rbd_io)
		return 0;
	if (stat(t->path, &a) || fstat(t->fd, &b) || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino || a.st_rdev != b.st_rdev)
		return lib_fail(t, E2TRIM_ERR_RENAMED, "the name led "
				"libext2fs to another file or device than the "
				"one e2trim opened");
	return 0;
}

static const char *io_options(const struct e2trim *t)
{
	return t->io_options[0] ? t->io_options : NULL;
}

/* Through NBD, libext2fs opens the connection by its name. */
static const char *fs_name(const struct e2trim *t)
{
	if (t->rbd_io)
		return e2t_rbd_io_name(t->rbd_io);
	if (t->nbd)
		return t->nbd->name;
	/* the object e2trim opened, not whatever the name leads to now */
	return t->fd_name[0] ? t->fd_name : t->path;
}

static io_manager fs_io(const struct e2trim *t)
{
	if (t->rbd_io)
		return e2t_rbd_io_manager;
	if (t->nbd)
		return e2t_nbd_io_manager;
	return t->on_ramfs ? ramfs_io_manager : unix_io_manager;
}

/* What a failed ext2fs_open2() means for the person running e2trim. */
static errcode_t open_error(struct e2trim *t, errcode_t err)
{
	switch (err) {
	case EXT2_ET_SHORT_READ:
		/* too small to hold a superblock is simply not ext */
		if (t->size_bytes < 2048)
			return lib_fail(t, E2TRIM_ERR_NOT_EXT, NULL);
		return lib_fail_cause(t, E2TRIM_ERR_TRUNCATED, err, NULL);
	case EXT2_ET_BAD_MAGIC:
		return open_not_ext(t, err);
	case EXT2_ET_REV_TOO_HIGH:
	case EXT2_ET_UNEXPECTED_BLOCK_SIZE:
		return lib_fail_cause(t, E2TRIM_ERR_NOT_EXT, err, NULL);
	case EXT2_ET_UNSUPP_FEATURE:
		if (journal_dev_refusal(t))
			return E2TRIM_ERR_FEATURE;
		/* fall through */
	case EXT2_ET_RO_UNSUPP_FEATURE:
		return lib_fail_cause(t, E2TRIM_ERR_FEATURE, err, NULL);
	case EXT2_ET_MMP_FAILED:
	case EXT2_ET_MMP_FSCK_ON:
	case EXT2_ET_MMP_UNKNOWN_SEQ:
	case EXT2_ET_MMP_CHANGE_ABORT:
	case EXT2_ET_MMP_MAGIC_INVALID:
	case EXT2_ET_MMP_BAD_BLOCK:
	case EXT2_ET_MMP_CSUM_INVALID:
		return lib_fail_cause(t, E2TRIM_ERR_MMP, err, NULL);
	case EXT2_ET_SB_CSUM_INVALID:
	case EXT2_ET_CORRUPT_SUPERBLOCK:
	case EXT2_ET_GDESC_READ:
	case EXT2_ET_GDESC_BAD_BLOCK_MAP:
	case EXT2_ET_GDESC_BAD_INODE_MAP:
	case EXT2_ET_GDESC_BAD_INODE_TABLE:
	case EXT2_ET_BAD_DESC_SIZE:
	case EXT2_ET_UNKNOWN_CSUM:
		return lib_fail_cause(t, E2TRIM_ERR_SUPER_DAMAGED, err, NULL);
	case EXT2_ET_NO_MEMORY:
		return lib_fail_cause(t, E2TRIM_ERR_NO_MEMORY, err, NULL);
	default:
		return lib_fail_cause(t, E2TRIM_ERR_OPEN_FS, err, NULL);
	}
}

/* Read the MMP block only, and refuse unless it is clean. */
static errcode_t check_mmp_clean(struct e2trim *t)
{
	errcode_t io = 0, err = open_mmp_check(t, &io);

	return io ? open_error(t, io) : err;
}

/*
 * Multi-mount protection.  A real trim takes MMP like e2fsck: libext2fs
 * starts it on a read-write open (it writes only the MMP block) and stops
 * it on close.  A dry run writes nothing, so it only reads the MMP block.
 * Either way e2trim refuses unless the last user left it clean.
 */
errcode_t open_fs(struct e2trim *t)
{
	int flags = EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP;
	errcode_t err, forced[MAX_FORCED];
	unsigned int i, nforced = 0;

	err = ext2fs_open2(fs_name(t), io_options(t), flags, 0, 0,
			   fs_io(t), &t->fs);
	if (err) {
		t->fs = NULL;
		/* no filesystem at 0, but a table: a whole disk (27) */
		if (err == EXT2_ET_BAD_MAGIC && !t->opt.partition &&
		    !t->opt.offset_bytes && open_whole_disk(t))
			return E2TRIM_ERR_WHOLE_DISK;
		return open_error(t, err);
	}
	err = same_object_again(t);
	if (err)
		return err;
	/*
	 * A bitmap libext2fs builds for us is sparse unless its caller says
	 * otherwise (verify.c picks a bitarray for small filesystems): a
	 * bitarray of a 15 TiB filesystem is 500 MB.
	 */
	t->fs->default_bitmap_type = EXT2FS_BMAP64_RBTREE;
	/*
	 * Bounds before state: a filesystem that does not fit its device,
	 * partition or loop device's bound is refused 17 whatever its state,
	 * so that no state's fix (e2fsck) is printed for a view that runs
	 * past the bound, nor one that e2fsck aborts on (check.c).
	 */
	err = check_size(t);
	if (err || t->probing)
		return err;
	/*
	 * A sequence that is not "clean" means a node holds the filesystem
	 * or died holding it.  libext2fs would take over a dead node's
	 * filesystem after waiting; that is e2fsck's job, so refuse.  (A
	 * node that has it mounted also left it "not clean": MMP comes
	 * first, it says why.)
	 */
	if (ext2fs_has_feature_mmp(t->fs->super)) {
		err = open_mmp_reachable(t);
		if (!err)
			err = check_mmp_clean(t);
		if (err)
			return err;
	}
	/*
	 * The superblock's gates, once, before MMP writes anything: a
	 * filesystem that is to be refused is never claimed.
	 */
	err = gates_check_super(t->fs->super, t->opt.force, forced,
				MAX_FORCED, &nforced);
	if (err)
		return lib_fail(t, err, NULL);
	for (i = 0; i < nforced; i++)
		lib_forced(t, forced[i], NULL);
	err = gates_super_check(t);
	if (err)
		return err;
	if (!ext2fs_has_feature_mmp(t->fs->super) || t->opt.dryrun)
		return 0;
	ext2fs_close_free(&t->fs);
	err = ext2fs_open2(fs_name(t), io_options(t),
			   EXT2_FLAG_64BITS | EXT2_FLAG_RW, 0, 0, fs_io(t),
			   &t->fs);
	if (err) {
		t->fs = NULL;
		return open_error(t, err);
	}
	t->mmp_pid = getpid();
	t->fs->default_bitmap_type = EXT2FS_BMAP64_RBTREE;
	return 0;
}

/*
 * Which of ext2/3/4 it is, as libblkid names it: ext4 with any feature
 * ext3 lacks, ext3 with a journal, else ext2.
 */
static const char *fs_type(const struct ext2_super_block *sb)
{
	return ext_type_name(sb->s_feature_compat, sb->s_feature_incompat,
			     sb->s_feature_ro_compat);
}

static void fill_names(struct e2trim_result *r,
		       const struct ext2_super_block *sb)
{
	const unsigned char *u = sb->s_uuid;

	snprintf(r->fs_type, sizeof(r->fs_type), "%s", fs_type(sb));
	snprintf(r->uuid, sizeof(r->uuid), "%02x%02x%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
		 u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
	snprintf(r->label, sizeof(r->label), "%.*s",
		 (int)sizeof(sb->s_volume_name), sb->s_volume_name);
}

/* What the result says of the filesystem, once it is open. */
void open_fs_geometry(struct e2trim *t)
{
	struct e2trim_result *r = &t->res;

	fill_names(r, t->fs->super);
	bitmap_geometry(t->fs, &t->geo);
	r->block_size = t->geo.block_size;
	r->cluster_size = t->geo.block_size * t->geo.cluster_ratio;
	r->blocks = t->geo.blocks_count;
	r->free_blocks = ext2fs_free_blocks_count(t->fs->super);
	r->first_data_block = t->geo.first_data_block;
	t->range.start_bytes = 0;
	t->range.len_bytes = UINT64_MAX;
	t->range.minlen_bytes = 0;
	r->range_start_bytes = 0;
	r->range_len_bytes = UINT64_MAX;
	r->range_minlen_bytes = 0;
}
