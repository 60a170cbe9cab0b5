// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * open_witness.c - a writer that came and went, seen by what it left
 *
 * Locks keep out the writers that honour them; a loop device attached,
 * mounted, written, unmounted and detached while e2trim runs honours
 * none and leaves no trace the loop look (open_hold.c) can see.  It does
 * leave one in the filesystem: a mount writes the superblock at once
 * (s_mtime, s_mnt_count, s_state, needs_recovery) and again at umount,
 * the kernel writes the descriptors' free counts and flags, e2fsck writes
 * both, and an MMP user writes the MMP block.  So the bytes the plan was
 * made from are copied when libext2fs has read them, and read again
 * before the first discard and before each batch: any byte changed
 * means another writer came, and the run stops (26) with the rest of
 * the plan untouched.  e2trim itself writes none of these bytes: not
 * the superblock nor a descriptor (no metadata, ever), and the MMP block
 * only in ext2fs_mmp_start() at open, before the copy is taken (e2trim
 * never calls ext2fs_mmp_update(); a stop rewrites it after the last
 * look).
 *
 * The second read must see the medium, not a cache that the other
 * writer went around:
 *  - an image file is read through e2trim's own descriptor, buffered:
 *    a loop device over it (buffered or --direct-io) and a mount through
 *    it write the file's one page cache or invalidate it, so a buffered
 *    read sees their bytes;
 *  - a block device has a page cache of its own, which a writer of what
 *    is under it (a second loop device over the same backing file, the
 *    file itself) never touches: a stale superblock would sit there.
 *    So a block device is read with O_DIRECT, through a second
 *    descriptor opened on /proc/self/fd/N (the same device, not the
 *    name again), in whole logical blocks; O_DIRECT also writes back
 *    what a mount of this very device left dirty first.
 * NBD and RBD targets have no descriptor of their own: a VM image is
 * held by its qemu-nbd's image locks, an NBD URI's server is the
 * operator's (README's table), and RBD has its header object's version
 * (rbd_io.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fs.h>

#include "e2trim_int.h"
#include "walk.h"
#include "open_witness.h"

/* A look is due once this has passed since the last, at the least. */
#define WITNESS_EVERY_NS 100000000LL
/* ... and this many times what the last look took (its cost ≤ 5 %) */
#define WITNESS_COST_RATIO 20

/* What was read: a byte range of the target and what it held. */
struct witness_range {
	uint64_t start;		/* bytes into the descriptor's file/device */
	uint64_t len;
	const char *what;	/* "the superblock", ... for the message */
	uint64_t first_blk;	/* of the filesystem, for the message */
};

struct open_witness {
	int fd;			/* reads go here (O_DIRECT on a device) */
	int own_fd;		/* @fd is ours to close */
	uint64_t align;		/* of reads through @fd (1: none) */
	struct witness_range *r;	/* in the order of the copy */
	unsigned int n, cap;
	unsigned char *copy;	/* the bytes of every range, in order */
	unsigned char *buf;	/* aligned: one range read again */
	uint64_t buf_len;
	uint64_t total;		/* bytes in @copy */
	long long last_ns;	/* when the last look ended */
	long long cost_ns;	/* what it took */
};

/*
 * Add [start, start + len) bytes of the target, joined to the last range
 * if it follows.  meta_bg scatters the descriptor blocks over the whole
 * filesystem (one block per 64 groups on a 64-bit one: 2 560 ranges on
 * 20 TiB), so the list grows as needed; what lies between them is never
 * read.
 */
static errcode_t add_range(struct open_witness *w, uint64_t start,
			   uint64_t len, const char *what, uint64_t first_blk)
{
	struct witness_range *last = w->n ? &w->r[w->n - 1] : NULL;
	struct witness_range *r;

	if (last && last->what == what && last->start + last->len == start) {
		last->len += len;
		return 0;
	}
	if (w->n == w->cap) {
		r = realloc(w->r, (w->cap ? 2 * w->cap : 16) * sizeof(*r));
		if (!r)
			return ENOMEM;
		w->r = r;
		w->cap = w->cap ? 2 * w->cap : 16;
	}
	w->r[w->n++] = (struct witness_range){ start, len, what, first_blk };
	return 0;
}

static errcode_t add_blocks(struct e2trim *t, struct open_witness *w,
			    blk64_t blk, const char *what)
{
	uint64_t bs = t->fs->blocksize;

	return add_range(w, t->offset_bytes + blk * bs, bs, what, blk);
}

/*
 * What the plan rests on: the primary superblock (1024 bytes at 1024),
 * every block of the group descriptors, the MMP block.
 */
static errcode_t list_ranges(struct e2trim *t, struct open_witness *w)
{
	ext2_filsys fs = t->fs;
	errcode_t err;
	dgrp_t i;

	err = add_range(w, t->offset_bytes + SUPERBLOCK_OFFSET,
			SUPERBLOCK_SIZE, "the superblock", 0);
	for (i = 0; i < fs->desc_blocks && !err; i++)
		err = add_blocks(t, w, fs_desc_block(fs, i),
				 "the group descriptors");
	if (!err && ext2fs_has_feature_mmp(fs->super) &&
	    fs->super->s_mmp_block)
		err = add_blocks(t, w, fs->super->s_mmp_block, "the MMP block");
	return err;
}

/* A second descriptor on the same device, reading past its page cache. */
static errcode_t direct_fd(struct e2trim *t, struct open_witness *w)
{
	char path[64];
	int lbs = 512;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", t->fd);
	w->fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (w->fd < 0)
		return errno;
	w->own_fd = 1;
	if (!ioctl(w->fd, BLKSSZGET, &lbs) && lbs > 0)
		w->align = (uint64_t)lbs;
	else
		w->align = 4096;
	return 0;
}

/*
 * What one read asks for at the most: a 15 TiB filesystem's descriptors
 * are 7.5 MiB, read and compared piece by piece, so that a look holds one
 * piece of memory beside the copy, not a second copy of them all (20 TiB
 * under ASan went past t_slow_huge_fs's RSS bound).
 */
#define WITNESS_PIECE (1U << 20)

/*
 * Read [@start, @start + @len) of the target (@len <= WITNESS_PIECE)
 * through the buffer aligned for O_DIRECT; *@bytes points at them there.
 */
static errcode_t read_piece(struct open_witness *w, uint64_t start,
			    uint64_t len, const unsigned char **bytes)
{
	uint64_t a = w->align;
	uint64_t s = start - start % a;
	uint64_t e = (start + len + a - 1) / a * a;
	uint64_t done = 0;
	ssize_t got;

	if (e - s > w->buf_len) {
		free(w->buf);
		w->buf = NULL;
		if (posix_memalign((void **)&w->buf, 4096, e - s))
			return ENOMEM;
		w->buf_len = e - s;
	}
	while (done < e - s) {
		got = pread(w->fd, w->buf + done, e - s - done,
			    (off_t)(s + done));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return errno;
		if (got == 0)
			return EXT2_ET_SHORT_READ;
		done += (uint64_t)got;
	}
	*bytes = w->buf + (start - s);
	return 0;
}

/*
 * Range @r read piece by piece: copied to @out, or (@out NULL) compared
 * with @was, *@at the first byte of it that differs (left as it was when
 * none does).
 */
static errcode_t read_range(struct open_witness *w,
			    const struct witness_range *r, unsigned char *out,
			    const unsigned char *was, uint64_t *at)
{
	const unsigned char *p = NULL;
	uint64_t off, n, k;
	errcode_t err;

	for (off = 0; off < r->len; off += n) {
		n = r->len - off < WITNESS_PIECE ? r->len - off : WITNESS_PIECE;
		err = read_piece(w, r->start + off, n, &p);
		if (err)
			return err;
		if (out) {
			memcpy(out + off, p, n);
			continue;
		}
		if (!memcmp(p, was + off, n))
			continue;
		for (k = 0; p[k] == was[off + k]; k++)
			;
		*at = off + k;
		return 0;
	}
	return 0;
}

/*
 * Every range, counted in the result: into @out, or (@out NULL) compared
 * with the copy, *@r the first range that differs (NULL: none) and *@at
 * the byte of it.
 */
static errcode_t read_all(struct e2trim *t, struct open_witness *w,
			  unsigned char *out, const struct witness_range **r,
			  uint64_t *at)
{
	long long t0 = lib_mono_ns();
	uint64_t off = 0;
	unsigned int i;
	errcode_t err = 0;

	for (i = 0; i < w->n && !err; i++) {
		*at = UINT64_MAX;
		err = read_range(w, &w->r[i], out ? out + off : NULL,
				 w->copy + off, at);
		if (!err && !out && *at != UINT64_MAX) {
			*r = &w->r[i];
			break;
		}
		off += w->r[i].len;
	}
	w->last_ns = lib_mono_ns();
	w->cost_ns = w->last_ns - t0;
	t->res.witness_reads++;
	t->res.witness_bytes += w->total;
	t->res.witness_seconds += (double)w->cost_ns / 1e9;
	return err;
}

static errcode_t changed(struct e2trim *t, const struct witness_range *r,
			 uint64_t at, const char *when)
{
	return lib_fail(t, E2TRIM_ERR_CHANGED, "%s changed %s: byte %llu "
			"of it, at byte %llu of the target", r->what, when,
			(unsigned long long)at,
			(unsigned long long)(r->start + at));
}

/*
 * The copy as libext2fs holds it, where it holds the bytes as read
 * (little-endian hosts): the superblock, then the descriptor blocks in
 * order, which is the order of the ranges; the MMP block (not kept by
 * libext2fs) read now.  This spares a second read of the descriptors
 * (7.5 MiB on a 15 TiB filesystem), and the first look then compares the
 * device with the very bytes the plan was made from.  0 when it cannot.
 */
static int from_libext2fs(struct e2trim *t, struct open_witness *w,
			  errcode_t *err)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t desc = (uint64_t)t->fs->desc_blocks * t->fs->blocksize;
	uint64_t off = SUPERBLOCK_SIZE + desc;

	if (w->total < off)
		return 0;
	memcpy(w->copy, t->fs->super, SUPERBLOCK_SIZE);
	memcpy(w->copy + SUPERBLOCK_SIZE, t->fs->group_desc, desc);
	*err = 0;
	if (w->total > off)	/* the MMP block, the last range */
		*err = read_range(w, &w->r[w->n - 1], w->copy + off,
				  NULL, NULL);
	w->last_ns = lib_mono_ns();
	return 1;
#else
	(void)t;
	(void)w;
	(void)err;
	return 0;
#endif
}

