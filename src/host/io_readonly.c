// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * io_readonly.c - the calls e2trim's read-only I/O managers share
 * (io_readonly.h)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io_readonly.h"

errcode_t io_ro_write_blk64(io_channel ch, unsigned long long blk, int count,
			    const void *buf)
{
	(void)ch; (void)blk; (void)count; (void)buf;
	return EXT2_ET_OP_NOT_SUPPORTED;
}

errcode_t io_ro_write_blk(io_channel ch, unsigned long blk, int count,
			  const void *buf)
{
	return io_ro_write_blk64(ch, blk, count, buf);
}

errcode_t io_ro_write_byte(io_channel ch, unsigned long off, int count,
			   const void *buf)
{
	(void)ch; (void)off; (void)count; (void)buf;
	return EXT2_ET_OP_NOT_SUPPORTED;
}

errcode_t io_ro_flush(io_channel ch)
{
	(void)ch;
	return 0;
}

errcode_t io_ro_offset_option(const char *option, const char *arg,
			      uint64_t *offset_bytes)
{
	unsigned long long v;
	char *end;

	if (strcmp(option, "offset") || !arg)
		return EXT2_ET_INVALID_ARGUMENT;
	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || *end || end == arg)
		return EXT2_ET_INVALID_ARGUMENT;
	*offset_bytes = v;
	return 0;
}

errcode_t io_ro_set_blksize(io_channel ch, int blksize)
{
	ch->block_size = blksize;
	return 0;
}

errcode_t io_ro_read_blk(io_channel ch, unsigned long blk, int count,
			 void *buf)
{
	return ch->manager->read_blk64(ch, blk, count, buf);
}

errcode_t io_ro_read_clipped(io_channel ch, unsigned long long blk, int count,
			     void *buf, const struct io_ro_source *src)
{
	uint64_t size = count < 0 ? (uint64_t)-(int64_t)count :
				    (uint64_t)count * ch->block_size;
	uint64_t off = src->offset_bytes + blk * ch->block_size, have;
	errcode_t rc;

	have = off >= src->end_bytes ? 0 :
	       src->end_bytes - off < size ? src->end_bytes - off : size;
	rc = have ? src->read(src->priv, buf, have, off) : 0;
	if (rc)
		return rc;
	if (have < size) {
		/* as unix_io: what lies past the end reads as zeroes */
		memset((char *)buf + have, 0, size - have);
		return EXT2_ET_SHORT_READ;
	}
	return 0;
}

errcode_t io_ro_channel_new(const char *name, io_manager manager, void *priv,
			    io_channel *out)
{
	io_channel ch = NULL;
	errcode_t err;

	err = ext2fs_get_memzero(sizeof(*ch), &ch);
	if (!err)
		err = ext2fs_get_mem(strlen(name) + 1, &ch->name);
	if (err) {
		ext2fs_free_mem(&ch);
		return err;
	}
	strcpy(ch->name, name);
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = manager;
	ch->block_size = 1024;
	ch->refcount = 1;
	ch->private_data = priv;
	*out = ch;
	return 0;
}

void io_ro_channel_free(io_channel ch)
{
	ext2fs_free_mem(&ch->name);
	ext2fs_free_mem(&ch);
}
