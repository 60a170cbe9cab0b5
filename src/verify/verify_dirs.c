// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verify_dirs.c - no directory entry may name an inode the scan skipped
 *
 * With group descriptor checksums, e2fsck's pass 1 (and e2trim's inode
 * scan) skips the inode tables of INODE_UNINIT groups and, in the others,
 * every inode from the group's first unused one on (bg_itable_unused).
 * A file whose inode lies there is invisible to both.  But e2fsck's pass
 * 2 reads every directory, and an entry that names such an inode makes
 * it clear the flag or the unused count and start again: pass 1 then
 * reads the inode and keeps its blocks, even where the block bitmap says
 * they are free.  So e2trim reads every directory too, as pass 2 would,
 * and refuses when an entry names an inode in an unused area.
 *
 * What pass 2 reads: every block of every directory in use (the root and
 * ordinary inodes; the reserved ones are not directories to e2fsck), and
 * the entries of inline-data directories, in i_block and in the
 * system.data extended attribute.  An htree's internal blocks read as one
 * empty entry that spans the block, its root as "." and a ".." that spans
 * the rest, so every block is parsed the same way.  Inode numbers are
 * not encrypted, nor changed by casefolding.  Entries that pass 2 clears
 * without looking further (inode numbers of reserved inodes other than
 * the root, past s_inodes_count, or of the quota and orphan files) bring
 * nothing back and are passed over.  An entry naming an inode in the used
 * area whose links count is 0 is cleared by pass 2 too; one whose links
 * count is not 0 is in use for the scan, whatever the inode bitmap says.
 * The inodes the superblock names are checked the same way.
 *
 * The blocks' numbers come from the walk that marks every referenced
 * block (verify_ref.c, in the walk verify.c drives), so no inode or extent tree is read twice; they are
 * sorted and read in runs of up to DIR_READ_BLOCKS, with the kernel
 * asked to read DIR_READAHEAD_BYTES ahead.
 */
#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2trim_int.h"
#include "verify_int.h"

#define DIR_READ_BLOCKS 64
#define DIR_READAHEAD_BYTES (8U << 20)

/*
 * An array of COUNT elements of SIZE grown to MAX, the new ones zeroed:
 * libext2fs 1.46's ext2fs_resize_array(), written here over
 * ext2fs_resize_mem(), which 1.45 (Ubuntu 20.04, RHEL 8) has too.
 */
static errcode_t grow_array(size_t size, size_t count, size_t max, void *ptr)
{
	errcode_t err;

	if (max && size > SIZE_MAX / max)
		return EXT2_ET_NO_MEMORY;
	err = ext2fs_resize_mem(count * size, max * size, ptr);
	if (err)
		return err;
	memset(*(char **)ptr + count * size, 0, (max - count) * size);
	return 0;
}

static int dirs_needed(ext2_filsys fs)
{
	/* without checksums every inode table is read whole */
	return ext2fs_has_group_desc_csum(fs);
}

errcode_t dirs_add_blocks(struct dir_list *dl, ext2_ino_t ino, blk64_t blk,
			  blk64_t len)
{
	struct dir_extent *last = dl->n ? &dl->ext[dl->n - 1] : NULL;
	errcode_t err;

	if (last && last->ino == ino && last->blk + last->len == blk &&
	    len <= UINT32_MAX - last->len) {
		last->len += len;
		return 0;
	}
	if (dl->n == dl->max) {
		size_t max = dl->max ? 2 * dl->max : 1024;

		err = grow_array(sizeof(*dl->ext), dl->max, max, &dl->ext);
		if (err)
			return err;
		dl->max = max;
	}
	dl->ext[dl->n].blk = blk;
	dl->ext[dl->n].len = len;	/* verify_ref() keeps len < 2^32 */
	dl->ext[dl->n].ino = ino;
	dl->n++;
	return 0;
}

