// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verify_rules.c - what an inode owns, decided the way e2fsck's pass 1 does
 *
 * e2fsck does not take an inode's flags at their word: it looks at what
 * i_block[] holds, at the inode's number, at its mode, and asks a question
 * wherever they disagree; its answer can give the inode blocks the flags
 * alone would not.  e2trim cannot ask, so wherever e2fsck would ask about
 * an inode that owns (or may own) blocks, e2trim refuses: the inode is
 * damaged, run e2fsck -f.  src/verify/verify_rules.md lists every rule of
 * e2fsck 1.47.0's pass 1 and what e2trim does with it.
 *
 * On a filesystem that e2fsck -f finds clean none of these rules fires,
 * and they read nothing but the inode the scan already holds (one block
 * for a device, fifo or socket inode that may be a lost directory).
 */
#include <endian.h>
#include <string.h>

#include "verify_int.h"
#include "walk.h"

/* The text of each refusal, in one place. */
static const char *const damage_text[] = {
	[DMG_INLINE_AND_EXTENTS] =
		"both the inline-data and the extents flag are set",
	[DMG_EXTENTS_NO_FEATURE] =
		"extents flag set on a filesystem without the extents feature",
	[DMG_INLINE_NO_FEATURE] =
		"inline-data flag set on a filesystem without inline_data",
	[DMG_EXTENT_TREE_NO_FLAG] =
		"holds an extent tree but its extents flag is clear "
		"(e2fsck: missing EXTENT_FL, but is in extents format)",
	[DMG_FAST_SYMLINK_EXTENTS] =
		"fast symlink with the extents flag set",
	[DMG_SYMLINK_BLOCK_UNCOUNTED] =
		"symlink too long for i_block[] whose i_blocks is 0: e2fsck "
		"reads its target from a block it does not count in use "
		"(e2fsck -f leaves it so; recreate the link)",
	[DMG_SPECIAL_FLAGS] =
		"device, fifo or socket with extents, inline-data, index, "
		"immutable or append-only flags",
	[DMG_REALLY_DIR] =
		"device, fifo or socket whose first block is a directory block",
	[DMG_UNKNOWN_TYPE] =
		"its mode names no file type (e2fsck may find a directory "
		"in it)",
	[DMG_BAD_INODE_FIELDS] =
		"bad blocks inode has a mode, owner, links, flags or xattr block",
	[DMG_JOURNAL_MODE] = "journal inode is not a regular file",
	[DMG_JOURNAL_UNUSED] =
		"not the superblock's journal, yet it holds blocks",
	[DMG_QUOTA_MODE] = "quota inode is not a regular file",
	[DMG_QUOTA_UNUSED] =
		"reserved quota inode not in use, yet it holds blocks",
	[DMG_ORPHAN_FILE_MODE] = "orphan file is not a regular file",
	[DMG_ORPHAN_FILE_UNUSED] =
		"orphan file inode without the orphan_file feature holds blocks",
	[DMG_RESERVED_MODE] = "reserved inode has a mode it may not have",
	[DMG_DTIME] = "has a deletion time yet links to it remain",
};

const char *verify_damage_text(enum inode_damage d)
{
	return d > DMG_NONE && d < DMG_COUNT ? damage_text[d] : NULL;
}

/*
 * e2fsck's quota_type2inum(): user and group quota have reserved numbers
 * (3 and 4); the project quota inode is an ordinary inode that the
 * superblock names, and e2fsck treats it like the reserved ones.
 */
static int quota_reserved(const struct ext2_super_block *sb, ext2_ino_t ino)
{
	return ino == EXT4_USR_QUOTA_INO || ino == EXT4_GRP_QUOTA_INO ||
	       (sb->s_prj_quota_inum && ino == sb->s_prj_quota_inum);
}

/* e2fsck's quota_inum_is_super(): the superblock names it. */
static int quota_named(const struct ext2_super_block *sb, ext2_ino_t ino)
{
	return ino == sb->s_usr_quota_inum || ino == sb->s_grp_quota_inum ||
	       ino == sb->s_prj_quota_inum;
}

int verify_special_inode(const struct ext2_super_block *sb, ext2_ino_t ino)
{
	return ino < EXT2_FIRST_INODE(sb) || quota_reserved(sb, ino) ||
	       quota_named(sb, ino) || ino == sb->s_journal_inum ||
	       ino == sb_orphan_file_inum(sb);
}

/* "holds blocks" as e2fsck's *_NOT_CLEAR questions see it */
static int holds_something(const struct ext2_inode *inode)
{
	return inode->i_links_count || inode->i_blocks || inode->i_block[0];
}

static int is_regular(const struct ext2_inode *inode)
{
	return LINUX_S_ISREG(inode->i_mode);
}

