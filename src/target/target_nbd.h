/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target_nbd.h - trims through an NBD connection
 */
#ifndef E2TRIM_TARGET_NBD_H
#define E2TRIM_TARGET_NBD_H

#include <stdint.h>

#include "target_core.h"

/*
 * Prepare @t over the NBD connection @c (nbd_conn.h), trimming inward to
 * @cluster_bytes (the VM image's cluster; 0: unknown) or the server's
 * block size, whichever is larger.  EOPNOTSUPP for TRIM_SECURE and
 * TRIM_ZERO_FILL.
 */
struct nbd_conn;
errcode_t target_nbd_init(struct target *t, struct nbd_conn *c,
			  uint64_t cluster_bytes, enum trim_mode mode);

#endif /* E2TRIM_TARGET_NBD_H */
