// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * journal_inode.c - the internal journal e2fsck would load, or a refusal
 *
 * e2fsck does not take the journal inode at its word.  Its
 * e2fsck_get_journal() (e2fsck/journal.c) rejects inode s_journal_inum
 * when it cannot be read, has no links, is not a regular file, is
 * encrypted, is smaller than JBD2_MIN_JOURNAL_BLOCKS, or maps fewer
 * blocks than its size (a hole, or a block outside the filesystem, ends
 * the walk).  It then builds a journal inode from the superblock's backup
 * of the block map (s_jnl_blocks, when s_jnl_backup_type says it holds
 * one), checks it the same way, replays that journal, and with -y writes
 * the backup over the inode; with no usable backup it deletes the journal.  So a damaged inode
 * can hide a log that e2fsck replays over blocks the bitmap calls free.
 * e2trim does not rebuild the journal from the backup: where the inode
 * fails e2fsck's checks, it refuses and names e2fsck.  Where the inode
 * passes, e2fsck uses it and only refreshes a backup that differs; so
 * does e2trim (the journal superblock is read through the inode).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <ext2fs/ext2fs.h>

#include "journal_inode.h"

#define JBD2_MIN_JOURNAL_BLOCKS	1024

/*
 * e2fsck's process_journal_block(), called by ext2fs_block_iterate3() for
 * each block (BLOCK_FLAG_HOLE: a hole comes as block 0): a hole or a block
 * outside the filesystem stops the walk; the last logical block reached
 * is what counts.
 */
struct jwalk {
	e2_blkcnt_t last;
};

static int blk_outside(ext2_filsys fs, blk64_t blk)
{
	return !blk || blk < fs->super->s_first_data_block ||
	       blk >= ext2fs_blocks_count(fs->super);
}

static int jwalk_block(ext2_filsys fs, blk64_t *blk, e2_blkcnt_t blockcnt,
		       blk64_t ref EXT2FS_ATTR((unused)),
		       int ref_off EXT2FS_ATTR((unused)), void *priv)
{
	struct jwalk *w = priv;

	if (blk_outside(fs, *blk))
		return BLOCK_ABORT;
	if (blockcnt >= 0)
		w->last = blockcnt;
	return 0;
}

/*
 * One leaf extent, as ext2fs_block_iterate3() hands it to the callback
 * block by block, in one step: @*next is the iterator's running logical
 * block.  Returns 1 when the walk stops.  A run of physical blocks can
 * leave the filesystem only at its start (0, below s_first_data_block)
 * or at its end.
 */
static int jwalk_leaf(ext2_filsys fs, const struct ext2fs_extent *e,
		      e2_blkcnt_t *next, struct jwalk *w)
{
	blk64_t end = ext2fs_blocks_count(fs->super), blk = e->e_pblk;

	if (e->e_lblk + e->e_len <= (blk64_t)*next)
		return 0;		/* already passed: skipped */
	/* the iterator starts the physical run where it left off */
	if (e->e_lblk < (blk64_t)*next)
		blk += *next - e->e_lblk;
	if (blk_outside(fs, blk))
		return 1;
	if (blk + e->e_len > end) {
		w->last = e->e_lblk + (end - blk) - 1;
		return 1;
	}
	w->last = e->e_lblk + e->e_len - 1;
	*next = e->e_lblk + e->e_len;
	return 0;
}

/*
 * The same walk over an extent tree, an extent at a time instead of a
 * block at a time (a 1 GiB journal has 262 144 blocks and a handful of
 * extents).  Index blocks are checked on the way down, as the iterator
 * reports them (blockcnt -1); any error ends the walk as it ends there.
 */
static void jwalk_extents(ext2_filsys fs, ext2_ino_t ino,
			  struct ext2_inode *inode, struct jwalk *w)
{
	ext2_extent_handle_t h;
	struct ext2fs_extent e;
	e2_blkcnt_t next = 0;
	int op = EXT2_EXTENT_ROOT;

	if (ext2fs_extent_open2(fs, ino, inode, &h))
		return;
	while (!ext2fs_extent_get(h, op, &e)) {
		op = EXT2_EXTENT_NEXT;
		if (!(e.e_flags & EXT2_EXTENT_FLAGS_LEAF)) {
			if (!(e.e_flags & EXT2_EXTENT_FLAGS_SECOND_VISIT) &&
			    blk_outside(fs, e.e_pblk))
				break;
			continue;
		}
		if (jwalk_leaf(fs, &e, &next, w))
			break;
	}
	ext2fs_extent_free(h);
}

