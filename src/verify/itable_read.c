// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * itable_read.c - every inode table, read as fast as the device allows
 *
 * The used part of each group's inode table is what libext2fs's inode
 * scan reads: all of it, less the itable_unused tail and all of an
 * INODE_UNINIT group when the filesystem has group descriptor checksums
 * (without them those fields mean nothing).  A descriptor whose table
 * lies outside the filesystem, or a used table at block 0, stops the scan
 * with the scan's own error, at the same place.  Blocks of the bad
 * blocks list are not read: their inodes come back zeroed with
 * EXT2_ET_BAD_BLOCK_IN_INODE_TABLE, as the scan returns them.
 *
 * Two walks over the same groups go side by side: one names the block
 * ranges to read (range_read.c joins them: with flex_bg the tables of a
 * flex group lie end to end), the other, a window behind, turns the
 * blocks that come back into inodes and groups.  The caller may have
 * other blocks read in the same stream before a group's inodes
 * (ops->pre): verification reads the inode bitmaps so, which with
 * flex_bg end where the tables begin, in the same requests.
 *
 * A block of zeros holds no inode in use unless the inode bitmap or the
 * reserved range says so; e2fsck, too, treats an inode with no links as
 * unused, and all zeros reference no block.  So only those inodes of a
 * zero block are handed on, and on a filesystem whose tables mke2fs
 * zeroed, most of the work is one memcmp() per block.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "itable_read.h"
#include "range_read.h"
#include "walk.h"

enum seg_kind { SEG_READ, SEG_PRE, SEG_BAD, SEG_DONE, SEG_ERROR, SEG_END };

/* What one step of a walk yields. */
struct seg {
	enum seg_kind kind;
	dgrp_t g;
	blk64_t blk, len;	/* SEG_READ, SEG_BAD: blocks of the table;
				   SEG_PRE: the blocks ops->pre() named */
	blk64_t idx;		/* ... the first one's index in it */
	ext2_ino_t next;	/* the first inode of g not to be read */
	errcode_t err;		/* SEG_ERROR */
};

struct walk {
	ext2_filsys fs;
	const struct itable_ops *ops;
	void *priv;
	const blk64_t *bad;	/* the bad blocks list, sorted */
	size_t nbad;
	dgrp_t g;
	int open;		/* g's used blocks are being walked */
	int pre_done;		/* ... and its ops->pre() blocks named */
	int stopped;
	blk64_t loc, idx, nblk;
	ext2_ino_t next;
};

struct iscan {
	ext2_filsys fs;
	const struct itable_ops *ops;
	void *priv;
	struct walk prod, cons;
	struct seg cur;		/* what cons is at: SEG_READ, len left */
	unsigned char *zero;	/* a block of zeros */
	blk64_t *bad;
	errcode_t cb_err;	/* a callback's, passed through */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	struct ext2_inode_large *swapped;
#endif
};

/* Group @g's used inode table blocks, or the scan's error for them. */
static errcode_t open_group(struct walk *w)
{
	ext2_filsys fs = w->fs;
	__u32 ipg = EXT2_INODES_PER_GROUP(fs->super), used = ipg, unused;
	struct group_tables gt;
	blk64_t loc;

	group_tables(fs, w->g, &gt);
	loc = gt.inode_table;
	if (loc && !blocks_in_fs(fs, loc, fs->inode_blocks_per_group))
		return EXT2_ET_GDESC_BAD_INODE_TABLE;
	if (ext2fs_has_group_desc_csum(fs)) {
		unused = ext2fs_bg_itable_unused(fs, w->g);
		used = used > unused ? used - unused : 0;
		if (gt.flags & EXT2_BG_INODE_UNINIT)
			used = 0;
	}
	if (used && !loc)
		return EXT2_ET_MISSING_INODE_TABLE;
	w->loc = loc;
	w->idx = 0;
	/* inodes never straddle blocks: the size is a power of 2, <= block */
	w->nblk = ((blk64_t)used * EXT2_INODE_SIZE(fs->super) +
		   fs->blocksize - 1) / fs->blocksize;
	w->next = w->g * ipg + used + 1;
	return 0;
}

