/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compat.h - what e2trim needs of libext2fs 1.47 built against 1.45.5 to
 * 1.47.x (Ubuntu 20.04 and RHEL 8: 1.45; Debian 11, Ubuntu 22.04 and
 * RHEL 9: 1.46; Debian 12 and 13: 1.47)
 *
 * The on-disk format is fixed; the header is not.  Where a constant or a
 * superblock field is newer than the library's header, the on-disk
 * definition is carried here.  What the library itself can read is still
 * the library's own list (EXT2_LIB_FEATURE_*_SUPP, which this file never
 * touches): built against 1.46, a filesystem with orphan_present (an
 * RO_COMPAT feature 1.46 does not know) is refused as every unknown
 * feature is (gates.c, exit 12), never read half-way.  The package's
 * dependency on the library it was built with keeps the running
 * libext2fs at least as new as that list.
 */
#ifndef E2TRIM_COMPAT_H
#define E2TRIM_COMPAT_H

#include <stddef.h>
#include <ext2fs/ext2fs.h>

/* orphan_file arrived with 1.47.0 (its COMPAT bit, the RO_COMPAT bit that
 * says the file holds orphans, the superblock's inode number for it) */
#ifdef EXT4_FEATURE_COMPAT_ORPHAN_FILE
#define E2TRIM_HAVE_ORPHAN_FILE 1
#else
#define EXT4_FEATURE_COMPAT_ORPHAN_FILE		0x1000
#endif
#ifndef EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT
#define EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT	0x10000
#endif

/*
 * s_orphan_file_inum: le32 at byte 0x280 of the superblock, right after
 * s_encoding_flags; older headers call those bytes s_reserved[0].
 */
#define E2TRIM_SB_ORPHAN_FILE_INUM_OFFSET 0x280
#ifdef E2TRIM_HAVE_ORPHAN_FILE
#define sb_orphan_file_inum(sb) ((sb)->s_orphan_file_inum)
#else
_Static_assert(offsetof(struct ext2_super_block, s_reserved) ==
	       E2TRIM_SB_ORPHAN_FILE_INUM_OFFSET,
	       "s_reserved[0] is s_orphan_file_inum's place on disk");
#define sb_orphan_file_inum(sb) ((sb)->s_reserved[0])
/* 1.47's helper, as its header spells it (a macro: no symbol of ours) */
#define ext2fs_has_feature_orphan_file(sb) \
	(((sb)->s_feature_compat & EXT4_FEATURE_COMPAT_ORPHAN_FILE) != 0)
#endif

/*
 * An inode scan of an external journal device: 1.47's code for it, or,
 * from an older error table that has no text for that code, the general
 * "unsupported feature" it stands for.
 */
#ifndef EXT2_ET_EXTERNAL_JOURNAL_NOSUPP
#define EXT2_ET_EXTERNAL_JOURNAL_NOSUPP EXT2_ET_UNSUPP_FEATURE
#endif

#endif
