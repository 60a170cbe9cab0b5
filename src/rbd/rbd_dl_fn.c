// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbd_dl_fn.c - the table of librados' and librbd's functions: filled
 *               once by rbd_dl.c's load(), read by rbd_dl.c and
 *               rbd_dl_lock.c (kept apart so that both sit above it)
 */
#include "rbd_dl_int.h"

struct ceph_fns e2t_rbd_fn;