/* The first bad block >= @blk, or ~0. */
static blk64_t next_bad(const struct walk *w, blk64_t blk)
{
	size_t lo = 0, hi = w->nbad, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (w->bad[mid] < blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < w->nbad ? w->bad[lo] : ~(blk64_t)0;
}

static void walk_next(struct walk *w, struct seg *s)
{
	blk64_t blk, bad;

	memset(s, 0, sizeof(*s));
	s->kind = SEG_END;
	if (w->stopped || w->g >= w->fs->group_desc_count)
		return;
	if (!w->open) {
		s->err = open_group(w);
		if (s->err) {
			s->kind = SEG_ERROR;
			w->stopped = 1;
			return;
		}
		w->open = 1;
		w->pre_done = !w->ops->pre;
	}
	s->g = w->g;
	s->next = w->next;
	if (!w->pre_done) {
		w->pre_done = 1;
		w->ops->pre(w->priv, w->g, &s->blk, &s->len);
		if (s->len) {
			s->kind = SEG_PRE;
			return;
		}
	}
	if (w->idx >= w->nblk) {
		s->kind = SEG_DONE;
		w->open = 0;
		w->g++;
		return;
	}
	blk = w->loc + w->idx;
	bad = next_bad(w, blk);
	s->kind = bad == blk ? SEG_BAD : SEG_READ;
	s->blk = blk;
	s->idx = w->idx;
	s->len = bad == blk ? 1 : w->nblk - w->idx;
	if (bad > blk && bad - blk < s->len)
		s->len = bad - blk;
	w->idx += s->len;
}

/* range_read's next(): the READ steps of the walk ahead. */
static int produce(void *priv, blk64_t *blk, blk64_t *len)
{
	struct iscan *s = priv;
	struct seg seg;

	do
		walk_next(&s->prod, &seg);
	while (seg.kind == SEG_DONE || seg.kind == SEG_BAD);
	if (seg.kind != SEG_READ && seg.kind != SEG_PRE)
		return 1;	/* an error comes to the consumer in order */
	*blk = seg.blk;
	*len = seg.len;
	return 0;
}

static errcode_t emit(struct iscan *s, ext2_ino_t ino, const void *raw,
		      errcode_t err)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	int size = EXT2_INODE_SIZE(s->fs->super);

	/* the checksum covers the bytes as on disk */
	if (!err && !ext2fs_inode_csum_verify(s->fs, ino, (void *)raw))
		err = EXT2_ET_INODE_CSUM_INVALID;
	memset(s->swapped, 0, size);
	ext2fs_swap_inode_full(s->fs, s->swapped, (void *)raw, 0, size);
	raw = s->swapped;
#endif
	s->cb_err = s->ops->inode(s->priv, ino, raw, err);
	return s->cb_err;
}

/* Is inode @ino, all zeros, possibly in use? */
static int zero_in_use(const struct iscan *s, ext2_ino_t ino)
{
	return ino < EXT2_FIRST_INODE(s->fs->super) || !s->fs->inode_map ||
	       ext2fs_test_inode_bitmap2(s->fs->inode_map, ino);
}

/* The inodes of block @idx of group @g's table, @p its bytes. */
static errcode_t do_block(struct iscan *s, dgrp_t g, blk64_t idx,
			  ext2_ino_t next, const unsigned char *p, int bad)
{
	ext2_filsys fs = s->fs;
	unsigned int isz = EXT2_INODE_SIZE(fs->super);
	ext2_ino_t ino = g * EXT2_INODES_PER_GROUP(fs->super) +
			 idx * (fs->blocksize / isz) + 1;
	ext2_ino_t end = ino + fs->blocksize / isz;
	int zero = bad || !memcmp(p, s->zero, fs->blocksize);
	errcode_t err = 0;

	if (end > next)
		end = next;	/* the rest is the unused area */
	for (; ino < end && !err; ino++, p += isz) {
		if (bad)
			err = emit(s, ino, s->zero,
				   EXT2_ET_BAD_BLOCK_IN_INODE_TABLE);
		else if (!(zero || !memcmp(p, s->zero, isz)) ||
			 zero_in_use(s, ino))
			err = emit(s, ino, p, 0);
		else if (zero && fs->inode_map &&
			 ino >= EXT2_FIRST_INODE(fs->super)) {
			/* skip to the next inode the bitmap marks */
			ext2_ino_t hit;

			if (ext2fs_find_first_set_inode_bitmap2(fs->inode_map,
					ino, end - 1, &hit))
				break;
			p += (size_t)(hit - ino - 1) * isz;
			ino = hit - 1;
		}
	}
	return err;
}

/*
 * The consumer's walk up to its next READ step: the groups done and the
 * bad blocks before it are handed on on the way.  *@over: the walk is
 * over instead.
 */
static errcode_t consume_to_read(struct iscan *s, int *over)
{
	struct seg seg;
	errcode_t err;

	*over = 0;
	for (;;) {
		walk_next(&s->cons, &seg);
		switch (seg.kind) {
		case SEG_READ:
		case SEG_PRE:
			s->cur = seg;
			return 0;
		case SEG_BAD:
			err = do_block(s, seg.g, seg.idx, seg.next, s->zero, 1);
			break;
		case SEG_DONE:
			err = s->cb_err = s->ops->group_done(s->priv, seg.g,
							     seg.next);
			break;
		case SEG_ERROR:
			return seg.err;
		default:
			*over = 1;
			return 0;
		}
		if (err)
			return err;
	}
}

