/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open.h - open the filesystem and pass every safety gate, or refuse
 *
 * e2trim_open(), e2trim_probe() and e2trim_partitions() (e2trim.h) live
 * in open.c,
 * e2trim_check() in check.c; this is what the rest of the library needs
 * besides.
 */
#ifndef E2TRIM_OPEN_H
#define E2TRIM_OPEN_H

#include "e2trim_int.h"

/* Close everything open_steps() and e2trim_open() opened; @t stays. */
void open_close(struct e2trim *t);

#endif /* E2TRIM_OPEN_H */
