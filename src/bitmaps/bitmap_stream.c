// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bitmap_stream.c - the block bitmap read one group at a time
 *
 * ext2fs_read_block_bitmap() builds a bitmap of the whole filesystem: half
 * a gigabyte and seconds of work on a 15 TiB filesystem, mostly spent
 * expanding BLOCK_UNINIT groups bit by bit.  The plan only ever walks the
 * bitmap forward, so this source keeps a window of bitmap blocks in
 * memory and never materialises a BLOCK_UNINIT group at all.
 *
 * What a group's bitmap says must be exactly what libext2fs would say:
 *  - a group with BLOCK_UNINIT (and a valid descriptor checksum, checked
 *    for every group by e2trim_check()) has no bitmap on disk: it is free except for
 *    the metadata libext2fs marks for such groups (its superblock backup
 *    and descriptors, its own bitmaps and inode table);
 *  - any other group's bitmap block is read and its checksum verified;
 *  - and in every group, the metadata of BLOCK_UNINIT groups that lies in
 *    it is in use, whatever its bits say.
 * That metadata is collected once, with libext2fs's own
 * ext2fs_reserve_super_and_bgd(), into a sparse (rbtree) bitmap.
 *
 * The bitmap blocks are read a window of BITMAP_READ_BATCH groups at a
 * time (bitmap_read.c).  The first pass, which checks every group before
 * anything is trimmed, also keeps the free runs it finds; verification
 * and the plan then replay that list instead of reading every bitmap
 * twice more.  A filesystem with more free runs than the caller allows
 * is read again for each pass.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "bitmap.h"
#include "free_runs.h"
#include "walk.h"

struct bitmap_stream {
	ext2_filsys fs;
	ext2fs_block_bitmap uninit_meta;	/* see above; sparse */
	struct bitmap_read *reader;
	/* the window: groups [win_first, win_end) and, of those that have
	 * a bitmap on disk, its block, contents and read error */
	dgrp_t win_first, win_end;
	unsigned int win_n;
	dgrp_t win_group[BITMAP_READ_BATCH];
	blk64_t win_blk[BITMAP_READ_BATCH];
	errcode_t win_err[BITMAP_READ_BATCH];
	const unsigned char *win_buf;		/* the reader's */
	const unsigned char *map;		/* the current group's bits */
	dgrp_t group;				/* the current group */
	blk64_t gfirst, glast;			/* its first and last block */
	int loaded;				/* map holds group's bits */
	int uninit;				/* group is BLOCK_UNINIT */
	int meta_here;				/* uninit_meta in group */
	blk64_t meta_from, meta_next;		/* first uninit_meta >= from */
	struct free_runs runs;			/* what the check found */
	int runs_complete;			/* every group is in runs */
	__u32 *free_clusters;			/* per group, by the check */
};

static int group_is_uninit(ext2_filsys fs, dgrp_t g)
{
	return ext2fs_has_group_desc_csum(fs) &&
	       ext2fs_bg_flags_test(fs, g, EXT2_BG_BLOCK_UNINIT);
}

/* What libext2fs marks in use for every BLOCK_UNINIT group. */
static errcode_t collect_uninit_meta(struct bitmap_stream *bs)
{
	ext2_filsys fs = bs->fs;
	int saved_type = fs->default_bitmap_type;
	struct mark_run itable, bbitmap, ibitmap;
	struct group_tables gt;
	errcode_t err;
	dgrp_t g;

	fs->default_bitmap_type = EXT2FS_BMAP64_RBTREE;
	err = ext2fs_allocate_block_bitmap(fs, "uninit group metadata",
					   &bs->uninit_meta);
	fs->default_bitmap_type = saved_type;
	if (err)
		return err;

	itable.map = bbitmap.map = ibitmap.map = bs->uninit_meta;
	itable.len = bbitmap.len = ibitmap.len = 0;
	for_each_group_tables(fs, g, &gt) {
		if (!(gt.flags & EXT2_BG_BLOCK_UNINIT))
			continue;
		ext2fs_reserve_super_and_bgd(fs, g, bs->uninit_meta);
		/* block 0: no table (first_data_block is 0 or 1) */
		if (gt.inode_table &&
		    blocks_in_fs(fs, gt.inode_table, fs->inode_blocks_per_group))
			mark_run_add(&itable, gt.inode_table,
				     fs->inode_blocks_per_group);
		if (gt.block_bitmap && blocks_in_fs(fs, gt.block_bitmap, 1))
			mark_run_add(&bbitmap, gt.block_bitmap, 1);
		if (gt.inode_bitmap && blocks_in_fs(fs, gt.inode_bitmap, 1))
			mark_run_add(&ibitmap, gt.inode_bitmap, 1);
	}
	mark_run_flush(&itable);
	mark_run_flush(&bbitmap);
	mark_run_flush(&ibitmap);
	return 0;
}

