// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_mmp.c - the MMP block read at open: clean, or the refusal that
 * says who holds it and what to do (a running e2fsck, a stopped one, a
 * live node)
 */
#include <stdio.h>
#include <time.h>

#include "e2trim_int.h"
#include "open_mmp.h"

/*
 * The MMP block says e2fsck runs on it.  e2fsck refuses such a
 * filesystem too (it names tune2fs -f -E clear_mmp), so "run e2fsck"
 * would not help: tell a running e2fsck from one that was stopped.  A
 * running one rewrites mmp_time at least every interval; one whose mark
 * is older than libext2fs's own wait (2 intervals and a second) is gone.
 */
static errcode_t mmp_fsck_refusal(struct e2trim *t,
				  const struct mmp_struct *mmp)
{
	unsigned int every = t->fs->super->s_mmp_update_interval;
	long long age = (long long)time(NULL) - (long long)mmp->mmp_time;
	char name[DETAIL_LEN / 2];
	const char *node = (const char *)mmp->mmp_nodename;

	if (mmp->mmp_check_interval > every)
		every = mmp->mmp_check_interval;
	if (!every)
		every = EXT4_MMP_UPDATE_INTERVAL;
	if (age >= 0 && age <= 2LL * every + 1) {
		lib_fail(t, E2TRIM_ERR_MMP_FSCK, "e2fsck on node %.64s is "
			 "running on it (updated %llds ago)", node, age);
		lib_fix(t, E2TRIM_ERR_MMP_FSCK,
			"wait until that e2fsck ends, then run e2trim again");
		return E2TRIM_ERR_MMP_FSCK;
	}
	lib_fail(t, E2TRIM_ERR_MMP_FSCK, "its MMP block says e2fsck on node "
		 "%.64s is running on it, but nothing updated it for %llds, "
		 "more than twice its interval of %us: that e2fsck was "
		 "stopped, and e2fsck refuses it until the mark is cleared",
		 node, age, every);
	if (!lib_fsck_name(t, name, sizeof(name)))
		snprintf(name, sizeof(name), "<the filesystem's device>");
	/* a decision for a person: no backquotes (src/README.md) */
	lib_fix(t, E2TRIM_ERR_MMP_FSCK, "make sure that no node uses the "
		"filesystem, then clear the mark with tune2fs -f -E clear_mmp "
		"%s and run e2fsck -f", name);
	return E2TRIM_ERR_MMP_FSCK;
}

errcode_t open_mmp_check(struct e2trim *t, errcode_t *io_err)
{
	struct mmp_struct *mmp;
	char name[DETAIL_LEN / 2];
	errcode_t err, ret = 0;

	*io_err = ext2fs_get_mem(t->fs->blocksize, &mmp);
	if (*io_err)
		return 0;
	err = ext2fs_mmp_read(t->fs, t->fs->super->s_mmp_block, mmp);
	if (err) {
		*io_err = err;
	} else if (mmp->mmp_seq == EXT4_MMP_SEQ_FSCK) {
		ret = mmp_fsck_refusal(t, mmp);
	} else if (mmp->mmp_seq != EXT4_MMP_SEQ_CLEAN) {
		ret = lib_fail(t, E2TRIM_ERR_MMP_NOT_CLEAN,
			       "its MMP block is not clean");
		/*
		 * e2fsck takes over a node's sequence only after seeing it
		 * unchanged for two intervals, and refuses a live one: safe
		 * to run as it stands
		 */
		if (lib_fsck_name(t, name, sizeof(name)))
			lib_fix(t, ret, "wait until it is released; if the "
				"node that held it is gone, `e2fsck -fy %s` "
				"takes it over once it has seen that no node "
				"updates it", name);
	}
	ext2fs_free_mem(&mmp);
	return ret;
}

/*
 * libext2fs reads the MMP block through a descriptor of its own, opened
 * on the filesystem's name (ext2fs_mmp_read(): O_DIRECT, the block's
 * place counted from byte 0), never through the I/O channel.  At an
 * offset inside an image it reads another block ("invalid magic"); for
 * a VM image, NBD export or RBD image the name is not a file at all.
 * e2fsck fails alike.  Say what it is (12) before reading anything,
 * and how to reach the filesystem as a device, where MMP works.
 */
errcode_t open_mmp_reachable(struct e2trim *t)
{
	char path[DETAIL_LEN / 2];

	if (!t->offset_bytes && !t->nbd && !t->rbd_io)
		return 0;
	lib_fail(t, E2TRIM_ERR_FEATURE, "it has multi-mount protection "
		 "(MMP), whose block libext2fs and e2fsck read only on a "
		 "whole device or image file, not %s",
		 t->rbd_io ? "through librbd" : t->nbd ?
		 "through NBD" : "at an offset inside an image");
	/* another way to the filesystem, not a fix: no backquotes */
	if (t->rbd_io)
		lib_fix(t, E2TRIM_ERR_FEATURE, "map the image with rbd "
			"device map and run e2trim on that device");
	else if (t->nbd)
		lib_fix(t, E2TRIM_ERR_FEATURE, "attach it as a device "
			"(qemu-nbd --connect=/dev/nbdN for an image, "
			"nbd-client for an NBD server) or copy it to a raw file "
			"(qemu-img convert -O raw), and run e2trim on that");
	else
		lib_fix(t, E2TRIM_ERR_FEATURE, "attach the partition as a "
			"loop device (losetup --find --show --offset %llu "
			"--sizelimit %llu %s) and run e2trim on that device",
			(unsigned long long)t->offset_bytes,
			(unsigned long long)t->size_bytes,
			lib_shell_quote(t->path, path, sizeof(path)));
	return E2TRIM_ERR_FEATURE;
}
