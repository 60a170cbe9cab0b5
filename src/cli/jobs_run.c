// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * jobs_run.c - run the targets: up to -j at once, never two on a disk
 *
 * One thread per job takes the first target, in the order given, whose
 * disk no other thread is working on.  Each writes into its target's
 * buffer; the main thread waits for the targets in order and prints
 * each one's lines as soon as it and all before it are done.  With one
 * job (or --fsck, whose e2fsck writes straight to stderr) the targets
 * run one after the other in the main thread, their lines going straight
 * out.
 *
 * SIGINT, SIGTERM, SIGHUP and SIGPIPE set cli_stop: every target stops
 * at its next stage, or, trimming, after its requests in flight
 * (e2trim_set_cancel), says what it has trimmed, releases what it holds,
 * and no other target starts.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "progress.h"
#include "jobs.h"
#include "test_hooks.h"

struct sched {
	const struct cli_control *ctl;
	job_fn run;
	struct job_list *l;
	pthread_mutex_t lock;
	pthread_cond_t changed;
};

/* How many running targets are on @r's disk (an unknown disk: none). */
static unsigned int running_on_disk(const struct job_list *l,
				    const struct job *r)
{
	unsigned int k, n = 0;

	for (k = 0; k < l->n; k++)
		n += l->v[k].running && l->v[k].disk.kind &&
		     l->v[k].disk.kind == r->disk.kind &&
		     l->v[k].disk.dev == r->disk.dev &&
		     l->v[k].disk.ino == r->disk.ino;
	return n;
}

/* One that may start now: pending, and its disk not busy; NULL if none. */
static struct job *next_target(struct sched *s, int *pending)
{
	struct job_list *l = s->l;
	unsigned int i;

	*pending = 0;
	for (i = 0; i < l->n; i++) {
		struct job *r = &l->v[i];

		if (r->running || r->done)
			continue;
		*pending = 1;
		if (!running_on_disk(l, r))
			return r;
	}
	return NULL;
}

