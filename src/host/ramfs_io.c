// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramfs_io.c - libext2fs's reads of an image file on ramfs, holes left
 *              holes
 *
 * ramfs keeps a file only in the page cache and has no holes on record
 * (SEEK_DATA calls all of it data), yet reading a page it does not hold
 * allocates that page for good, and so does the kernel's readahead
 * around a read.  Checking a sparse image there read its holes (reserved
 * GDT blocks, uninitialized inode tables) and grew it: a dry run or a
 * refusal changed the file (issue 33).  O_DIRECT, which would read past
 * the cache, is not supported by ramfs.  So on ramfs every read goes
 * through a descriptor of our own with readahead off, page by page where
 * needed: a page mincore() finds resident is read, one it does not is a
 * hole and reads as zeroes, untouched.  The file is mapped only to ask
 * mincore(); the mapping itself is never read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "io_readonly.h"
#include "ramfs_io.h"

struct ramfs_priv {
	int fd;
	void *map;		/* the file, for mincore() only */
	uint64_t size_bytes;
	uint64_t page_bytes;
	uint64_t offset_bytes;	/* "offset=N": where the filesystem starts */
};

int ramfs_io_wanted(int fd)
{
	struct statfs sfs;
	struct stat st;

	return !fstatfs(fd, &sfs) && (unsigned long)sfs.f_type == RAMFS_MAGIC &&
	       !fstat(fd, &st) && S_ISREG(st.st_mode);
}

static void priv_free(struct ramfs_priv *p)
{
	if (p->map)
		munmap(p->map, p->size_bytes);
	if (p->fd >= 0)
		close(p->fd);
	free(p);
}

static errcode_t io_open(const char *name, int flags, io_channel *channel)
{
	struct ramfs_priv *p;
	struct stat st;
	errcode_t err;

	if (flags & IO_FLAG_RW)
		return EXT2_ET_OP_NOT_SUPPORTED;
	p = calloc(1, sizeof(*p));
	if (!p)
		return ENOMEM;
	p->page_bytes = (uint64_t)sysconf(_SC_PAGESIZE);
	p->fd = open(name, O_RDONLY | O_CLOEXEC);
	if (p->fd < 0 || fstat(p->fd, &st)) {
		err = errno;
		priv_free(p);
		return err;
	}
	/* no readahead: it would fill the holes around what is read */
	posix_fadvise(p->fd, 0, 0, POSIX_FADV_RANDOM);
	p->size_bytes = (uint64_t)st.st_size;
	if (p->size_bytes) {
		p->map = mmap(NULL, p->size_bytes, PROT_READ, MAP_SHARED,
			      p->fd, 0);
		if (p->map == MAP_FAILED) {
			err = errno;
			p->map = NULL;
			priv_free(p);
			return err;
		}
	}
	err = io_ro_channel_new(name, ramfs_io_manager, p, channel);
	if (err)
		priv_free(p);
	return err;
}

static errcode_t io_close(io_channel ch)
{
	if (--ch->refcount > 0)
		return 0;
	priv_free(ch->private_data);
	io_ro_channel_free(ch);
	return 0;
}

/* 1: the page at file byte @off is in the page cache (data) */
static int resident(const struct ramfs_priv *p, uint64_t off)
{
	unsigned char v = 1;
	uint64_t page = off - off % p->page_bytes;

	/* cannot tell: read it (as unix_io would) */
	if (mincore((char *)p->map + page, 1, &v))
		return 1;
	return v & 1;
}

/* [@off, @off + @len) of the file into @buf: holes as zeroes, unread */
static errcode_t read_bytes(void *priv, void *out, uint64_t len, uint64_t off)
{
	const struct ramfs_priv *p = priv;
	char *buf = out;
	uint64_t n;
	ssize_t r;

	while (len) {
		n = p->page_bytes - off % p->page_bytes;
		if (n > len)
			n = len;
		if (!resident(p, off)) {
			memset(buf, 0, n);
		} else {
			r = pread(p->fd, buf, n, (off_t)off);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return errno;
			if ((uint64_t)r != n)
				return EXT2_ET_SHORT_READ;
		}
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* A negative @count means -count bytes (the superblock is read so). */
static errcode_t io_read_blk64(io_channel ch, unsigned long long blk,
			       int count, void *buf)
{
	struct ramfs_priv *p = ch->private_data;
	struct io_ro_source src = { p->offset_bytes, p->size_bytes,
				    read_bytes, p };

	return io_ro_read_clipped(ch, blk, count, buf, &src);
}

/* Readahead is what fills holes: none. */
static errcode_t io_readahead(io_channel ch, unsigned long long blk,
			      unsigned long long count)
{
	(void)ch; (void)blk; (void)count;
	return 0;
}

static errcode_t io_set_option(io_channel ch, const char *option,
			       const char *arg)
{
	struct ramfs_priv *p = ch->private_data;

	return io_ro_offset_option(option, arg, &p->offset_bytes);
}

static struct struct_io_manager ramfs_io = {
	IO_RO_MANAGER("e2trim ramfs I/O Manager"),
	.open = io_open,
	.close = io_close,
	.set_option = io_set_option,
	.read_blk64 = io_read_blk64,
	.cache_readahead = io_readahead,
};

io_manager ramfs_io_manager = &ramfs_io;
