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
 *
 * On a terminal the line is fitted to its width (TIOCGWINSZ), one column
 * short of it so that it never wraps (a wrapped line leaves a dead line
 * behind at every redraw): a long name, such as a /dev/disk/by-id one,
 * keeps its end ("...-part1"), where such names differ; the rate goes
 * only when the name would be cut below NAME_KEEP bytes.  With -j 2 or more, targets run in threads at once, so one line
 * speaks for all of them:
 *
 *   e2trim: 1/4 done; ...sda1: trimming 30%; sdb1: verifying 12%
 *
 * A mutex keeps the threads' redraws and erasures whole.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "size.h"
#include "test_hooks.h"

#define REDRAW_NS 200000000LL	/* at most 5 lines a second */
#define SLOTS 64		/* -j's maximum */
#define LINE_MAX_BYTES 1024
#define NAME_KEEP 24		/* of a name cut short, before the rate goes */

/* -j: a running target's stage */
struct slot {
	const char *device;
	enum e2trim_stage stage;
	uint64_t done, total;
	int used;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread struct slot *mine;	/* this worker's target */

static struct {
	int several;			/* -j >= 2: one line for all */
	unsigned int targets, finished;	/* -j: of the run */
	struct slot slot[SLOTS];
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

static void clear_locked(void)
{
	if (!prog.drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	prog.drawn = 0;
}

void progress_clear(void)
{
	pthread_mutex_lock(&lock);
	clear_locked();
	pthread_mutex_unlock(&lock);
}

void progress_hold(void)
{
	pthread_mutex_lock(&lock);
	clear_locked();
}

void progress_release(void)
{
	pthread_mutex_unlock(&lock);
}

/* The terminal's width, or 0: not a terminal, or it does not say. */
static unsigned int term_cols(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) || !ws.ws_col)
		return 0;
	return ws.ws_col;
}

/*
 * @name in at most @room bytes (not less than 8): its end, after "...",
 * when it is longer, starting on a whole UTF-8 character.
 */
static void fit_name(const char *name, size_t room, char *buf, size_t len)
{
	size_t n = strlen(name);
	const char *tail;

	if (room < 8)
		room = 8;
	if (n <= room) {
		snprintf(buf, len, "%s", name);
		return;
	}
	tail = name + n - (room - 3);
	while ((*tail & 0xc0) == 0x80)
		tail++;
	snprintf(buf, len, "...%s", tail);
}

/* @line cut to @cols - 1 bytes (nothing cut when @cols is 0). */
static void fit_line(char *line, unsigned int cols)
{
	size_t n = strlen(line);

	if (!cols || n < cols)
		return;
	n = cols - 1;
	while (n && (line[n] & 0xc0) == 0x80)
		n--;
	line[n] = '\0';
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

static void put_line(const char *line, long long now)
{
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	prog.drawn = 1;
	prog.last_draw = now;
}

static void draw(uint64_t done, uint64_t total, long long now)
{
	char d[HUMAN_SIZE_LEN], tot[HUMAN_SIZE_LEN], rate[96], what[160];
	char name[LINE_MAX_BYTES], line[LINE_MAX_BYTES];
	unsigned int pct = total ? (unsigned int)(done * 100.0 / total) : 100;
	unsigned int cols = term_cols();
	size_t fixed;

	rate_text(done, total, now - prog.stage_start, rate, sizeof(rate));
	snprintf(what, sizeof(what), "%s %s of %s (%u%%)",
		 stage_name(prog.stage), size_to_human(done, d, sizeof(d)),
		 size_to_human(total, tot, sizeof(tot)), pct);
	/*
	 * "e2trim: " NAME ": " WHAT RATE, one column short of the width:
	 * the name is cut to its end, down to NAME_KEEP bytes with the rate,
	 * shorter once the rate has gone
	 */
	fixed = strlen(program_invocation_short_name) + 4 + strlen(what);
	if (cols && fixed + strlen(prog.device) + strlen(rate) >= cols &&
	    fixed + NAME_KEEP + strlen(rate) >= cols)
		rate[0] = '\0';
	fixed += strlen(rate);
	snprintf(name, sizeof(name), "%s", prog.device);
	if (cols && fixed + strlen(name) >= cols)
		fit_name(prog.device, cols > fixed + 1 ? cols - fixed - 1 : 0,
			 name, sizeof(name));
	snprintf(line, sizeof(line), "%s: %s: %s%s",
		 program_invocation_short_name, name, what, rate);
	fit_line(line, cols);
	put_line(line, now);
}

/* -j: "e2trim: D/N done; NAME: STAGE P%; ..." for the running targets */
static void draw_several(long long now)
{
	char line[LINE_MAX_BYTES], name[LINE_MAX_BYTES];
	unsigned int i, running = 0, cols = term_cols(), pct;
	size_t n, room = 0;
	const struct slot *sl;

	for (i = 0; i < SLOTS; i++)
		running += prog.slot[i].used && prog.slot[i].total;
	n = snprintf(line, sizeof(line), "%s: %u/%u done",
		     program_invocation_short_name, prog.finished, prog.targets);
	/* each name gets its share of what the stages leave */
	if (cols && running)
		room = cols > n + running * 20 ? (cols - n) / running - 20 : 0;
	for (i = 0; i < SLOTS && n < sizeof(line); i++) {
		sl = &prog.slot[i];
		if (!sl->used || !sl->total)
			continue;
		if (cols)
			fit_name(sl->device, room, name, sizeof(name));
		else
			snprintf(name, sizeof(name), "%s", sl->device);
		pct = (unsigned int)(sl->done * 100.0 / sl->total);
		n += snprintf(line + n, sizeof(line) - n, "; %s: %s %u%%", name,
			      stage_name(sl->stage), pct > 100 ? 100 : pct);
	}
	fit_line(line, cols);
	put_line(line, now);
}

/* -j: a worker's report, into its slot; the line for all, at most 5/s */
static void on_progress_several(enum e2trim_stage stage, uint64_t done_bytes,
				uint64_t total_bytes)
{
	long long now = now_ns();

	if (!mine)
		return;
	mine->stage = stage;
	mine->done = done_bytes;
	mine->total = total_bytes;
	if (prog.last_draw && now - prog.last_draw < REDRAW_NS)
		return;
	draw_several(now);
}

static void on_progress(void *priv, enum e2trim_stage stage,
			uint64_t done_bytes, uint64_t total_bytes)
{
	unsigned int delay_ms;
	long long now;
	int on;

	/* priv: the target's name, for the tests' pause point only */
	test_pause_at(stage_name(stage), priv, done_bytes);
	pthread_mutex_lock(&lock);
	on = prog.on;
	delay_ms = prog.delay_ms;
	pthread_mutex_unlock(&lock);
	if (!on)
		return;
	if (delay_ms)
		usleep(delay_ms * 1000u);
	pthread_mutex_lock(&lock);
	if (prog.several) {
		on_progress_several(stage, done_bytes, total_bytes);
		pthread_mutex_unlock(&lock);
		return;
	}
	now = now_ns();
	if (stage != prog.stage || done_bytes == 0) {
		prog.stage = stage;
		prog.stage_start = now;
		prog.last_draw = 0;
	}
	if (done_bytes >= total_bytes)
		/* the stage is over: its line goes, the next one replaces it */
		clear_locked();
	else if (!prog.last_draw || now - prog.last_draw >= REDRAW_NS)
		draw(done_bytes, total_bytes, now);
	pthread_mutex_unlock(&lock);
}

void progress_jobs(unsigned int targets)
{
	pthread_mutex_lock(&lock);
	prog.several = 1;
	prog.targets = targets;
	pthread_mutex_unlock(&lock);
}

void progress_target_done(void)
{
	pthread_mutex_lock(&lock);
	if (mine)
		memset(mine, 0, sizeof(*mine));
	mine = NULL;
	prog.finished++;
	pthread_mutex_unlock(&lock);
}

/* -j: a free slot for this worker's target (none: it is not shown) */
static void take_slot(const char *device)
{
	unsigned int i;

	for (i = 0; i < SLOTS && !mine; i++)
		if (!prog.slot[i].used) {
			mine = &prog.slot[i];
			mine->used = 1;
			mine->device = device;
			mine->total = 0;
		}
}

void progress_start(const struct cli_control *ctl, struct e2trim *t)
{
	const char *delay = getenv("E2TRIM_PROGRESS_DELAY_MS");
	int on;

	on = !(ctl->progress == PROGRESS_OFF ||
	       (ctl->progress == PROGRESS_AUTO &&
		(ctl->quiet || !isatty(STDERR_FILENO))));

	if (!on && !test_pause_armed())
		return;
	if (on) {
		pthread_mutex_lock(&lock);
		prog.on = 1;
		if (prog.several)
			take_slot(ctl->shown);
		else
			prog.device = ctl->shown;
		/* tests only: slow each report down to see the line move */
		prog.delay_ms = delay ? (unsigned int)strtoul(delay, NULL, 10)
				      : 0;
		pthread_mutex_unlock(&lock);
	}
	e2trim_set_progress(t, on_progress, (void *)ctl->device);
}