/*
 * Is any of that metadata in the current group?  Groups are visited in
 * order, so the first metadata block at or after an earlier group is
 * kept and a tree search made only when the walk has passed it.
 */
static int meta_in_group(struct bitmap_stream *bs)
{
	blk64_t end = ext2fs_blocks_count(bs->fs->super);

	if (bs->gfirst < bs->meta_from || bs->meta_next < bs->gfirst) {
		if (ext2fs_find_first_set_block_bitmap2(bs->uninit_meta,
				bs->gfirst, end - 1, &bs->meta_next))
			bs->meta_next = end;	/* none after gfirst */
		bs->meta_from = bs->gfirst;
	}
	return bs->meta_next <= bs->glast;
}

/*
 * Read the bitmaps of the groups from @g on, up to BITMAP_READ_BATCH of
 * them that have one.  A group whose descriptor points outside the
 * filesystem is read by nobody: it ends the window, or is alone in it.
 */
static void fill_window(struct bitmap_stream *bs, dgrp_t g)
{
	ext2_filsys fs = bs->fs;
	unsigned int n = 0;
	blk64_t blk;

	bs->win_first = g;
	for (; g < fs->group_desc_count && n < BITMAP_READ_BATCH; g++) {
		if (group_is_uninit(fs, g))
			continue;
		blk = ext2fs_block_bitmap_loc(fs, g);
		if (!blocks_in_fs(fs, blk, 1)) {
			if (n)
				break;
			bs->win_group[0] = g;
			bs->win_err[0] = EXT2_ET_GDESC_BAD_BLOCK_MAP;
			bs->win_end = g + 1;
			bs->win_n = 1;
			return;
		}
		bs->win_group[n] = g;
		bs->win_blk[n++] = blk;
	}
	bs->win_end = g;
	bs->win_n = n;
	bs->win_buf = bitmap_read_blocks(bs->reader, bs->win_blk, n,
					 bs->win_err);
}

/* Group @g's bitmap, read and checked against its checksum. */
static errcode_t read_group(struct bitmap_stream *bs, dgrp_t g)
{
	ext2_filsys fs = bs->fs;
	int nbytes = EXT2_CLUSTERS_PER_GROUP(fs->super) / 8;
	unsigned int lo = 0, hi, mid;

	bs->group = g;
	bs->gfirst = ext2fs_group_first_block2(fs, g);
	bs->glast = ext2fs_group_last_block2(fs, g);
	bs->loaded = 0;
	bs->uninit = group_is_uninit(fs, g);
	bs->meta_here = meta_in_group(bs);
	if (bs->uninit) {
		bs->loaded = 1;
		return 0;
	}
	if (g < bs->win_first || g >= bs->win_end)
		fill_window(bs, g);
	/* g has a bitmap and is in the window, so it is in win_group[] */
	hi = bs->win_n;
	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		if (bs->win_group[mid] <= g)
			lo = mid;
		else
			hi = mid;
	}
	if (bs->win_group[lo] != g)
		return EXT2_ET_BLOCK_BITMAP_READ;	/* cannot happen */
	if (bs->win_err[lo])
		return bs->win_err[lo];
	bs->map = bs->win_buf + (size_t)lo * fs->blocksize;
	if (!ext2fs_block_bitmap_csum_verify(fs, g, (char *)bs->map, nbytes))
		return EXT2_ET_BLOCK_BITMAP_CSUM_INVALID;
	bs->loaded = 1;
	return 0;
}