/* NULL when e2fsck would take the inode as the journal, else why not */
static const char *inode_unusable(ext2_filsys fs, ext2_ino_t ino,
				  struct ext2_inode *inode)
{
	__u64 size = EXT2_I_SIZE(inode);
	struct jwalk w = { .last = -1 };

	if (!inode->i_links_count)
		return "has no links";
	if (!LINUX_S_ISREG(inode->i_mode))
		return "is not a regular file";
	if (inode->i_flags & EXT4_ENCRYPT_FL)
		return "is encrypted";
	if (size / fs->blocksize < JBD2_MIN_JOURNAL_BLOCKS)
		return "is smaller than 1024 blocks";
	/*
	 * The walk's own error is ignored, as e2fsck ignores it: a tree it
	 * cannot read leaves the walk short.  e2fsck casts the size to int
	 * here, which a journal of 2 GiB or more overflows to a smaller
	 * number; e2trim compares the whole size (never less strict).
	 */
	if (inode->i_flags & EXT4_EXTENTS_FL)
		jwalk_extents(fs, ino, inode, &w);
	else
		ext2fs_block_iterate3(fs, ino,
				      BLOCK_FLAG_HOLE | BLOCK_FLAG_READ_ONLY,
				      NULL, jwalk_block, &w);
	if ((__u64)(w.last + 1) * fs->blocksize < size)
		return "maps fewer blocks than its size";
	return NULL;
}

/*
 * What e2fsck does instead of using the inode.  Whether the backup itself
 * passes is not worked out: e2fsck 1.47 builds its stand-in inode without
 * EXTENTS_FL, so an extent-mapped backup fails and the journal is deleted;
 * either way e2trim refuses.
 */
static const char *instead(const struct ext2_super_block *sb)
{
	return sb->s_jnl_backup_type == EXT3_JNL_BACKUP_BLOCKS ?
	       "e2fsck would replace it with its backup in the superblock "
	       "(s_jnl_blocks) and replay that journal, or delete the journal" :
	       "e2fsck would delete the journal";
}

static int refuse(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return 1;
}

/*
 * The journal superblock, read through inode s_journal_inum: the first
 * JOURNAL_SB_SIZE bytes of its logical block 0.
 */
static errcode_t read_first_block(ext2_filsys fs, struct ext2_inode *inode,
				  unsigned char *jsb)
{
	ext2_ino_t ino = fs->super->s_journal_inum;
	blk64_t pblk = 0;
	char *buf;
	errcode_t err;

	err = ext2fs_bmap2(fs, ino, inode, NULL, 0, 0, NULL, &pblk);
	if (!err && !pblk)
		err = EXT2_ET_NO_JOURNAL_SB;
	if (err)
		return err;
	err = ext2fs_get_mem(fs->blocksize, &buf);
	if (err)
		return err;
	err = io_channel_read_blk64(fs->io, pblk, 1, buf);
	if (!err)
		memcpy(jsb, buf, JOURNAL_SB_SIZE);
	ext2fs_free_mem(&buf);
	return err;
}

int journal_inode_sb(ext2_filsys fs, unsigned char *jsb, blk64_t *total_len,
		     char *why, size_t len)
{
	struct ext2_super_block *sb = fs->super;
	ext2_ino_t ino = sb->s_journal_inum;
	struct ext2_inode inode;
	const char *bad;
	errcode_t err;

	/* e2fsck tries no backup for a number outside the inode tables */
	if ((__u64)ino > (__u64)fs->group_desc_count * sb->s_inodes_per_group)
		return refuse(why, len, "the journal inode number %u is out "
			      "of range; e2fsck would delete the journal",
			      ino);
	err = ext2fs_read_inode(fs, ino, &inode);
	if (err)
		return refuse(why, len, "cannot read journal inode %u (%s); "
			      "%s", ino, error_message(err), instead(sb));
	bad = inode_unusable(fs, ino, &inode);
	if (bad)
		return refuse(why, len, "journal inode %u %s; %s", ino, bad,
			      instead(sb));
	/*
	 * The inode passes: e2fsck loads the journal through it, whatever
	 * the backup says.  A backup that differs (tune2fs -I moves the
	 * journal and leaves s_jnl_blocks as it was) is only rewritten from
	 * the inode by e2fsck_move_ext3_journal(); it is the inode that
	 * counts, and its blocks that verification keeps.
	 */
	*total_len = EXT2_I_SIZE(&inode) / fs->blocksize;
	err = read_first_block(fs, &inode, jsb);
	if (err)
		return refuse(why, len, "cannot read the journal superblock: "
			      "%s", error_message(err));
	return 0;
}
