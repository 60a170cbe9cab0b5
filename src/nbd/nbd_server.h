/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nbd_server.h - which file the qemu-nbd e2trim started has open
 *                (nbd_server.c)
 */
#ifndef E2TRIM_NBD_SERVER_H
#define E2TRIM_NBD_SERVER_H

#include <sys/types.h>
#include <ext2fs/ext2fs.h>

#include "nbd_conn.h"

/*
 * Has the qemu-nbd e2trim started for @c the file (@dev, @ino) open?
 * 0 with *@held 1 or 0; ENOENT when that server cannot be found (not
 * e2trim's, or no /proc).
 */
errcode_t e2t_nbd_server_holds(const struct nbd_conn *c, dev_t dev, ino_t ino,
			   int *held);

#endif /* E2TRIM_NBD_SERVER_H */