errcode_t witness_take(struct e2trim *t)
{
	const struct witness_range *r;
	struct open_witness *w;
	uint64_t at;
	unsigned int i;
	errcode_t err;

	if (t->fd < 0 || !t->fs || t->witness)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return lib_fail(t, E2TRIM_ERR_NO_MEMORY, NULL);
	t->witness = w;
	w->fd = t->fd;
	w->align = 1;
	err = list_ranges(t, w);
	for (i = 0; i < w->n; i++)
		w->total += w->r[i].len;
	if (!err && t->is_blkdev)
		err = direct_fd(t, w);
	if (!err)
		w->copy = malloc(w->total);
	if (!err && !w->copy)
		err = ENOMEM;
	if (!err && from_libext2fs(t, w, &err))
		return err ? lib_fail_cause(t, E2TRIM_ERR_OPEN_FS, err,
					    "while reading the MMP block") : 0;
	if (!err)
		err = read_all(t, w, w->copy, &r, &at);
	if (err)
		return lib_fail_cause(t, E2TRIM_ERR_OPEN_FS, err,
				      "while reading the superblock and "
				      "group descriptors again");
	return 0;
}

/*
 * Read again and compare: 0 and *@r the first range that changed (NULL:
 * none), or the read's error.  Nothing recorded in the handle.
 */
