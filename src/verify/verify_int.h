/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verify_int.h - the state of one verification walk, shared inside
 * src/verify/ (verify.c drives it)
 */
#ifndef E2TRIM_VERIFY_INT_H
#define E2TRIM_VERIFY_INT_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>

#include "compat.h"

#define SHOWN_CONFLICTS 4	/* free runs the refusal names */

enum owner_kind {
	OWN_SUPER,		/* superblock, descriptors, reserved GDT */
	OWN_BLOCK_BITMAP,	/* of group id */
	OWN_INODE_BITMAP,
	OWN_INODE_TABLE,
	OWN_MMP,
	OWN_DATA,		/* of inode id */
	OWN_EXTENT_TREE,
	OWN_INDIRECT,
	OWN_XATTR,
};

struct owner {
	enum owner_kind kind;
	__u32 id;		/* group or inode number */
};

/* A free run that holds referenced blocks: the first one, and whose. */
struct conflict {
	blk64_t blk;
	int named;
	struct owner owner;
};

/* How an inode's fields disagree, where e2fsck would ask (verify_rules.c) */
enum inode_damage {
	DMG_NONE = 0,
	DMG_INLINE_AND_EXTENTS,
	DMG_EXTENTS_NO_FEATURE,
	DMG_INLINE_NO_FEATURE,
	DMG_EXTENT_TREE_NO_FLAG,
	DMG_FAST_SYMLINK_EXTENTS,
	DMG_SYMLINK_BLOCK_UNCOUNTED,
	DMG_SPECIAL_FLAGS,
	DMG_REALLY_DIR,
	DMG_UNKNOWN_TYPE,
	DMG_BAD_INODE_FIELDS,
	DMG_JOURNAL_MODE,
	DMG_JOURNAL_UNUSED,
	DMG_QUOTA_MODE,
	DMG_QUOTA_UNUSED,
	DMG_ORPHAN_FILE_MODE,
	DMG_ORPHAN_FILE_UNUSED,
	DMG_RESERVED_MODE,
	DMG_DTIME,
	DMG_COUNT
};

/* Directory blocks to read for their entries (verify_dirs.c). */
struct dir_extent {
	blk64_t blk;
	__u32 len;
	ext2_ino_t ino;			/* the directory */
};

struct dir_list {
	struct dir_extent *ext;
	size_t n, max;
	ext2_ino_t *inl;		/* directories with inline data */
	size_t ninl, maxinl;
};

struct verify {
	struct e2trim *t;		/* whose refusal it is */
	ext2_filsys fs;
	const char *device;
	ext2fs_block_bitmap refmap;	/* every referenced block */
	int own_inode_map;		/* fs->inode_map is ours to free */
	int imap_pending;		/* ... and read with the tables */
	dgrp_t imap_cons;		/* ... the next group's bitmap due */
	struct ext2_inode *inode;	/* the inode being walked, all of it */
	int inode_size;
	int late_csum;			/* see scanned_inode() */
	char *block_buf;		/* ext2fs_block_iterate3()'s */
	ext2_ino_t ino;			/* the inode being walked, or 0 */
	ext2_ino_t scanned;		/* the last inode the scan returned */
	int fd;				/* for itable_scan(), or -1 */
	uint64_t offset_bytes;		/* ... where the filesystem starts */
	errcode_t cb_err;		/* from the block iterator's callback */
	enum inode_damage damage;	/* why verify_inode_rules() refused */
	blk64_t bad_blk;		/* a reference outside the filesystem */
	struct owner bad_owner;		/* ... and who made it */
	int naming;			/* second walk: name, do not mark */
	struct conflict conflicts[SHOWN_CONFLICTS];
	int nconflicts;
	uint64_t conflict_blocks;
	ext2_ino_t dir_ino;		/* the inode walked is this directory */
	struct dir_list dirs;		/* every directory's blocks */
	__u64 used_first, used_last;	/* inodes of one group the scan
					   reads (verify_dirs.c) */
	__u32 *dirs_in_group;		/* directories in use, per group */
};