static void *worker(void *arg)
{
	struct sched *s = arg;
	struct job *r;
	int pending;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		r = next_target(s, &pending);
		if (!pending)
			break;
		if (!r) {
			pthread_cond_wait(&s->changed, &s->lock);
			continue;
		}
		r->running = 1;
		/* counted, not assumed: the tests check it never exceeds 1 */
		test_note_disk_jobs(running_on_disk(s->l, r));
		test_disk_job(r->path, 1);
		pthread_mutex_unlock(&s->lock);

		out_buf_use(r->buf);
		s->run(s->ctl, r);
		out_buf_use(NULL);
		progress_target_done();

		pthread_mutex_lock(&s->lock);
		test_disk_job(r->path, 0);
		r->running = 0;
		r->done = 1;
		pthread_cond_broadcast(&s->changed);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

volatile sig_atomic_t cli_stop;
/* stop_watch(): the handler tells its thread through this pipe */
static int stop_pipe[2] = { -1, -1 };

/* the first signal is the one that says how the run ends */
static void on_signal(int sig)
{
	int e = errno;

	if (!cli_stop)
		cli_stop = sig;
	if (stop_pipe[1] >= 0 && write(stop_pipe[1], "", 1) < 0)
		stop_pipe[1] = -1;	/* told once is enough */
	errno = e;
}

/*
 * librbd and librados wait for a cluster that does not answer up to
 * their timeouts (60 s, or for ever when a name sets 0), and a lock
 * request can go on for ever: a stop (SIGINT, SIGTERM) that only sets
 * cli_stop would wait with them.  So for a run with an rbd: target, a
 * thread waits for the stop; if the run has not ended STOP_GRACE_S
 * seconds after it, it ends the process with 130 and says so.  What
 * librbd then still holds the cluster cannot be asked to release anyway
 * (it does not answer); a lock so left is refused by the next run with
 * the exact `rbd lock rm` to clear it.  Not for other targets: MMP, a
 * qemu-nbd, a temporary file are released only by the run's own end.
 */
#define STOP_GRACE_S 10

static void *stop_watch_thread(void *arg)
{
	char c;
	struct pollfd none = { .fd = -1 };

	(void)arg;
	while (read(stop_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	poll(&none, 0, STOP_GRACE_S * 1000);
	dprintf(STDERR_FILENO, "e2trim: still waiting for the Ceph cluster "
		"%d s after the stop was asked (it does not answer): stopped "
		"there, exit 130; what librbd held is released by the cluster "
		"(a lock left behind: rbd lock ls names it, and the next run "
		"says how to remove it)\n", STOP_GRACE_S);
	_exit(E2TRIM_EXIT_INTERRUPTED);
	return NULL;
}

void stop_watch(void)
{
	sigset_t all, old;
	pthread_t tid;

	if (stop_pipe[0] >= 0 || pipe(stop_pipe))
		return;
	/* the signals stay the main thread's (only it sets cli_stop) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (!pthread_create(&tid, NULL, stop_watch_thread, NULL))
		pthread_detach(tid);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * From the start of the run, whatever the stage, the output or the
 * number of targets, SIGINT, SIGTERM, SIGHUP and SIGPIPE only set
 * cli_stop: a signal must not end the process while it holds MMP (the
 * block would say "e2fsck is running" until tune2fs -f -E clear_mmp),
 * a qemu-nbd it started, qemu's image locks or a temporary file, nor
 * with buffered output unprinted.  Each stage that ends with cli_stop
 * set ends the target (e2trim.c), the library's own stages stop early
 * through e2trim_set_cancel(), and everything is released by
 * e2trim_free() before the process exits.  No SA_RESTART: a write
 * blocked on a reader that stopped reading (a pager, a full pipe) must
 * give up, or the stop would wait for it for ever; every wait for a
 * child and every read of a pipe retries on EINTR itself.
 */
void catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction sa, old;
	unsigned int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/*
		 * Ignored when e2trim started: nohup's SIGHUP, a caller's
		 * SIGPIPE (EPIPE is then close_stdout()'s); left so.  SIGINT
		 * and SIGTERM are caught whatever a shell did to a background
		 * job's SIGINT, as before.
		 */
		if ((sigs[i] == SIGHUP || sigs[i] == SIGPIPE) &&
		    !sigaction(sigs[i], NULL, &old) &&
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

/* Several jobs: workers run them, the main thread prints in order. */
static int run_parallel(struct sched *s, unsigned int jobs)
{
	pthread_t tid[64];
	unsigned int i, started = 0;

	for (i = 0; i < s->l->n; i++) {
		s->l->v[i].buf = out_buf_new();
		if (!s->l->v[i].buf)
			return -1;
	}
	progress_jobs(s->l->n);
	for (i = 0; i < jobs && i < 64; i++) {
		/* signals go to the main thread, which only waits */
		if (pthread_create(&tid[i], NULL, worker, s))
			break;
		started++;
	}
	if (!started)
		return -1;
	for (i = 0; i < s->l->n; i++) {
		pthread_mutex_lock(&s->lock);
		while (!s->l->v[i].done)
			pthread_cond_wait(&s->changed, &s->lock);
		pthread_mutex_unlock(&s->lock);
		/* the line for all targets goes while their lines come */
		progress_hold();
		out_buf_print(s->l->v[i].buf);
		progress_release();
	}
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	return 0;
}

static int exit_code(const struct job_list *l)
{
	unsigned int i, failed = 0;

	/*
	 * SIGPIPE: the reader went away (`e2trim --list IMG | head -1`) and
	 * the output is cut short, an error (1) whatever the targets did, as
	 * close_stdout() says of EPIPE when SIGPIPE is ignored.  SIGINT,
	 * SIGTERM, SIGHUP: a target cut short exits 130.
	 */
	if (cli_stop == SIGPIPE)
		return E2TRIM_EXIT_ERROR;
	/* one target: its own code (130 if the stop cut it short) */
	if (l->n == 1)
		return l->v[0].out.exit_code;
	if (cli_stop)
		return E2TRIM_EXIT_INTERRUPTED;
	for (i = 0; i < l->n; i++)
		failed += l->v[i].out.exit_code != 0;
	if (!failed)
		return E2TRIM_EXIT_OK;
	return failed == l->n ? E2TRIM_EXIT_ALL_FAILED :
				E2TRIM_EXIT_SOME_FAILED;
}

int jobs_run(const struct cli_control *ctl, struct job_list *l,
		job_fn run)
{
	struct sched s = { .ctl = ctl, .run = run, .l = l,
			   .lock = PTHREAD_MUTEX_INITIALIZER,
			   .changed = PTHREAD_COND_INITIALIZER };
	unsigned int i, jobs = ctl->jobs ? ctl->jobs : 1;
	int code;

	if (ctl->fsck != FSCK_NONE)
		jobs = 1;
	if (jobs > l->n)
		jobs = l->n;
	if (jobs <= 1 || run_parallel(&s, jobs)) {
		/* one at a time (or threads could not start): in order */
		for (i = 0; i < l->n; i++) {
			if (l->v[i].done)
				continue;
			if (l->v[i].buf) {
				out_buf_use(l->v[i].buf);
				run(ctl, &l->v[i]);
				out_buf_use(NULL);
				out_buf_print(l->v[i].buf);
			} else {
				run(ctl, &l->v[i]);
			}
			l->v[i].done = 1;
		}
	}
	test_report_disk_jobs();
	code = exit_code(l);
	if (ctl->json)
		json_document(ctl, l, code);
	return code;
}
