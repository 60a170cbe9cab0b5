// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verify_ref.c - the marking primitive of the verification walk
 *
 * Every block something references goes into the walk's map (v->refmap)
 * through verify_ref(): the filesystem's own metadata from here, every
 * in-use inode's blocks from verify_inodes.c.  On the second walk, which
 * runs only to word a refusal, the same calls name the owners of the
 * conflicting blocks instead of marking (v->naming).  Both verify.c, which
 * drives the walk, and verify_inodes.c sit above this file.
 */
#include <stdint.h>

#include "bitmap.h"
#include "e2trim_int.h"
#include "verify_int.h"
#include "walk.h"

/* Does [blk, blk + len) share a cluster with block @c? */
static int covers(ext2_filsys fs, blk64_t blk, blk64_t len, blk64_t c)
{
	return EXT2FS_B2C(fs, blk) <= EXT2FS_B2C(fs, c) &&
	       EXT2FS_B2C(fs, c) <= EXT2FS_B2C(fs, blk + len - 1);
}

/* Second walk: is @who the owner of a conflict?  Stop once all have one. */
static errcode_t name_owner(struct verify *v, blk64_t blk, blk64_t len,
			    struct owner who)
{
	int i, unnamed = 0;

	for (i = 0; i < v->nconflicts; i++) {
		struct conflict *c = &v->conflicts[i];

		if (!c->named && covers(v->fs, blk, len, c->blk)) {
			c->named = 1;
			c->owner = who;
		}
		unnamed += !c->named;
	}
	/*
	 * Every owner found: stop the walk, as a cancel stops it (the naming
	 * walk looks for no cancel, so this is the only stop it sees).
	 */
	return unnamed ? 0 : E2TRIM_ERR_INTERRUPTED;
}

/*
 * @who references blocks [blk, blk + len).  On bigalloc the map has a bit
 * per cluster, so this marks every cluster the range touches.  A block
 * outside the filesystem means the reference itself is damaged.  With
 * @mr the mark joins a run of marks (see bitmap.h); else it is made now.
 */
static errcode_t ref_into(struct verify *v, struct mark_run *mr, blk64_t blk,
			  blk64_t len, struct owner who)
{
	if (!len)
		return 0;
	if (!blocks_in_fs(v->fs, blk, len) || len > UINT32_MAX) {
		v->bad_blk = blk;
		v->bad_owner = who;
		return EXT2_ET_BAD_BLOCK_NUM;
	}
	if (v->naming)
		return name_owner(v, blk, len, who);
	if (who.kind == OWN_DATA && v->dir_ino && who.id == v->dir_ino) {
		errcode_t err = dirs_add_blocks(&v->dirs, who.id, blk, len);

		if (err)
			return err;
	}
	if (mr)
		mark_run_add(mr, blk, len);
	else if (len == 1)
		ext2fs_mark_block_bitmap2(v->refmap, blk);
	else
		ext2fs_mark_block_bitmap_range2(v->refmap, blk, len);
	return 0;
}

errcode_t verify_ref(struct verify *v, blk64_t blk, blk64_t len,
		     struct owner who)
{
	return ref_into(v, NULL, blk, len, who);
}

/*
 * Each group's bitmaps and inode table.  With flex_bg those of a flex
 * group lie end to end: one mark per run, not three per group (on a
 * 15 TiB filesystem, 7 680 instead of 368 640).
 */
static errcode_t ref_group_tables(struct verify *v)
{
	ext2_filsys fs = v->fs;
	struct mark_run mr[3] = { { v->refmap, 0, 0 }, { v->refmap, 0, 0 },
				  { v->refmap, 0, 0 } };
	struct group_tables gt;
	struct owner who;
	errcode_t err = 0;
	dgrp_t g;
	int i;

	for_each_group_tables(fs, g, &gt) {
		who.id = g;
		who.kind = OWN_BLOCK_BITMAP;
		err = ref_into(v, &mr[0], gt.block_bitmap, 1, who);
		who.kind = OWN_INODE_BITMAP;
		if (!err)
			err = ref_into(v, &mr[1], gt.inode_bitmap, 1, who);
		/* allocated even in INODE_UNINIT groups */
		who.kind = OWN_INODE_TABLE;
		if (!err)
			err = ref_into(v, &mr[2], gt.inode_table,
				       fs->inode_blocks_per_group, who);
		if (err)
			break;
	}
	for (i = 0; i < 3; i++)
		mark_run_flush(&mr[i]);
	return err;
}

errcode_t verify_ref_metadata(struct verify *v)
{
	ext2_filsys fs = v->fs;
	struct owner who = { OWN_MMP, 0 };
	errcode_t err = 0;
	dgrp_t g;

	if (ext2fs_has_feature_mmp(fs->super))
		err = verify_ref(v, fs->super->s_mmp_block, 1, who);
	/*
	 * Superblock and descriptor copies and reserved GDT blocks:
	 * libext2fs knows where every layout (sparse_super, sparse_super2,
	 * meta_bg) keeps them.  It cannot say which block is which, so the
	 * second walk names what is left.
	 */
	for (g = 0; g < fs->group_desc_count && !err && !v->naming; g++)
		ext2fs_reserve_super_and_bgd(fs, g, v->refmap);
	if (!err)
		err = ref_group_tables(v);
	return err;
}
