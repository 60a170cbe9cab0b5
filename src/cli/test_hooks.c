// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_hooks.c - points where the test suite can hold e2trim still
 *
 * A test that signals e2trim in the middle of a trim must know that the
 * trim has started and has not ended; sleeping and hoping is not enough
 * on a busy machine.  E2TRIM_TEST_PAUSE=<stage>:<fifo> (stage as the
 * progress line names it: verifying, trimming, zero-filling) holds each
 * target at its first progress report of that stage with bytes done;
 * <stage>@start holds it at the stage's first report instead, where every
 * gate and the verification have passed and no request has gone out;
 * fsck@start holds --fsck once e2fsck has been started (fsck.c), with the
 * loop device or the VM image's mount in place; fsck-mount@start holds
 * it once a VM image's nbdfuse mount serves, before e2fsck is started:
 *
 *   1. it writes "<stage> <device>\n" into <fifo>;
 *   2. it reads one byte from <fifo>.go, and goes on.
 *
 * The test keeps both FIFOs open read-write (exec 3<>fifo 4<>fifo.go) so
 * that neither open blocks, reads one line per target it expects, does
 * what it wants (a kill), then writes one byte per held target.  A
 * signal while held is taken at once (its handler only records it) and
 * the read is retried, so the target goes on only once told to, and
 * then stops at its next look at the flag.
 *
 * E2TRIM_TEST_DISK_JOBS: print the largest number of targets that ever
 * ran at once on one disk (it must be 1, whatever the timing).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "test_hooks.h"

/* per thread: a -j worker runs one target at a time, each stage from 0 */
static __thread int armed_for_stage;
static __thread const char *held_start_of;
static unsigned int most_disk_jobs;

/* "<stage>:<fifo>" split; 0 if the variable is unset or malformed */
static int pause_spec(const char **fifo, size_t *stage_len)
{
	const char *v = getenv("E2TRIM_TEST_PAUSE");
	const char *colon = v ? strchr(v, ':') : NULL;

	if (!colon || colon == v || !colon[1])
		return 0;
	*fifo = colon + 1;
	*stage_len = (size_t)(colon - v);
	return 1;
}

int test_pause_armed(void)
{
	const char *fifo;
	size_t n;

	return pause_spec(&fifo, &n);
}

static int open_retry(const char *path, int flags)
{
	int fd;

	do
		fd = open(path, flags | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	return fd;
}

static void hold(const char *fifo, const char *stage, const char *device)
{
	char go[4096], c;
	ssize_t n;
	int fd;

	fd = open_retry(fifo, O_WRONLY);
	if (fd < 0 || dprintf(fd, "%s %s\n", stage, device) < 0) {
		/* a test that asked for a pause must not run on unheld */
		fprintf(stderr, "e2trim: E2TRIM_TEST_PAUSE: %s: %s\n", fifo,
			strerror(errno));
		_exit(99);
	}
	close(fd);
	snprintf(go, sizeof(go), "%s.go", fifo);
	fd = open_retry(go, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "e2trim: E2TRIM_TEST_PAUSE: %s: %s\n", go,
			strerror(errno));
		_exit(99);
	}
	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	close(fd);
}

#define AT_START "@start"

void test_pause_at(const char *stage_name, const char *device,
		   uint64_t done_bytes)
{
	const char *fifo, *spec = getenv("E2TRIM_TEST_PAUSE");
	size_t len, n = strlen(stage_name);
	int at_start;

	if (!pause_spec(&fifo, &len) || len < n || strncmp(stage_name, spec, n))
		return;
	at_start = len == n + strlen(AT_START) &&
		   !strncmp(spec + n, AT_START, strlen(AT_START));
	if (len != n && !at_start)
		return;
	if (at_start) {
		/* once per target: a later report may say 0 bytes again */
		if (done_bytes == 0 && held_start_of != device) {
			held_start_of = device;
			hold(fifo, stage_name, device ? device : "-");
		}
		return;
	}
	if (done_bytes == 0) {
		armed_for_stage = 1;
		return;
	}
	if (!armed_for_stage)
		return;
	armed_for_stage = 0;
	hold(fifo, stage_name, device ? device : "-");
}

void test_note_disk_jobs(unsigned int running_on_disk)
{
	if (running_on_disk > most_disk_jobs)
		most_disk_jobs = running_on_disk;
}

/* The whole disk under block device @path, 0 if it is none. */
static dev_t whole_disk_of(const char *path)
{
	unsigned int maj, min;
	char p[96];
	struct stat st;
	FILE *f;
	int n = 0;

	if (stat(path, &st) || !S_ISBLK(st.st_mode))
		return 0;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/partition",
		 major(st.st_rdev), minor(st.st_rdev));
	if (access(p, F_OK))
		return st.st_rdev;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/../dev",
		 major(st.st_rdev), minor(st.st_rdev));
	f = fopen(p, "r");
	if (f) {
		n = fscanf(f, "%u:%u", &maj, &min);
		fclose(f);
	}
	return n == 2 ? makedev(maj, min) : st.st_rdev;
}

#define DISK_JOBS_MAX 64
static dev_t running_disks[DISK_JOBS_MAX];

void test_disk_job(const char *path, int start)
{
	dev_t d;
	unsigned int i, n = 0;

	if (!getenv("E2TRIM_TEST_DISK_JOBS"))
		return;
	d = whole_disk_of(path);
	if (!d)
		return;
	for (i = 0; i < DISK_JOBS_MAX; i++) {
		if (start && !running_disks[i]) {
			running_disks[i] = d;
			start = 0;
		} else if (!start && running_disks[i] == d) {
			running_disks[i] = 0;
			return;
		}
		n += running_disks[i] == d;
	}
	test_note_disk_jobs(n);
}

void test_report_disk_jobs(void)
{
	if (getenv("E2TRIM_TEST_DISK_JOBS"))
		fprintf(stderr, "e2trim: most jobs at once on one disk: %u\n",
			most_disk_jobs);
}