/* The inodes e2fsck handles by number before anything else. */
static enum inode_damage special_rule(ext2_filsys fs, ext2_ino_t ino,
				      const struct ext2_inode *inode)
{
	struct ext2_super_block *sb = fs->super;
	__u16 mode = inode->i_mode;

	if (ino == EXT2_BAD_INO)
		return mode || inode->i_uid || inode->i_gid ||
		       inode->i_links_count || ext2fs_file_acl_block(fs, inode) ||
		       (inode->i_flags & EXT4_INLINE_DATA_FL) ?
		       DMG_BAD_INODE_FIELDS : DMG_NONE;
	if (ino == EXT2_ROOT_INO)
		return DMG_NONE;
	if (ino == EXT2_JOURNAL_INO) {
		if (sb->s_journal_inum == EXT2_JOURNAL_INO)
			return is_regular(inode) ? DMG_NONE : DMG_JOURNAL_MODE;
		return holds_something(inode) ? DMG_JOURNAL_UNUSED : DMG_NONE;
	}
	if (quota_reserved(sb, ino)) {
		if (ext2fs_has_feature_quota(sb) && quota_named(sb, ino))
			return is_regular(inode) ? DMG_NONE : DMG_QUOTA_MODE;
		return holds_something(inode) ? DMG_QUOTA_UNUSED : DMG_NONE;
	}
	if (ino == sb_orphan_file_inum(sb)) {
		if (ext2fs_has_feature_orphan_file(sb))
			return is_regular(inode) ? DMG_NONE :
						   DMG_ORPHAN_FILE_MODE;
		return holds_something(inode) ? DMG_ORPHAN_FILE_UNUSED :
						DMG_NONE;
	}
	if (ino >= EXT2_FIRST_INODE(sb))
		return DMG_NONE;
	if (ino == EXT2_BOOT_LOADER_INO)
		return LINUX_S_ISDIR(mode) ? DMG_RESERVED_MODE : DMG_NONE;
	if (ino == EXT2_RESIZE_INO)
		return mode && !is_regular(inode) ? DMG_RESERVED_MODE :
						    DMG_NONE;
	return mode ? DMG_RESERVED_MODE : DMG_NONE;
}

/* Is i_block[] an extent header that ext2fs_extent_header_verify() takes? */
static int has_extent_header(const struct ext2_inode *inode)
{
	return !ext2fs_extent_header_verify((void *)inode->i_block,
					    sizeof(inode->i_block));
}

static int is_special_file(__u16 mode)
{
	return LINUX_S_ISCHR(mode) || LINUX_S_ISBLK(mode) ||
	       LINUX_S_ISFIFO(mode) || LINUX_S_ISSOCK(mode);
}

/*
 * e2fsck's check_is_really_dir(): a device, fifo or socket inode whose
 * i_block[] could be a block map and whose first block starts with the
 * "." entry of this very inode and a ".." entry is offered to become a
 * directory again, with its blocks.  A character or block device with one
 * link and nothing past i_block[3] is believed (its device number lives
 * in i_block[0..1]).
 */
static int looks_like_lost_dir(struct verify *v, ext2_ino_t ino,
			       const struct ext2_inode *inode)
{
	ext2_filsys fs = v->fs;
	struct ext2_dir_entry *de;
	unsigned int i, rec_len, not_device = 0;
	char *buf = v->block_buf;
	blk64_t blk;

	if (!inode->i_block[0])
		return 0;
	for (i = 0; i < EXT2_N_BLOCKS; i++) {
		blk = inode->i_block[i];
		if (!blk)
			continue;
		not_device += i >= 4;
		if (!blocks_in_fs(fs, blk, 1))
			return 0;
	}
	if ((LINUX_S_ISCHR(inode->i_mode) || LINUX_S_ISBLK(inode->i_mode)) &&
	    inode->i_links_count == 1 && !not_device)
		return 0;
	if (io_channel_read_blk64(fs->io, inode->i_block[0], 1, buf))
		return 1;	/* cannot tell: e2fsck's answer is unknown */
	de = (struct ext2_dir_entry *)buf;
	rec_len = le16toh(de->rec_len);
	if (le32toh(de->inode) != ino || (de->name_len & 0xff) != 1 ||
	    de->name[0] != '.' || rec_len < 12 || rec_len % 4 ||
	    rec_len >= fs->blocksize - 12)
		return 0;
	de = (struct ext2_dir_entry *)(buf + rec_len);
	return (de->name_len & 0xff) == 2 && de->name[0] == '.' &&
	       de->name[1] == '.';
}

/*
 * check_is_really_dir() looks at every inode whose mode is not a
 * directory, regular file or symlink: a mode with no file type at all
 * (0, say) too, through the extent tree or the inline data where the flags
 * say so, and may turn it back into a directory with its blocks; failing
 * that, pass 2 asks to clear the inode.  e2trim sees no blocks in such an
 * inode, so it refuses rather than follow either answer.  Reserved and
 * quota inodes have rules of their own.
 */
static enum inode_damage unknown_type_rule(const struct ext2_super_block *sb,
					   ext2_ino_t ino, __u16 mode)
{
	if (LINUX_S_ISREG(mode) || LINUX_S_ISDIR(mode) || LINUX_S_ISLNK(mode) ||
	    verify_special_inode(sb, ino))
		return DMG_NONE;
	return DMG_UNKNOWN_TYPE;
}

