// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check_desc.c - no two groups' tables share a block
 *
 * e2fsck opens the filesystem and runs ext2fs_check_desc(); when that
 * fails it says "Group descriptors look bad... trying backup blocks",
 * takes a backup superblock and descriptors, clears every UNINIT flag and
 * itable_unused, and its pass 1 reads every inode: files the primary's
 * unused areas hid come back, in blocks the primary's bitmaps call free.
 * ext2fs_check_desc() marks each superblock, its descriptors and reserved
 * GDT blocks in a bitmap of every block, then each group's block bitmap,
 * inode bitmap and inode table, and fails at the first block marked twice
 * (among the superblock copies and descriptors, twice is allowed).  Its
 * bitmap of every block is 500 MB and 2 s on 15 TiB.
 *
 * The same answer from the tables' extents instead: each kind of table
 * (superblocks and descriptors, block bitmaps, inode bitmaps, inode
 * tables) is a stream of extents in ascending order; merged, an extent
 * overlaps an earlier one exactly when it starts before the furthest end
 * seen so far, and the extent that reached furthest is one it overlaps.
 * The descriptors of a filesystem mke2fs or resize2fs made give each kind
 * in ascending order already: one pass over the descriptors, no memory,
 * O(groups).  A kind found out of order is sorted (O(groups log groups),
 * a span per group) and the merge starts again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_desc.h"

enum span_kind {
	SPAN_SUPER,		/* superblock, descriptors, reserved GDT */
	SPAN_BLOCK_BITMAP,
	SPAN_INODE_BITMAP,
	SPAN_INODE_TABLE,
	SPAN_KINDS
};

static const char *const kind_name[SPAN_KINDS] = {
	"superblock or descriptors", "block bitmap", "inode bitmap",
	"inode table",
};

struct span {
	blk64_t start, len;
	dgrp_t group;
};

/* One kind's extents in ascending order of start. */
struct stream {
	ext2_filsys fs;
	enum span_kind kind;
	dgrp_t g;		/* the next group */
	struct span piece[4];	/* SPAN_SUPER: what is left of a group */
	int pieces, next_piece;
	struct span *sorted;	/* when the descriptors' order is not */
	dgrp_t i;
	struct span cur;
	int have;		/* cur is valid */
	int disorder;		/* cur starts before the one before it */
};

/* Where group @g's table of kind @k (not SPAN_SUPER) is. */
static void table_of(ext2_filsys fs, enum span_kind k, dgrp_t g,
		     struct span *s)
{
	s->group = g;
	s->len = 1;
	if (k == SPAN_BLOCK_BITMAP) {
		s->start = ext2fs_block_bitmap_loc(fs, g);
	} else if (k == SPAN_INODE_BITMAP) {
		s->start = ext2fs_inode_bitmap_loc(fs, g);
	} else {
		s->start = ext2fs_inode_table_loc(fs, g);
		s->len = fs->inode_blocks_per_group;
	}
}

static void add_piece(struct stream *st, dgrp_t g, blk64_t start,
		      blk64_t len)
{
	st->piece[st->pieces++] = (struct span){ start, len, g };
}

/*
 * Group @g's superblock and descriptors, as ext2fs_reserve_super_and_bgd()
 * marks them, in ascending order: bigalloc's block 0, the superblock, the
 * old-style descriptors and reserved GDT blocks, a meta_bg descriptor.
 */
static void super_pieces(struct stream *st, dgrp_t g)
{
	ext2_filsys fs = st->fs;
	blk64_t super, old_desc, new_desc, len;
	blk64_t total = ext2fs_blocks_count(fs->super);
	blk_t used;

	st->pieces = st->next_piece = 0;
	ext2fs_super_and_bgd_loc2(fs, g, &super, &old_desc, &new_desc, &used);
	/* bigalloc with 1 KiB blocks: block 0 is in cluster 0 */
	if (g == 0 && fs->blocksize == 1024 && EXT2FS_CLUSTER_RATIO(fs) > 1)
		add_piece(st, g, 0, 1);
	if (super || g == 0)
		add_piece(st, g, super, 1);
	if (old_desc) {
		len = ext2fs_has_feature_meta_bg(fs->super) ?
		      fs->super->s_first_meta_bg :
		      fs->desc_blocks + fs->super->s_reserved_gdt_blocks;
		if (old_desc < total && len >= total - old_desc)
			len = total - old_desc;
		if (len)
			add_piece(st, g, old_desc, len);
	}
	if (new_desc)
		add_piece(st, g, new_desc, 1);
}

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The stream of kind @k from its first extent on. */
static void stream_start(struct stream *st, ext2_filsys fs, enum span_kind k)
{
	struct span *sorted = st->sorted;

	*st = (struct stream){ .fs = fs, .kind = k, .sorted = sorted };
}

/*
 * The tables come in the descriptors' order, ascending unless they were
 * made by hand (or damaged): then that kind alone is sorted, and the
 * merge starts again.
 */
