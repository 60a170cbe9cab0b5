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

#endif /* E2TRIM_IO_READONLY_H */