/*
 * First bit in [from, end) equal to @want, or @end.  Bit i of the map is
 * bit (i % 8) of byte i / 8 (little-endian bit order, as on disk), so a
 * little-endian 64-bit load sees bits in order.  The map must be readable
 * up to the end of the 64-bit word that holds bit end - 1: bitmaps are
 * whole blocks, and a group's bits never fill more than one.
 */
static uint64_t find_bit(const unsigned char *map, uint64_t from,
			 uint64_t end, int want)
{
	uint64_t word, base;

	while (from < end) {
		base = from & ~(uint64_t)63;
		memcpy(&word, map + (base >> 3), sizeof(word));
		word = le64toh(word);
		if (!want)
			word = ~word;
		word &= ~(uint64_t)0 << (from & 63);	/* bits before from */
		if (word) {
			from = base + __builtin_ctzll(word);
			return from < end ? from : end;
		}
		from = base + 64;
	}
	return end;
}

/*
 * The free run of the current group by its own bits: the first free
 * cluster at or after @from and not after @last, and where it ends (at
 * the group's edge at the latest).  ENOENT if there is none.
 */
static errcode_t bits_run(struct bitmap_stream *bs, blk64_t from,
			  blk64_t last, blk64_t *zero, blk64_t *set)
{
	int cbits = bs->fs->cluster_ratio_bits;
	blk64_t gfirst = bs->gfirst, glast = bs->glast;
	uint64_t bit, last_bit = (last - gfirst) >> cbits;

	if (bs->uninit) {
		*zero = from;
		*set = glast + 1;
		return 0;
	}
	bit = find_bit(bs->map, (from - gfirst) >> cbits, last_bit + 1, 0);
	if (bit > last_bit)
		return ENOENT;
	*zero = gfirst + (bit << cbits);
	bit = find_bit(bs->map, bit, ((glast - gfirst) >> cbits) + 1, 1);
	*set = gfirst + (bit << cbits);
	if (*set > glast + 1)
		*set = glast + 1;	/* a partial last cluster */
	return 0;
}

/*
 * The first free run of the current group that starts in [from, last],
 * after taking out the metadata of BLOCK_UNINIT groups.  ENOENT if none.
 */
static errcode_t group_run(struct bitmap_stream *bs, blk64_t from,
			   blk64_t last, uint64_t *run_start,
			   uint64_t *run_end)
{
	blk64_t glast = bs->glast;
	blk64_t zero, set, m;
	errcode_t err;

	if (last > glast)
		last = glast;
	for (;;) {
		if (from > last)
			return ENOENT;
		err = bits_run(bs, from, last, &zero, &set);
		if (err)
			return err;
		if (!bs->meta_here)
			break;		/* nothing to take out */
		/* skip metadata at the start of the run ... */
		if (!ext2fs_find_first_set_block_bitmap2(bs->uninit_meta,
							 zero, zero, &m) &&
		    ext2fs_find_first_zero_block_bitmap2(bs->uninit_meta,
							 zero, set - 1,
							 &zero)) {
			from = set;	/* all of it is metadata */
			continue;
		}
		if (zero > last)
			return ENOENT;
		/* ... and end the run where metadata begins */
		if (!ext2fs_find_first_set_block_bitmap2(bs->uninit_meta,
							 zero, set - 1, &m))
			set = m;
		break;
	}
	*run_start = zero;
	*run_end = set;
	return 0;
}