static errcode_t dirs_add_inline(struct dir_list *dl, ext2_ino_t ino)
{
	errcode_t err;

	if (dl->ninl == dl->maxinl) {
		size_t max = dl->maxinl ? 2 * dl->maxinl : 256;

		err = grow_array(sizeof(*dl->inl), dl->maxinl, max, &dl->inl);
		if (err)
			return err;
		dl->maxinl = max;
	}
	dl->inl[dl->ninl++] = ino;
	return 0;
}

void dirs_free(struct dir_list *dl)
{
	ext2fs_free_mem(&dl->ext);
	ext2fs_free_mem(&dl->inl);
	memset(dl, 0, sizeof(*dl));
}

errcode_t verify_note_dir(struct verify *v, ext2_ino_t ino)
{
	ext2_filsys fs = v->fs;

	v->dir_ino = 0;
	if (v->naming || !LINUX_S_ISDIR(v->inode->i_mode))
		return 0;
	/* e2fsck's pass 1 takes the reserved inodes for files */
	if (ino != EXT2_ROOT_INO && ino < EXT2_FIRST_INODE(fs->super))
		return 0;
	/* what pass 5 compares bg_used_dirs_count with */
	if (ext2fs_test_inode_bitmap2(fs->inode_map, ino))
		v->dirs_in_group[ext2fs_group_of_ino(fs, ino)]++;
	if (!dirs_needed(fs))
		return 0;
	/* without the feature, e2fsck -y sets it rather than lose the data */
	if (v->inode->i_flags & EXT4_INLINE_DATA_FL)
		return dirs_add_inline(&v->dirs, ino);
	v->dir_ino = ino;	/* verify_ref() adds its data blocks */
	return 0;
}

/* Does any group have an unused inode-table area at all? */
static int any_unused_area(ext2_filsys fs)
{
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++)
		if (ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT) ||
		    ext2fs_bg_itable_unused(fs, g))
			return 1;
	return 0;
}

/* Entries that e2fsck's pass 2 clears before it looks at the group. */
static int cleared_by_pass2(const struct ext2_super_block *sb, ext2_ino_t ino)
{
	return (ino != EXT2_ROOT_INO && ino < EXT2_FIRST_INODE(sb)) ||
	       ino > sb->s_inodes_count || ino == sb->s_usr_quota_inum ||
	       ino == sb->s_grp_quota_inum || ino == sb->s_prj_quota_inum ||
	       ino == sb_orphan_file_inum(sb);
}

/*
 * Does the inode scan read inode @ino (1 <= ino <= s_inodes_count)?  The
 * entries of a directory mostly name inodes of one group (the kernel puts
 * files near their directory): the used range of the last group asked
 * about is kept, [used_first, used_last] (empty when used_last is less).
 */
static int in_used_area(struct verify *v, ext2_ino_t ino)
{
	ext2_filsys fs = v->fs;
	__u64 ipg = EXT2_INODES_PER_GROUP(fs->super), used;
	dgrp_t g;

	if (ino >= v->used_first && ino <= v->used_last)
		return 1;
	g = ext2fs_group_of_ino(fs, ino);
	/* bg_itable_unused counts from the end of the group's table */
	used = ipg - ext2fs_bg_itable_unused(fs, g);
	if (ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT) ||
	    ext2fs_bg_itable_unused(fs, g) > ipg)
		used = 0;
	v->used_first = g * ipg + 1;
	v->used_last = g * ipg + used;
	return ino <= v->used_last;
}

/* Directory @dir names inode @ino: is it in a used part of a table? */
static errcode_t check_named(struct verify *v, ext2_ino_t dir, ext2_ino_t ino)
{
	ext2_filsys fs = v->fs;
	__u32 ipg = EXT2_INODES_PER_GROUP(fs->super);
	char detail[160];
	dgrp_t g;

	/* past the inode count: no group to look in, and pass 2 clears it */
	if (!ino || ino > fs->super->s_inodes_count)
		return 0;
	if (in_used_area(v, ino) || cleared_by_pass2(fs->super, ino))
		return 0;
	g = ext2fs_group_of_ino(fs, ino);
	if (ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT))
		snprintf(detail, sizeof(detail),
			 "directory inode %u names inode %u of group %u, "
			 "which is flagged INODE_UNINIT", dir, ino, g);
	else
		snprintf(detail, sizeof(detail),
			 "directory inode %u names inode %u of group %u, "
			 "whose inodes from %lld on are unused", dir, ino, g,
			 (long long)g * ipg + 1 + ipg -
				ext2fs_bg_itable_unused(fs, g));
	return lib_fail(v->t, E2TRIM_ERR_UNUSED_INODE, "%s", detail);
}