static errcode_t stream_sort(struct stream *st)
{
	dgrp_t g, n = st->fs->group_desc_count;

	st->sorted = calloc(n, sizeof(*st->sorted));
	if (!st->sorted)
		return EXT2_ET_NO_MEMORY;
	for (g = 0; g < n; g++)
		table_of(st->fs, st->kind, g, &st->sorted[g]);
	qsort(st->sorted, n, sizeof(*st->sorted), span_cmp);
	return 0;
}

/* Move st->cur to the next extent; st->have = 0 at the end. */
static void stream_next(struct stream *st)
{
	ext2_filsys fs = st->fs;
	blk64_t prev = st->cur.start;
	int had = st->have;

	st->have = 0;
	if (st->sorted) {
		if (st->i < fs->group_desc_count) {
			st->cur = st->sorted[st->i++];
			st->have = 1;
		}
		return;
	}
	if (st->kind != SPAN_SUPER) {
		if (st->g < fs->group_desc_count) {
			table_of(fs, st->kind, st->g++, &st->cur);
			st->have = 1;
			st->disorder = had && st->cur.start < prev;
		}
		return;
	}
	/* superblock copies come in group order by construction */
	while (st->next_piece == st->pieces) {
		if (st->g == fs->group_desc_count)
			return;
		super_pieces(st, st->g++);
	}
	st->cur = st->piece[st->next_piece++];
	st->have = 1;
}

static errcode_t overlap_error(enum span_kind k)
{
	if (k == SPAN_BLOCK_BITMAP)
		return EXT2_ET_GDESC_BAD_BLOCK_MAP;
	if (k == SPAN_INODE_BITMAP)
		return EXT2_ET_GDESC_BAD_INODE_MAP;
	return EXT2_ET_GDESC_BAD_INODE_TABLE;
}

static void describe(char *what, size_t len, enum span_kind k,
		     const struct span *s, enum span_kind ok,
		     const struct span *os)
{
	snprintf(what, len,
		 "group %u's %s (block %llu) overlaps group %u's %s "
		 "(blocks %llu-%llu)",
		 s->group, kind_name[k], (unsigned long long)s->start,
		 os->group, kind_name[ok], (unsigned long long)os->start,
		 (unsigned long long)(os->start + os->len - 1));
}

/* The stream whose extent starts first, or -1 when all are done. */
static int first_stream(const struct stream *st)
{
	int k, best = -1;

	for (k = 0; k < SPAN_KINDS; k++)
		if (st[k].have &&
		    (best < 0 || st[k].cur.start < st[best].cur.start))
			best = k;
	return best;
}

/* The furthest end so far, of all extents and of the tables alone. */
struct reach {
	blk64_t end;
	struct span span;
	enum span_kind kind;
	int have;
};

static void reach_update(struct reach *r, const struct span *s,
			 enum span_kind k)
{
	if (r->have && s->start + s->len <= r->end)
		return;
	r->end = s->start + s->len;
	r->span = *s;
	r->kind = k;
	r->have = 1;
}

/*
 * One merge of the four streams: 0, or an overlap's error code (described
 * in @what).  *@again is the stream that turned out not to be in order
 * (sort it, then sweep again), or -1.
 */
static errcode_t sweep(struct stream *st, char *what, size_t len, int *again)
{
	struct reach all = { 0 }, tables = { 0 };
	const struct reach *hit;
	struct span s;
	int k;

	*again = -1;
	for (k = 0; k < SPAN_KINDS; k++)
		stream_next(&st[k]);
	while ((k = first_stream(st)) >= 0) {
		s = st[k].cur;
		stream_next(&st[k]);
		if (st[k].disorder) {
			*again = k;
			return 0;
		}
		/* superblock copies may share blocks with each other */
		hit = k == SPAN_SUPER ? &tables : &all;
		if (hit->have && s.start < hit->end) {
			if (k != SPAN_SUPER) {
				describe(what, len, k, &s, hit->kind,
					 &hit->span);
				return overlap_error(k);
			}
			describe(what, len, hit->kind, &hit->span, k, &s);
			return overlap_error(hit->kind);
		}
		reach_update(&all, &s, k);
		if (k != SPAN_SUPER)
			reach_update(&tables, &s, k);
	}
	return 0;
}

errcode_t check_desc_overlaps(ext2_filsys fs, char *what, size_t len)
{
	struct stream st[SPAN_KINDS];
	errcode_t err;
	int k, bad;

	memset(st, 0, sizeof(st));
	for (;;) {
		for (k = 0; k < SPAN_KINDS; k++)
			stream_start(&st[k], fs, k);
		err = sweep(st, what, len, &bad);
		if (err || bad < 0)
			break;
		err = stream_sort(&st[bad]);
		if (err)
			break;
	}
	for (k = 0; k < SPAN_KINDS; k++)
		free(st[k].sorted);
	return err;
}
