// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gates.c - the superblock's refusals: features, a journal to replay,
 * orphans, a filesystem not cleanly unmounted
 *
 * A refusal is final for the run and always happens before the first
 * discard.  Each has its own exit code so that a boot script can tell
 * "run e2fsck" from "unmount it first" without parsing messages.
 */
#include <ext2fs/ext2fs.h>

#include "compat.h"
#include "e2trim.h"
#include "gates.h"

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
	errcode_t code;
	int forcible;
	int (*failed)(const struct ext2_super_block *sb);
};

/* Most specific first: a crashed ext4 needs replay more than anything. */
static const struct sb_gate sb_gates[] = {
	{ E2TRIM_ERR_FEATURE, 0, sb_unknown_features },
	{ E2TRIM_ERR_JOURNAL, 1, sb_journal_needs_recovery },
	{ E2TRIM_ERR_ORPHANS, 1, sb_orphans_pending },
	{ E2TRIM_ERR_NOT_CLEAN, 1, sb_not_clean },
};

errcode_t gates_check_super(const struct ext2_super_block *sb, int force,
			    errcode_t *forced, unsigned int max,
			    unsigned int *nforced)
{
	size_t i;

	for (i = 0; i < sizeof(sb_gates) / sizeof(sb_gates[0]); i++) {
		const struct sb_gate *g = &sb_gates[i];

		if (!g->failed(sb))
			continue;
		if (!(force && g->forcible))
			return g->code;
		if (*nforced < max)
			forced[(*nforced)++] = g->code;
	}
	return 0;
}
