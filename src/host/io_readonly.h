/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * io_readonly.h - what every I/O manager of e2trim's own does alike
 *
 * e2trim's libext2fs I/O managers (NBD, RBD, ramfs) only read: the
 * calls that would write refuse, flushing has nothing to do, and the one
 * option they take is "offset=N", where the filesystem starts.
 */
#ifndef E2TRIM_IO_READONLY_H
#define E2TRIM_IO_READONLY_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>

/* e2trim writes no metadata: a write is a bug, refused. */
errcode_t io_ro_write_blk64(io_channel ch, unsigned long long blk, int count,
			    const void *buf);
errcode_t io_ro_write_blk(io_channel ch, unsigned long blk, int count,
			  const void *buf);
errcode_t io_ro_write_byte(io_channel ch, unsigned long off, int count,
			   const void *buf);
errcode_t io_ro_flush(io_channel ch);

/* "offset=N" into *@offset_bytes; any other option is refused. */
errcode_t io_ro_offset_option(const char *option, const char *arg,
			      uint64_t *offset_bytes);

/*
 * A channel named @name of @manager over @priv (the manager's own, still
 * the caller's to free if this fails), 1024-byte blocks, one reference.
 */
errcode_t io_ro_channel_new(const char *name, io_manager manager, void *priv,
			    io_channel *out);

/* The channel and its name; its private data is the manager's to free. */
void io_ro_channel_free(io_channel ch);

/* The block size libext2fs sets, kept in the channel. */
errcode_t io_ro_set_blksize(io_channel ch, int blksize);

/* read_blk: the manager's own read_blk64. */
errcode_t io_ro_read_blk(io_channel ch, unsigned long blk, int count,
			 void *buf);

/* Where a channel's bytes come from, for io_ro_read_clipped(). */
struct io_ro_source {
	uint64_t offset_bytes;		/* where the filesystem starts */
	uint64_t end_bytes;		/* the end of what can be read */
	/* [@off, @off + @len) into @buf, all of it, or an error */
	errcode_t (*read)(void *priv, void *buf, uint64_t len, uint64_t off);
	void *priv;
};

/*
 * read_blk64 of @count blocks at @blk (a negative @count means -count
 * bytes: the superblock is read so) from @src: what lies before its end
 * through @src->read, what lies past it zeroes and EXT2_ET_SHORT_READ, as
 * unix_io does.
 */
errcode_t io_ro_read_clipped(io_channel ch, unsigned long long blk, int count,
			     void *buf, const struct io_ro_source *src);

/*
 * The members every read-only manager fills alike, first in its
 * struct_io_manager: it then names its own open, close, read_blk64,
 * set_option and cache_readahead.
 */
#define IO_RO_MANAGER(title)					\
	.magic = EXT2_ET_MAGIC_IO_MANAGER,			\
	.name = (title),					\
	.set_blksize = io_ro_set_blksize,			\
	.read_blk = io_ro_read_blk,				\
	.write_blk = io_ro_write_blk,				\
	.flush = io_ro_flush,					\
	.write_byte = io_ro_write_byte,				\
	.write_blk64 = io_ro_write_blk64

#endif /* E2TRIM_IO_READONLY_H */
