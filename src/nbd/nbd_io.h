/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nbd_io.h - a filesystem inside a VM image (qcow2, vmdk, ...) or behind
 *            an NBD server, read and trimmed through libnbd
 *
 * e2trim starts qemu-nbd itself (systemd socket activation: the server
 * lives exactly as long as the connection) or connects to a server that
 * runs already (an nbd:// URI).  libext2fs reads through e2t_nbd_io_manager,
 * the trims go through target_nbd.c.
 */
#ifndef E2TRIM_NBD_IO_H
#define E2TRIM_NBD_IO_H

#include <stddef.h>
#include <stdint.h>
#include <ext2fs/ext2fs.h>

#include "nbd_conn.h"

/* Outcome of nbd_conn_open_*(): why it failed, for the caller's code. */
enum nbd_open_fail {
	NBD_OPEN_OK = 0,
	NBD_OPEN_NO_MEMORY,
	NBD_OPEN_NO_LIBNBD,	/* libnbd.so.0 cannot be loaded */
	NBD_OPEN_LOCKED,	/* qemu's image lock: another process has it */
	NBD_OPEN_FAILED,	/* the server did not start or answer */
	NBD_OPEN_TMPDIR,	/* no file for its stderr in $TMPDIR */
};

/*
 * Start `qemu-nbd -f @format --discard=unmap --allocation-depth
 * [--read-only] @path` and
 * connect.  On failure @why gets the server's own words (its stderr) or
 * libnbd's.
 */
enum nbd_open_fail e2t_nbd_conn_open_image(struct nbd_conn **out,
				       const char *path, const char *format,
				       int read_only, char *why, size_t len);

/*
 * Stop the server e2t_nbd_conn_open_image() started for @c and start it
 * again on the same image, @read_only or not; @c stays valid (on
 * failure its handle is NULL: close it).
 */
enum nbd_open_fail e2t_nbd_conn_reopen_image(struct nbd_conn *c,
					 const char *path, const char *format,
					 int read_only, char *why, size_t len);

/*
 * Start the server @argv (NULL-terminated) through socket activation and
 * connect; it exits when the connection closes.
 */
enum nbd_open_fail e2t_nbd_conn_open_argv(struct nbd_conn **out, char **argv,
				      char *why, size_t len);

/* Connect to the server @uri names (nbd://, nbd+unix://...). */
enum nbd_open_fail e2t_nbd_conn_open_uri(struct nbd_conn **out, const char *uri,
				     char *why, size_t len);

/* Is @path an NBD URI rather than a file? */
int e2t_nbd_is_uri(const char *path);

/* Read @len bytes at @off of the export; 0 or an errno value. */
errcode_t e2t_nbd_conn_pread(struct nbd_conn *c, void *buf, size_t len,
			 uint64_t off);

/* Flush what the server caches (no-op if it cannot); 0 or an errno value. */
errcode_t e2t_nbd_conn_flush(struct nbd_conn *c);

/* Disconnect; a server e2trim started exits.  NULL is fine. */
void e2t_nbd_conn_close(struct nbd_conn *c);

/*
 * libext2fs's view of the export: open it with @c->name as the device
 * name (the connection's address, nothing global), "offset=N" as an
 * io option for a partition.  Reads only: every write fails.
 */
extern io_manager e2t_nbd_io_manager;

#endif /* E2TRIM_NBD_IO_H */