static errcode_t look(struct e2trim *t, const struct witness_range **r,
		      uint64_t *at)
{
	*r = NULL;
	return read_all(t, t->witness, NULL, r, at);
}

errcode_t witness_look(struct e2trim *t)
{
	const struct witness_range *r;
	uint64_t at = 0;
	errcode_t err;

	if (!t->witness)
		return 0;
	err = look(t, &r, &at);
	if (err == ENOMEM)
		return lib_fail(t, E2TRIM_ERR_NO_MEMORY, NULL);
	if (err)
		return lib_fail_cause(t, E2TRIM_ERR_SCAN, err,
				      "while reading the superblock and "
				      "group descriptors again");
	return r ? changed(t, r, at, "since e2trim read it") : 0;
}

errcode_t witness_explains(struct e2trim *t, errcode_t err)
{
	const struct witness_range *r;
	uint64_t at = 0;

	if (!err || err == E2TRIM_ERR_INTERRUPTED || !t->witness ||
	    look(t, &r, &at) || !r)
		return err;
	return changed(t, r, at, "since e2trim read it");
}

errcode_t witness_look_now_and_then(struct e2trim *t)
{
	struct open_witness *w = t->witness;

	if (!w)
		return 0;
	if (lib_mono_ns() < lib_next_look(w->last_ns, w->cost_ns,
					  WITNESS_EVERY_NS, WITNESS_COST_RATIO))
		return 0;
	return witness_look(t);
}

void witness_free(struct e2trim *t)
{
	struct open_witness *w = t->witness;

	if (!w)
		return;
	if (w->own_fd)
		close(w->fd);
	free(w->copy);
	free(w->buf);
	free(w->r);
	free(w);
	t->witness = NULL;
}