int verify_inode_maps_blocks(ext2_filsys fs, const struct ext2_inode *inode)
{
	/*
	 * check_blocks() takes INLINE_DATA_FL first; the library function
	 * alone calls an inline symlink of 60 bytes or more with an xattr
	 * block "slow", and i_block[] (its text) a block map.  Without the
	 * inline_data feature the flag is refused (F2) or, on a reserved
	 * inode, means no blocks to the library function as well.
	 */
	if (inode->i_flags & EXT4_INLINE_DATA_FL)
		return 0;
	return ext2fs_inode_has_valid_blocks2(fs, (struct ext2_inode *)inode);
}

/*
 * Fast or slow: e2fsck_pass1_check_symlink() decides by size alone
 * (ext2fs_is_fast_symlink()) and reads a longer link's target from the
 * block i_block[0] (or its one extent) names; which blocks the link owns,
 * check_blocks() asks ext2fs_inode_has_valid_blocks2(), which believes
 * i_blocks == 0 (without an xattr block).  Such a link is kept with its
 * target in a block that e2fsck counts free: e2trim would trim the target
 * and e2fsck then delete the link.  e2fsck -fn finds nothing to fix.
 */
static int symlink_block_uncounted(ext2_filsys fs,
				   const struct ext2_inode *inode)
{
	return LINUX_S_ISLNK(inode->i_mode) &&
	       EXT2_I_SIZE(inode) >= sizeof(inode->i_block) &&
	       !verify_inode_maps_blocks(fs, inode) &&
	       !(inode->i_flags & EXT4_INLINE_DATA_FL);
}

/* Flags against content: the questions e2fsck asks before it walks. */
static enum inode_damage flag_rule(struct verify *v, ext2_ino_t ino,
				   const struct ext2_inode *inode)
{
	struct ext2_super_block *sb = v->fs->super;
	__u32 flags = inode->i_flags;
	__u16 mode = inode->i_mode;

	if ((flags & EXT4_INLINE_DATA_FL) && (flags & EXT4_EXTENTS_FL))
		return DMG_INLINE_AND_EXTENTS;
	if ((flags & EXT4_EXTENTS_FL) && !ext2fs_has_feature_extents(sb))
		return DMG_EXTENTS_NO_FEATURE;
	if ((flags & EXT4_INLINE_DATA_FL) &&
	    !ext2fs_has_feature_inline_data(sb) && ino >= EXT2_FIRST_INODE(sb))
		return DMG_INLINE_NO_FEATURE;
	/* also beside INLINE_DATA_FL: e2fsck then keeps the extents */
	if (ext2fs_has_feature_extents(sb) && !(flags & EXT4_EXTENTS_FL) &&
	    (LINUX_S_ISREG(mode) || LINUX_S_ISDIR(mode)) &&
	    has_extent_header(inode))
		return DMG_EXTENT_TREE_NO_FLAG;
	if (LINUX_S_ISLNK(mode) && (flags & EXT4_EXTENTS_FL) &&
	    !ext2fs_inode_has_valid_blocks2(v->fs, (struct ext2_inode *)inode))
		return DMG_FAST_SYMLINK_EXTENTS;
	if (symlink_block_uncounted(v->fs, inode))
		return DMG_SYMLINK_BLOCK_UNCOUNTED;
	if (!is_special_file(mode))
		return unknown_type_rule(sb, ino, mode);
	if (flags & (EXT4_EXTENTS_FL | EXT4_INLINE_DATA_FL | EXT2_INDEX_FL |
		     EXT2_IMMUTABLE_FL | EXT2_APPEND_FL))
		return DMG_SPECIAL_FLAGS;
	return looks_like_lost_dir(v, ino, inode) ? DMG_REALLY_DIR : DMG_NONE;
}

/*
 * e2fsck keeps an inode that still has links, and asks to clear dtime.
 * While orphans are pending (only with --force: exit 15 otherwise) dtime
 * links the orphan list, which e2fsck releases before pass 1.
 */
static enum inode_damage dtime_rule(const struct ext2_super_block *sb,
				    ext2_ino_t ino,
				    const struct ext2_inode *inode)
{
	if (!inode->i_links_count || !inode->i_dtime || sb->s_last_orphan ||
	    (sb->s_feature_ro_compat & EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT))
		return DMG_NONE;
	if (ino == EXT2_ROOT_INO)
		return DMG_DTIME;
	return ino >= EXT2_FIRST_INODE(sb) && !verify_special_inode(sb, ino) ?
	       DMG_DTIME : DMG_NONE;
}

errcode_t verify_inode_rules(struct verify *v, ext2_ino_t ino)
{
	const struct ext2_inode *inode = v->inode;
	enum inode_damage d;

	d = special_rule(v->fs, ino, inode);
	if (!d)
		d = flag_rule(v, ino, inode);
	if (!d)
		d = dtime_rule(v->fs->super, ino, inode);
	v->damage = d;
	return d ? EXT2_ET_INODE_CORRUPTED : 0;
}
