/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verify_int.h - what verify.c and verify_inodes.c share
 */
#ifndef E2TRIM_VERIFY_INT_H
#define E2TRIM_VERIFY_INT_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>

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

struct verify {
	ext2_filsys fs;
	const char *device;
	ext2fs_block_bitmap refmap;	/* every referenced block */
	int own_inode_map;		/* fs->inode_map is ours to free */
	struct ext2_inode *inode;	/* the inode being walked, all of it */
	int inode_size;
	int late_csum;			/* see verify_ref_inodes() */
	char *block_buf;		/* ext2fs_block_iterate3()'s */
	ext2_ino_t ino;			/* the inode being walked, or 0 */
	ext2_ino_t scanned;		/* the last inode the scan returned */
	int fd;				/* for itable_scan(), or -1 */
	uint64_t offset_bytes;		/* ... where the filesystem starts */
	errcode_t cb_err;		/* from the block iterator's callback */
	blk64_t bad_blk;		/* a reference outside the filesystem */
	struct owner bad_owner;		/* ... and who made it */
	int naming;			/* second walk: name, do not mark */
	struct conflict conflicts[SHOWN_CONFLICTS];
	int nconflicts;
	uint64_t conflict_blocks;
};

/*
 * @who references blocks [blk, blk + len): mark them, or on the second
 * walk see whether @who owns a conflict.  EXT2_ET_BAD_BLOCK_NUM when the
 * range is outside the filesystem (v->bad_blk, v->bad_owner say where).
 */
errcode_t verify_ref(struct verify *v, blk64_t blk, blk64_t len,
		     struct owner who);

/* Every in-use inode's blocks, by one inode scan (verify_inodes.c). */
errcode_t verify_ref_inodes(struct verify *v);

#endif /* E2TRIM_VERIFY_INT_H */