/*
 * The inodes the superblock names (the reserved ones, the journal, quota
 * and orphan files) are read by e2fsck whatever the descriptors say: they
 * too must lie in the used part of their group.
 */
static errcode_t check_super_inodes(struct verify *v)
{
	const struct ext2_super_block *sb = v->fs->super;
	const ext2_ino_t named[] = {
		EXT2_FIRST_INODE(sb) - 1, sb->s_journal_inum,
		sb->s_usr_quota_inum, sb->s_grp_quota_inum,
		sb->s_prj_quota_inum, sb_orphan_file_inum(sb),
	};
	char detail[160];
	size_t i;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if (!named[i] || named[i] > sb->s_inodes_count ||
		    in_used_area(v, named[i]))
			continue;
		snprintf(detail, sizeof(detail),
			 "the superblock names inode %u, in an unused part of "
			 "group %u", named[i],
			 ext2fs_group_of_ino(v->fs, named[i]));
		return lib_fail(v->t, E2TRIM_ERR_UNUSED_INODE, "%s", detail);
	}
	return 0;
}

static errcode_t damaged_dir(const struct verify *v, ext2_ino_t dir, blk64_t blk,
			     const char *what)
{
	char detail[160];

	if (blk)
		snprintf(detail, sizeof(detail),
			 "directory inode %u, block %llu: %s", dir,
			 (unsigned long long)blk, what);
	else
		snprintf(detail, sizeof(detail), "directory inode %u: %s",
			 dir, what);
	return lib_fail(v->t, E2TRIM_ERR_UNFOLLOWABLE, "%s", detail);
}

/*
 * The entries of @len bytes at @buf, as they are on disk (little-endian):
 * inode (32 bits), rec_len (16), name_len (8), file type (8), name.
 * rec_len encodes lengths of 64 KiB blocks as ext2fs_get_rec_len() says.
 */
static errcode_t check_entries(struct verify *v, ext2_ino_t dir, blk64_t blk,
			       const unsigned char *buf, unsigned int len)
{
	unsigned int off = 0, rec_len, name_len, bs = v->fs->blocksize;
	__u32 ino;
	__u16 raw;
	errcode_t ret;

	while (len - off >= 8) {
		memcpy(&ino, buf + off, 4);
		memcpy(&raw, buf + off + 4, 2);
		ino = le32toh(ino);
		rec_len = le16toh(raw);
		if (bs >= 65536)
			rec_len = rec_len == 65535 || !rec_len ? bs :
				  (rec_len & 65532) | (rec_len & 3) << 16;
		name_len = buf[off + 6];
		if (rec_len < 8 || rec_len % 4 || rec_len > len - off ||
		    name_len + 8 > rec_len)
			return damaged_dir(v, dir, blk,
					   "an entry's length is wrong");
		ret = check_named(v, dir, ino);
		if (ret)
			return ret;
		off += rec_len;
	}
	return 0;
}

/* i_block holds the parent's number, then entries; the xattr more. */
static errcode_t check_inline(struct verify *v, ext2_ino_t dir,
			      unsigned char *buf)
{
	size_t size = 0, first = EXT4_MIN_INLINE_DATA_SIZE;
	__u32 parent;
	errcode_t err;
	errcode_t ret;

	err = ext2fs_inline_data_get(v->fs, dir, NULL, buf, &size);
	if (err)
		return damaged_dir(v, dir, 0, error_message(err));
	if (size < 4)
		return damaged_dir(v, dir, 0, "no inline data");
	memcpy(&parent, buf, 4);
	ret = check_named(v, dir, le32toh(parent));
	if (size < first)
		first = size;
	if (!ret)
		ret = check_entries(v, dir, 0, buf + 4, first - 4);
	if (!ret && size > first)
		ret = check_entries(v, dir, 0, buf + first, size - first);
	return ret;
}