/* range_read's data(): blocks in the order produce() named them. */
static errcode_t consume(void *priv, blk64_t blk, blk64_t len,
			 const unsigned char *buf)
{
	struct iscan *s = priv;
	unsigned int bs = s->fs->blocksize;
	errcode_t err;
	int over;

	while (len) {
		if (!s->cur.len) {
			err = consume_to_read(s, &over);
			if (err)
				return err;
			if (over)
				return EXT2_ET_INVALID_ARGUMENT;
		}
		/* both walks take the same steps: never seen */
		if (s->cur.blk != blk)
			return EXT2_ET_INVALID_ARGUMENT;
		if (s->cur.kind == SEG_PRE)
			err = s->cb_err = s->ops->pre_data(s->priv, blk, buf);
		else
			err = do_block(s, s->cur.g, s->cur.idx, s->cur.next,
				       buf, 0);
		if (err)
			return err;
		s->cur.blk++;
		s->cur.idx++;
		s->cur.len--;
		blk++;
		len--;
		buf += bs;
	}
	return 0;
}

/* The bad blocks list, as the scan reads it (errors ignored), sorted. */
static errcode_t load_bad_blocks(struct iscan *s)
{
	ext2_filsys fs = s->fs;
	ext2_badblocks_iterate it;
	size_t n = 0;
	blk_t b;

	if (!fs->badblocks && ext2fs_read_bb_inode(fs, &fs->badblocks) &&
	    fs->badblocks) {
		ext2fs_badblocks_list_free(fs->badblocks);
		fs->badblocks = NULL;
	}
	if (!fs->badblocks || ext2fs_badblocks_list_iterate_begin(fs->badblocks,
								   &it))
		return 0;
	while (ext2fs_badblocks_list_iterate(it, &b))
		n++;
	ext2fs_badblocks_list_iterate_end(it);
	if (!n)
		return 0;
	if (ext2fs_get_array(n, sizeof(*s->bad), &s->bad) ||
	    ext2fs_badblocks_list_iterate_begin(fs->badblocks, &it))
		return EXT2_ET_NO_MEMORY;
	n = 0;
	while (ext2fs_badblocks_list_iterate(it, &b))
		s->bad[n++] = b;	/* the list keeps them sorted */
	ext2fs_badblocks_list_iterate_end(it);
	s->prod.bad = s->cons.bad = s->bad;
	s->prod.nbad = s->cons.nbad = n;
	return 0;
}

errcode_t itable_scan(ext2_filsys fs, int fd, uint64_t offset_bytes,
		      const struct itable_ops *ops, void *priv)
{
	struct range_read_ops rops = { produce, consume };
	struct iscan s;
	errcode_t err;
	int over;

	if (ext2fs_has_feature_journal_dev(fs->super))
		return EXT2_ET_EXTERNAL_JOURNAL_NOSUPP;	/* as the scan */
	memset(&s, 0, sizeof(s));
	s.fs = fs;
	s.ops = ops;
	s.priv = priv;
	s.prod.fs = s.cons.fs = fs;
	s.prod.ops = s.cons.ops = ops;
	s.prod.priv = s.cons.priv = priv;
	err = ext2fs_get_memzero(fs->blocksize, &s.zero);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	if (!err)
		err = ext2fs_get_mem(EXT2_INODE_SIZE(fs->super), &s.swapped);
#endif
	if (!err)
		err = load_bad_blocks(&s);
	if (!err)
		err = range_read(fs, fd, offset_bytes, &rops, &s);
	if (err && err != s.cb_err && err != EXT2_ET_NO_MEMORY &&
	    err != EXT2_ET_GDESC_BAD_INODE_TABLE &&
	    err != EXT2_ET_MISSING_INODE_TABLE &&
	    err != EXT2_ET_INVALID_ARGUMENT)
		err = EXT2_ET_NEXT_INODE_READ;	/* as the scan says it */
	/* what follows the last read: groups done, bad blocks, an error */
	if (!err && s.cur.len)
		err = EXT2_ET_INVALID_ARGUMENT;	/* named, never read */
	if (!err) {
		err = consume_to_read(&s, &over);
		if (!err && !over)
			err = EXT2_ET_INVALID_ARGUMENT;
	}
	ext2fs_free_mem(&s.bad);
	ext2fs_free_mem(&s.zero);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	ext2fs_free_mem(&s.swapped);
#endif
	return err;
}
