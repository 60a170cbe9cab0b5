/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open_mmp.h - the MMP block read at open (open_mmp.c)
 */
#ifndef E2TRIM_OPEN_MMP_H
#define E2TRIM_OPEN_MMP_H

#include "e2trim_int.h"

/*
 * Read the MMP block only: 0 when it is clean; a refusal (18), said on
 * @t; or 0 with *@io_err set when it could not be read at all.
 */
errcode_t open_mmp_check(struct e2trim *t, errcode_t *io_err);

/*
 * 0, or a refusal (12) when libext2fs cannot reach @t's MMP block: at an
 * offset inside an image, through NBD or librbd.
 */
errcode_t open_mmp_reachable(struct e2trim *t);

#endif /* E2TRIM_OPEN_MMP_H */
