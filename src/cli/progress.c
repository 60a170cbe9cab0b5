// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * progress.c - one updating line on stderr while verifying and trimming
 *
 *   e2trim: /dev/sdb1: trimming 1.2 GiB of 4.0 GiB (30%), 512 MiB/s, 0:05 left
 *
 * The library reports at most about a thousand times a stage; the line is
 * redrawn at most five times a second (and at each stage's end), with a
 * carriage return and "erase to end of line", so that a terminal shows
 * one line and a log file forced with --progress stays small.  Anything
 * else printed first erases the line (warnx_target() calls
 * progress_clear()), so messages never land in the middle of it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "size.h"
#include "test_hooks.h"

#define REDRAW_NS 200000000LL	/* at most 5 lines a second */

static struct {
	const char *device;
	enum e2trim_stage stage;
	long long stage_start;		/* ns, CLOCK_MONOTONIC */
	long long last_draw;
	int drawn;			/* a line is on the terminal */
	int on;				/* drawn at all (else tests' pause only) */
	unsigned int delay_ms;		/* tests: E2TRIM_PROGRESS_DELAY_MS */
} prog;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void progress_clear(void)
{
	if (!prog.drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	prog.drawn = 0;
}

static const char *stage_name(enum e2trim_stage stage)
{
	switch (stage) {
	case E2TRIM_STAGE_VERIFY:
		return "verifying";
	case E2TRIM_STAGE_ZERO_FILL:
		return "zero-filling";
	default:
		return "trimming";
	}
}

/* ", 512 MiB/s, 0:05 left" once the rate means something, else "". */
static void rate_text(uint64_t done, uint64_t total, long long elapsed,
		      char *buf, size_t len)
{
	char h[HUMAN_SIZE_LEN];
	double secs = elapsed / 1e9, rate;
	unsigned long long left;

	buf[0] = '\0';
	if (secs < 0.5 || done == 0)
		return;
	rate = done / secs;
	left = (unsigned long long)((total - done) / rate + 0.5);
	snprintf(buf, len, ", %s/s, %llu:%02llu left",
		 size_to_human((uint64_t)rate, h, sizeof(h)), left / 60,
		 left % 60);
}

static void draw(uint64_t done, uint64_t total, long long now)
{
	char d[HUMAN_SIZE_LEN], tot[HUMAN_SIZE_LEN], rate[96];
	unsigned int pct = total ? (unsigned int)(done * 100.0 / total) : 100;

	rate_text(done, total, now - prog.stage_start, rate, sizeof(rate));
	fprintf(stderr, "\r%s: %s: %s %s of %s (%u%%)%s\033[K",
		program_invocation_short_name, prog.device,
		stage_name(prog.stage), size_to_human(done, d, sizeof(d)),
		size_to_human(total, tot, sizeof(tot)), pct, rate);
	fflush(stderr);
	prog.drawn = 1;
	prog.last_draw = now;
}

static void on_progress(void *priv, enum e2trim_stage stage,
			uint64_t done_bytes, uint64_t total_bytes)
{
	long long now;

	/* priv: the target's name, for the tests' pause point only */
	test_pause_at(stage_name(stage), priv, done_bytes);
	if (!prog.on)
		return;
	if (prog.delay_ms)
		usleep(prog.delay_ms * 1000u);
	now = now_ns();
	if (stage != prog.stage || done_bytes == 0) {
		prog.stage = stage;
		prog.stage_start = now;
		prog.last_draw = 0;
	}
	if (done_bytes >= total_bytes) {
		/* the stage is over: its line goes, the next one replaces it */
		progress_clear();
		return;
	}
	if (prog.last_draw && now - prog.last_draw < REDRAW_NS)
		return;
	draw(done_bytes, total_bytes, now);
}

void progress_start(const struct cli_control *ctl, struct e2trim *t)
{
	const char *delay = getenv("E2TRIM_PROGRESS_DELAY_MS");
	int on;

	/* -j: targets write into buffers, one line cannot speak for all */
	on = !(ctl->progress == PROGRESS_OFF || ctl->jobs > 1 ||
	       (ctl->progress == PROGRESS_AUTO &&
		(ctl->quiet || !isatty(STDERR_FILENO))));

	if (!on && !test_pause_armed())
		return;
	/* a -j worker only gets here for the pause: prog stays untouched */
	if (on) {
		prog.on = 1;
		prog.device = ctl->device;
		/* tests only: slow each report down to see the line move */
		prog.delay_ms = delay ? (unsigned int)strtoul(delay, NULL, 10)
				      : 0;
	}
	e2trim_set_progress(t, on_progress, (void *)ctl->device);
}
