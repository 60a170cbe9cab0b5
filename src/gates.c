// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gates.c - the refusals: every reason e2trim will not trim, with its fix
 *
 * A refusal is final for the run and always happens before the first
 * discard.  Each has its own exit code so that a boot script can tell
 * "run e2fsck" from "unmount it first" without parsing messages.
 */
#include <stdio.h>

#include <ext2fs/ext2fs.h>

#include "gates.h"

static const struct refusal refusals[] = {
	{ EXIT_IN_USE, "is mounted or in use",
	  "unmount it first; for a mounted filesystem use fstrim" },
	{ EXIT_NOT_EXT, "does not hold an ext2/ext3/ext4 filesystem",
	  "check the device or image name" },
	{ EXIT_FEATURE, "uses a filesystem feature e2trim does not support",
	  "use fstrim on the mounted filesystem instead" },
	{ EXIT_NOT_CLEAN, "was not cleanly unmounted or has errors recorded",
	  "run e2fsck -f first" },
	{ EXIT_JOURNAL, "has a journal that needs recovery",
	  "run e2fsck first to replay it" },
	{ EXIT_ORPHANS, "has orphan inodes waiting to be released",
	  "run e2fsck first" },
	{ EXIT_CORRUPT, "has a damaged superblock, group descriptor, bitmap or inode",
	  "run e2fsck -f first" },
	{ EXIT_TRUNCATED, "is smaller than the filesystem it holds",
	  "check that the image or device is complete, then run e2fsck -f" },
	{ EXIT_MMP, "is in use by another node or by e2fsck (multi-mount protection)",
	  "wait until it is released; if nobody uses it, run e2fsck -f" },
	{ EXIT_UNVERIFIED, "has a block bitmap that marks in-use blocks free",
	  "run e2fsck -f first" },
	{ EXIT_PARTITION, "has a partition table e2trim cannot trust",
	  "check it with sfdisk --verify and fdisk -l, and fix the table" },
	{ EXIT_COUNTS, "has group summary counts that disagree with its bitmaps",
	  "run e2fsck -f first" },
	{ EXIT_UNUSED_INODE,
	  "has a directory entry naming an inode in an unused part of the inode tables",
	  "run e2fsck -f first" },
};

const struct refusal *refusal_for(enum e2trim_exit code)
{
	size_t i;

	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
		if (refusals[i].code == code)
			return &refusals[i];
	return NULL;
}

int refuse(const char *device, enum e2trim_exit code, const char *detail)
{
	const struct refusal *r = refusal_for(code);

	if (!r)
		return code;
	if (detail)
		fprintf(stderr, "%s: %s: %s (%s); %s\n", program_name, device,
			r->what, detail, r->fix);
	else
		fprintf(stderr, "%s: %s: %s; %s\n", program_name, device,
			r->what, r->fix);
	return code;
}

/*
 * The ext2fs_has_feature_*() helpers take a non-const superblock, so the
 * gates test the feature bits directly.
 *
 * Features: libext2fs already refuses unknown INCOMPAT features on open,
 * but a read-only open accepts unknown RO_COMPAT ones.  Those may change
 * what a bitmap bit means, and discarding is a write, so refuse them too.
 * An external journal device has no block bitmap to trim from.  MMP is
 * left out of the library's list unless it was built with CONFIG_MMP, but
 * the installed library does support it.
 */
static int sb_unknown_features(const struct ext2_super_block *sb)
{
	return (sb->s_feature_incompat & ~(EXT2_LIB_FEATURE_INCOMPAT_SUPP |
					   EXT4_FEATURE_INCOMPAT_MMP)) ||
	       (sb->s_feature_ro_compat & ~EXT2_LIB_FEATURE_RO_COMPAT_SUPP) ||
	       (sb->s_feature_incompat & EXT3_FEATURE_INCOMPAT_JOURNAL_DEV);
}

/* Until the journal is replayed the on-disk bitmaps are stale. */
static int sb_journal_needs_recovery(const struct ext2_super_block *sb)
{
	return sb->s_feature_incompat & EXT3_FEATURE_INCOMPAT_RECOVER;
}

/* Orphans still own their blocks until e2fsck or the kernel frees them. */
static int sb_orphans_pending(const struct ext2_super_block *sb)
{
	return sb->s_last_orphan != 0 || (sb->s_state & EXT3_ORPHAN_FS) ||
	       (sb->s_feature_ro_compat & EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT);
}

static int sb_not_clean(const struct ext2_super_block *sb)
{
	return !(sb->s_state & EXT2_VALID_FS) || (sb->s_state & EXT2_ERROR_FS);
}

struct sb_gate {
	enum e2trim_exit code;
	int forcible;
	int (*failed)(const struct ext2_super_block *sb);
};

/* Most specific first: a crashed ext4 needs replay more than anything. */
static const struct sb_gate sb_gates[] = {
	{ EXIT_FEATURE, 0, sb_unknown_features },
	{ EXIT_JOURNAL, 1, sb_journal_needs_recovery },
	{ EXIT_ORPHANS, 1, sb_orphans_pending },
	{ EXIT_NOT_CLEAN, 1, sb_not_clean },
};

int gates_check_super(const char *device, const struct ext2_super_block *sb,
		      int force)
{
	size_t i;

	for (i = 0; i < sizeof(sb_gates) / sizeof(sb_gates[0]); i++) {
		const struct sb_gate *g = &sb_gates[i];

		if (!g->failed(sb))
			continue;
		if (!(force && g->forcible))
			return refuse(device, g->code, NULL);
		fprintf(stderr,
			"%s: %s: WARNING: %s, trimming anyway because of --force.\n"
			"%s: %s: WARNING: blocks that hold data may be discarded.\n",
			program_name, device, refusal_for(g->code)->what,
			program_name, device);
	}
	return EXIT_OK;
}
