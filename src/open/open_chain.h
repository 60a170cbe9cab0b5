/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open_chain.h - the files a VM image names (data file, backing chain),
 *                gated as targets (open_chain.c)
 */
#ifndef E2TRIM_OPEN_CHAIN_H
#define E2TRIM_OPEN_CHAIN_H

#include "e2trim_int.h"

/*
 * Every file the qcow2 image on @fd (t->path) names passes the gates of
 * a target: a plain name (else 3), a regular file (3), not mounted (10),
 * not behind a loop device (10); the data file owned by the image's
 * owner (3) and held by no other qemu (26), a backing file held by no
 * other writer (26).  @reopen: the walk before the writable server,
 * without the lock test.  0, or the code with its particulars.
 */
errcode_t open_chain_check(struct e2trim *t, int fd, int reopen);

/*
 * Does the data file the header on @fd names still resolve to the file
 * open on @data_fd (1; also when it names none), or to another (0)?
 */
int open_chain_same_data_file(const struct e2trim *t, int fd, int data_fd);

#endif /* E2TRIM_OPEN_CHAIN_H */
