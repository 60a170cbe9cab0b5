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

/*
 * -j 2 or more: @targets run in threads, and one line shows them all
 * (how many done, each running one's stage); each worker says when its
 * target is done.
 */
void progress_jobs(unsigned int targets);
void progress_target_done(void);

/* Erase the line and draw none until released: stderr is the caller's. */
void progress_hold(void);
void progress_release(void);

#endif /* E2TRIM_PROGRESS_H */