/*
 * @who references blocks [blk, blk + len): mark them, or on the second
 * walk see whether @who owns a conflict.  EXT2_ET_BAD_BLOCK_NUM when the
 * range is outside the filesystem (v->bad_blk, v->bad_owner say where).
 */
errcode_t verify_ref(struct verify *v, blk64_t blk, blk64_t len,
		     struct owner who);

/*
 * The filesystem's metadata: superblock and descriptor copies, reserved
 * GDT blocks, the MMP block, every group's bitmaps and inode table.
 */
errcode_t verify_ref_metadata(struct verify *v);

/*
 * The inode bitmap (verify_imap.c): verify_imap_begin() makes the map
 * (v->own_inode_map) and checks where each bitmap is; the scan reads the
 * bitmaps with the inode tables (verify_imap_pre() and _pre_data() are
 * its itable_ops); verify_imap_end(), given what the walk returned, says
 * what verification reports: the map's own error, read again on its own,
 * before the walk's, as when the map was read before the walk began.
 */
errcode_t verify_imap_begin(struct verify *v);
void verify_imap_pre(void *priv, dgrp_t g, blk64_t *blk, blk64_t *len);
errcode_t verify_imap_pre_data(void *priv, blk64_t blk,
			       const unsigned char *buf);
errcode_t verify_imap_end(struct verify *v, errcode_t walk_err);

/* Every in-use inode's blocks, by one inode scan (verify_inodes.c). */
errcode_t verify_ref_inodes(struct verify *v);

/*
 * Is @ino an inode e2fsck treats as in use by its number alone: reserved
 * (below s_first_ino), the quota inodes (3, 4 and s_prj_quota_inum, and any
 * the superblock names), the journal, the orphan file?
 */
int verify_special_inode(const struct ext2_super_block *sb, ext2_ino_t ino);

/*
 * The in-use inode @ino (in v->inode) against e2fsck's pass 1 rules:
 * 0, or EXT2_ET_INODE_CORRUPTED with v->damage saying which rule.
 */
errcode_t verify_inode_rules(struct verify *v, ext2_ino_t ino);

/*
 * Does e2fsck's check_blocks() walk @inode's i_block[] for blocks: not
 * for inline data, otherwise as ext2fs_inode_has_valid_blocks2() says.
 */
int verify_inode_maps_blocks(ext2_filsys fs, const struct ext2_inode *inode);

/* The message for @d, or NULL for DMG_NONE. */
const char *verify_damage_text(enum inode_damage d);

/*
 * Directories (verify_dirs.c).  verify_note_dir() is told of every in-use
 * inode in v->inode before its blocks are referenced: a directory that
 * e2fsck's pass 2 would read is counted in its group and remembered, its
 * data blocks by dirs_add_blocks() as the walk references them.
 */
errcode_t verify_note_dir(struct verify *v, ext2_ino_t ino);
errcode_t dirs_add_blocks(struct dir_list *dl, ext2_ino_t ino, blk64_t blk,
			  blk64_t len);
void dirs_free(struct dir_list *dl);

/*
 * Every entry of every directory remembered must name an inode in the
 * used part of the inode tables.  Returns 0, or the code with its
 * particulars in v->t: E2TRIM_ERR_UNUSED_INODE, E2TRIM_ERR_UNFOLLOWABLE
 * (a directory block that cannot be parsed), E2TRIM_ERR_VERIFY_READ.
 */
errcode_t verify_dir_entries(struct verify *v);

/*
 * The group descriptors' summary counts against the bitmaps, as e2fsck's
 * pass 5 compares them (verify_counts.c): free blocks (clusters) per
 * group against @free_clusters (NULL: not checked), free inodes against
 * the inode bitmap, directories against those the walk found.  Returns
 * 0 or E2TRIM_ERR_COUNTS (E2TRIM_ERR_VERIFY_READ) with the particulars.
 */
errcode_t verify_group_counts(const struct verify *v,
			      const __u32 *free_clusters);

#endif /* E2TRIM_VERIFY_INT_H */
