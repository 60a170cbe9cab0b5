/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_hooks.h - points where the test suite can hold e2trim still
 *
 * Only the tests set these variables; without them nothing here does
 * anything.  See test_hooks.c for the handshake.
 */
#ifndef E2TRIM_TEST_HOOKS_H
#define E2TRIM_TEST_HOOKS_H

#include <stdint.h>

#include "cli.h"

/* E2TRIM_TEST_PAUSE is set: progress reports must reach test_pause_at(). */
int test_pause_armed(void);

/*
 * A progress report of @stage_name for @device: with
 * E2TRIM_TEST_PAUSE=<stage>:<fifo>, the first report of that stage with
 * bytes done (per target) holds the thread until the test says go; with
 * <stage>@start:<fifo>, the stage's first report (nothing sent yet).
 */
void test_pause_at(const char *stage_name, const char *device,
		   uint64_t done_bytes);

/* Jobs now running on one disk (jobs_run.c, under its lock). */
void test_note_disk_jobs(unsigned int running_on_disk);

/*
 * A job on block device @path starts (@start 1) or ends (0), under
 * jobs_run.c's lock: its disk is found here again from sysfs, not taken
 * from job_list.c's key, so that a wrong key cannot hide two partitions
 * of one disk running at once.
 */
void test_disk_job(const char *path, int start);

/* With E2TRIM_TEST_DISK_JOBS set: the largest such number, on stderr. */
void test_report_disk_jobs(void);

#endif /* E2TRIM_TEST_HOOKS_H */