static int by_block(const void *a, const void *b)
{
	const struct dir_extent *x = a, *y = b;

	return x->blk < y->blk ? -1 : x->blk > y->blk;
}

/* Ask the kernel to read ahead up to DIR_READAHEAD_BYTES past block @at. */
static void readahead_dirs(struct verify *v, size_t *ra, blk64_t *ra_end,
			   blk64_t at)
{
	const struct dir_list *dl = &v->dirs;
	blk64_t window = DIR_READAHEAD_BYTES / v->fs->blocksize;
	blk64_t start, end;

	while (*ra < dl->n && (*ra_end <= at || *ra_end - at < window)) {
		start = dl->ext[*ra].blk;
		end = start + dl->ext[*ra].len;
		/* extents end to end make one request */
		while (++*ra < dl->n && dl->ext[*ra].blk == end)
			end += dl->ext[*ra].len;
		io_channel_cache_readahead(v->fs->io, start, end - start);
		*ra_end = end;
	}
}

/*
 * From extent *@i, block *@off on, the blocks that lie end to end (up to
 * DIR_READ_BLOCKS, across extents): read them, check each.
 */
static errcode_t check_run(struct verify *v, size_t *i, __u32 *off,
			   unsigned char *buf)
{
	const struct dir_list *dl = &v->dirs;
	ext2_ino_t owner[DIR_READ_BLOCKS];
	blk64_t start = dl->ext[*i].blk + *off;
	unsigned int n = 0, k, take, bs = v->fs->blocksize;
	errcode_t err;
	errcode_t ret;

	while (*i < dl->n && n < DIR_READ_BLOCKS &&
	       dl->ext[*i].blk + *off == start + n) {
		take = dl->ext[*i].len - *off;
		if (take > DIR_READ_BLOCKS - n)
			take = DIR_READ_BLOCKS - n;
		for (k = 0; k < take; k++)
			owner[n + k] = dl->ext[*i].ino;
		n += take;
		*off += take;
		if (*off == dl->ext[*i].len) {
			++*i;
			*off = 0;
		}
	}
	err = io_channel_read_blk64(v->fs->io, start, n, buf);
	if (err)
		return lib_fail_cause(v->t, E2TRIM_ERR_VERIFY_READ, err,
				      "while reading directory blocks %llu-%llu",
				      (unsigned long long)start,
				      (unsigned long long)start + n - 1);
	for (k = 0; k < n; k++) {
		ret = check_entries(v, owner[k], start + k,
				    buf + (size_t)k * bs, bs);
		if (ret)
			return ret;
	}
	return 0;
}

errcode_t verify_dir_entries(struct verify *v)
{
	struct dir_list *dl = &v->dirs;
	unsigned char *buf = NULL;
	blk64_t ra_end = 0;
	size_t i = 0, ra = 0;
	__u32 off = 0;
	errcode_t err;
	errcode_t ret = 0;

	if (!dirs_needed(v->fs) || !any_unused_area(v->fs))
		return 0;
	v->used_first = 1;
	v->used_last = 0;	/* nothing known */
	ret = check_super_inodes(v);
	if (ret)
		return ret;
	err = ext2fs_get_mem((size_t)DIR_READ_BLOCKS * v->fs->blocksize, &buf);
	if (err)
		return lib_fail_cause(v->t, E2TRIM_ERR_VERIFY_READ, err,
				      "while reading directories");
	qsort(dl->ext, dl->n, sizeof(*dl->ext), by_block);
	while (!ret && i < dl->n) {
		if (lib_cancelled(v->t)) {
			ret = lib_interrupted(v->t);
			break;
		}
		readahead_dirs(v, &ra, &ra_end, dl->ext[i].blk + off);
		ret = check_run(v, &i, &off, buf);
	}
	for (i = 0; !ret && i < dl->ninl; i++)
		ret = check_inline(v, dl->inl[i], buf);
	ext2fs_free_mem(&buf);
	return ret;
}
