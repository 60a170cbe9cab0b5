/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * progress.h - one updating line on stderr while verifying and trimming
 */
#ifndef E2TRIM_PROGRESS_H
#define E2TRIM_PROGRESS_H

#include "cli.h"

/*
 * Draw progress for @t if @ctl says so: --progress, or by default when
 * stderr is a terminal (and not -q); --no-progress never.
 */
void progress_start(const struct cli_control *ctl, struct e2trim *t);

/* Erase the line, if one is drawn, before anything else is printed. */
void progress_clear(void);

#endif /* E2TRIM_PROGRESS_H */
