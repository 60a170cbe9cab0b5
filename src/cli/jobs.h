/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobs.h - many filesystems in one run: the list built from the
 * command line (jobs.c) and run (jobs_run.c), the JSON document
 */
#ifndef E2TRIM_JOBS_H
#define E2TRIM_JOBS_H

#include <sys/types.h>

#include "cli.h"
#include "job_list.h"

/*
 * Every target the command line names, in order: the arguments, then
 * the lines of --targets-from; "?offset=N" split off, -p all expanded,
 * a target given twice marked.  Returns 0, or -1 when out of memory or
 * the --targets-from file cannot be read (said on stderr).
 */
int jobs_build(const struct cli_control *ctl, struct job_list *l);

/*
 * Run them all through @run (up to ctl->jobs at once, never two on one disk), print
 * each one's output in order, and the JSON document with --json.
 * Returns the exit code: a single target's own; for several, fstrim's:
 * 0 when all succeeded, 64 when some failed, 32 when all did; 130 when
 * interrupted.
 */
typedef void (*job_fn)(const struct cli_control *ctl,
			  struct job *r);
int jobs_run(const struct cli_control *ctl, struct job_list *l,
		job_fn run);

/* --json: the whole document on stdout (json.c). */
void json_document(const struct cli_control *ctl,
		   const struct job_list *l, int exit_code);

/*
 * The first of SIGINT, SIGTERM, SIGHUP, SIGPIPE (0: none): no new target
 * starts, none goes on.
 */
extern volatile sig_atomic_t cli_stop;

/* Those signals set cli_stop from now on (jobs_run.c, which owns it). */
void catch_signals(void);

/*
 * For a run with an RBD image: a stop that the run has not obeyed 10 s
 * later (librbd waiting for a cluster that does not answer) ends the
 * process with 130 (jobs_run.c).
 */
void stop_watch(void);

#endif /* E2TRIM_JOBS_H */
