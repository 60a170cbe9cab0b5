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