static errcode_t stream_next_free(void *priv, uint64_t from, uint64_t last,
				  uint64_t *run_start, uint64_t *run_end)
{
	struct bitmap_stream *bs = priv;
	ext2_filsys fs = bs->fs;
	errcode_t err;
	dgrp_t g;

	while (from <= last) {
		g = ext2fs_group_of_blk2(fs, from);
		if (!bs->loaded || bs->group != g) {
			err = read_group(bs, g);
			if (err)
				return err;
		}
		err = group_run(bs, from, last, run_start, run_end);
		if (err != ENOENT)
			return err;
		from = ext2fs_group_last_block2(fs, g) + 1;
	}
	return ENOENT;
}

errcode_t bitmap_stream_open(ext2_filsys fs, int fd, uint64_t offset_bytes,
			     struct bitmap_stream **out)
{
	struct bitmap_stream *bs;
	errcode_t err;

	err = ext2fs_get_memzero(sizeof(*bs), &bs);
	if (err)
		return err;
	bs->fs = fs;
	bs->meta_from = ~(blk64_t)0;	/* nothing known: search */
	err = bitmap_read_open(fs, fd, offset_bytes, &bs->reader);
	if (!err)
		err = collect_uninit_meta(bs);
	if (err) {
		bitmap_stream_close(bs);
		return err;
	}
	*out = bs;
	return 0;
}

/*
 * Keep every free run of the current group, while the list has room, and
 * count its free clusters as e2fsck's pass 5 does: the bits libext2fs
 * would load, BLOCK_UNINIT groups made up, a partial last cluster whole.
 */
static errcode_t keep_group_runs(struct bitmap_stream *bs, __u32 *nfree)
{
	ext2_filsys fs = bs->fs;
	blk64_t from = bs->gfirst, last = bs->glast;
	uint64_t start, end;
	errcode_t err;

	*nfree = 0;
	while (from <= last) {
		err = group_run(bs, from, last, &start, &end);
		if (err == ENOENT)
			break;
		if (!err && !run_advances(from, start, end))
			err = EXT2_ET_INVALID_ARGUMENT;
		if (!err && !bs->runs.overflow)
			err = free_runs_add(&bs->runs, start, end);
		if (err)
			return err;
		*nfree += EXT2FS_NUM_B2C(fs, end - start);
		from = end;
	}
	return 0;
}

errcode_t bitmap_stream_check(struct bitmap_stream *bs, size_t max_runs,
			      dgrp_t *bad_group)
{
	errcode_t err;
	dgrp_t g;

	free_runs_free(&bs->runs);
	bs->runs.max = max_runs;
	bs->runs.overflow = 0;
	bs->runs_complete = 0;
	ext2fs_free_mem(&bs->free_clusters);
	err = ext2fs_get_array(bs->fs->group_desc_count, sizeof(__u32),
			       &bs->free_clusters);
	if (err) {
		*bad_group = 0;
		return err;
	}
	for (g = 0; g < bs->fs->group_desc_count; g++) {
		err = read_group(bs, g);
		if (!err)
			err = keep_group_runs(bs, &bs->free_clusters[g]);
		if (err) {
			*bad_group = g;
			ext2fs_free_mem(&bs->free_clusters);
			return err;
		}
	}
	bs->runs_complete = !bs->runs.overflow;
	return 0;
}

const __u32 *bitmap_stream_free_clusters(const struct bitmap_stream *bs)
{
	return bs->free_clusters;
}

void bitmap_stream_source(struct bitmap_stream *bs, struct plan_source *src)
{
	if (bs->runs_complete) {
		free_runs_source(&bs->runs, src);
		return;
	}
	bs->loaded = 0;
	src->next_free = stream_next_free;
	src->priv = bs;
}

void bitmap_stream_close(struct bitmap_stream *bs)
{
	if (!bs)
		return;
	if (bs->uninit_meta)
		ext2fs_free_block_bitmap(bs->uninit_meta);
	bitmap_read_close(bs->reader);
	free_runs_free(&bs->runs);
	ext2fs_free_mem(&bs->free_clusters);
	ext2fs_free_mem(&bs);
}
