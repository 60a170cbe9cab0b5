// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_uring.c - the io_uring back end when the ring itself fails
 *
 * The ring is real, but every discard is turned into a NOP as it is
 * submitted (it completes at once, with 0), and io_uring_submit() and
 * the wait inside io_uring_wait_cqe() (liburing's __io_uring_get_cqe)
 * are wrapped (-Wl,--wrap) to fail when told.  Whatever fails:
 *  - every request is accounted for: target_finish() returns, and the
 *    first failure is t->error.  A wait that nothing can end (every
 *    request handed to the kernel has completed and been reaped) fails
 *    at once, in the wrapped wait: no clock decides it;
 *  - no byte is counted as trimmed unless its completion said so;
 *  - a transient -EBUSY from submit is retried, and costs nothing.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <setjmp.h>
#include <cmocka.h>

#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

#include "target.h"
#include "target_uring.h"

#define LEN 4096

#ifdef HAVE_LIBURING

static struct {
	int submits, waits;
	unsigned int handed;	/* entries the kernel took, in all */
	int submit_fail_from, submit_fail_times, submit_rc;
	int wait_fail_at;
	int defer;		/* submit only when waiting */
} fx;

int __real_io_uring_submit(struct io_uring *ring);
int __wrap_io_uring_submit(struct io_uring *ring);
int __real___io_uring_get_cqe(struct io_uring *ring,
			      struct io_uring_cqe **cqe_ptr, unsigned submit,
			      unsigned wait_nr, sigset_t *sigmask);
int __wrap___io_uring_get_cqe(struct io_uring *ring,
			      struct io_uring_cqe **cqe_ptr, unsigned submit,
			      unsigned wait_nr, sigset_t *sigmask);

/* The entries not yet handed to the kernel become NOPs, same user_data. */
static void make_nops(struct io_uring *ring)
{
	unsigned int i;

	for (i = ring->sq.sqe_head; i != ring->sq.sqe_tail; i++) {
		struct io_uring_sqe *sqe =
			&ring->sq.sqes[i & *ring->sq.kring_mask];
		__u64 data = sqe->user_data;

		io_uring_prep_nop(sqe);
		sqe->user_data = data;
	}
}

/* the pending entries as NOPs, handed to the kernel and counted */
static int submit_nops(struct io_uring *ring)
{
	int rc;

	make_nops(ring);
	rc = __real_io_uring_submit(ring);
	if (rc > 0)
		fx.handed += (unsigned int)rc;
	return rc;
}

/*
 * A wait that would never end: no completion is ready and every entry
 * the kernel took has posted its completion (a NOP completes as it is
 * submitted).  The code under test waits for a request it lost.
 */
static void fail_if_lost(struct io_uring *ring)
{
	unsigned int posted = __atomic_load_n(ring->cq.ktail, __ATOMIC_ACQUIRE);

	if (!io_uring_cq_ready(ring) && posted == fx.handed)
		fail_msg("a wait with no request in flight (%u handed, %u "
			 "completed): a request was lost", fx.handed, posted);
}

int __wrap_io_uring_submit(struct io_uring *ring)
{
	int n = ++fx.submits;

	if (fx.submit_fail_from && n >= fx.submit_fail_from &&
	    (!fx.submit_fail_times ||
	     n < fx.submit_fail_from + fx.submit_fail_times))
		return fx.submit_rc;
	if (fx.defer)
		return 1;	/* "consumed": the wait will submit it */
	return submit_nops(ring);
}

int __wrap___io_uring_get_cqe(struct io_uring *ring,
			      struct io_uring_cqe **cqe_ptr, unsigned submit,
			      unsigned wait_nr, sigset_t *sigmask)
{
	if (wait_nr && ++fx.waits == fx.wait_fail_at)
		return -EIO;
	if (wait_nr && fx.defer)
		submit_nops(ring);
	if (wait_nr)
		fail_if_lost(ring);
	return __real___io_uring_get_cqe(ring, cqe_ptr, submit, wait_nr,
					 sigmask);
}

static errcode_t no_request(struct target *t, uint64_t start, uint64_t len)
{
	(void)t;
	(void)start;
	(void)len;
	fail_msg("the io_uring target fell back to the ioctl");
	return EIO;
}

static const struct target_ops sync_ops = { .request = no_request };

/* the kernel gave no ring: the suite ends with 77, not a quiet pass */
static int no_ring;

/*
 * A guard only: a loop that never waits would hang the suite; after 10
 * minutes (the 40 NOPs take microseconds) it ends as a failure with a
 * message.  What a lost request does is caught by fail_if_lost().
 */
static void on_alarm(int sig)
{
	(void)sig;
	/* cmocka cannot fail from a handler: say so and end the test */
	static const char msg[] = "test_uring: hung (guard): no progress\n";

	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

/* @n requests of LEN bytes through a fresh io_uring target. */
static void run(struct target *t, int n)
{
	int i, rc = 0;

	memset(t, 0, sizeof(*t));
	t->name = "uring";
	t->fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	assert_true(t->fd >= 0);
	t->mode = TRIM_DISCARD;
	t->lim.granularity = 1;
	if (target_uring_init(t, &sync_ops)) {
		close(t->fd);
		no_ring = 1;
		skip();
	}
	signal(SIGALRM, on_alarm);
	alarm(600);
	for (i = 0; i < n && !rc; i++)
		rc = target_trim(t, (uint64_t)i * LEN, LEN);
	target_finish(t);
	alarm(0);
	target_close(t);
	close(t->fd);
}

static int reset(void **state)
{
	(void)state;
	memset(&fx, 0, sizeof(fx));
	return 0;
}

/* Nothing fails: the NOPs complete, every byte counts. */
static void test_all_complete(void **state)
{
	struct target t;

	(void)state;
	run(&t, 40);
	assert_int_equal(t.error, 0);
	assert_int_equal(t.stats.requests, 40);
	assert_int_equal(t.stats.bytes, 40 * LEN);
}

/* Submit fails for good from the 5th request on. */
static void test_submit_fails(void **state)
{
	struct target t;

	(void)state;
	fx.submit_fail_from = 5;
	fx.submit_rc = -EIO;
	run(&t, 10);
	assert_int_equal(t.error, EIO);
	assert_int_equal(t.error_start, 4 * LEN);
	assert_int_equal(t.stats.requests, 4);
	assert_int_equal(t.stats.bytes, 4 * LEN);
}

/* The last submit is refused once, -EBUSY: tried again, all done. */
static void test_submit_busy_once(void **state)
{
	struct target t;

	(void)state;
	fx.submit_fail_from = 10;
	fx.submit_fail_times = 1;
	fx.submit_rc = -EBUSY;
	run(&t, 10);
	assert_int_equal(t.error, 0);
	assert_int_equal(t.stats.requests, 10);
	assert_int_equal(t.stats.bytes, 10 * LEN);
}

/* The first request's wait fails: its fate is unknown, none counted. */
static void test_first_wait_fails(void **state)
{
	struct target t;

	(void)state;
	fx.defer = 1;
	fx.wait_fail_at = 1;
	run(&t, 10);
	assert_int_equal(t.error, EIO);
	assert_int_equal(t.error_start, 0);
	assert_int_equal(t.stats.requests, 0);
	assert_int_equal(t.stats.bytes, 0);
}

/*
 * A wait for a free slot fails with 32 requests in flight: only the
 * first (whose completion was seen) counts, and finish returns.
 */
static void test_later_wait_fails(void **state)
{
	struct target t;

	(void)state;
	fx.defer = 1;
	fx.wait_fail_at = 2;
	run(&t, 100);
	assert_int_equal(t.error, EIO);
	assert_int_equal(t.error_start, 1 * LEN);
	assert_int_equal(t.stats.requests, 1);
	assert_int_equal(t.stats.bytes, 1 * LEN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_all_complete, reset),
		cmocka_unit_test_setup(test_submit_fails, reset),
		cmocka_unit_test_setup(test_submit_busy_once, reset),
		cmocka_unit_test_setup(test_first_wait_fails, reset),
		cmocka_unit_test_setup(test_later_wait_fails, reset),
	};
	int rc;

	/* one test alone (the guard in on_alarm() ends the process) */
	if (getenv("TEST_FILTER"))
		cmocka_set_test_filter(getenv("TEST_FILTER"));

	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (!rc && no_ring) {
		printf("SKIP: test_uring: the kernel gives no io_uring\n");
		return 77;
	}
	return rc;
}

#else /* !HAVE_LIBURING */

int main(void)
{
	/* make deps installs liburing-dev: a build without it is not tested */
	printf("SKIP: test_uring: built without liburing\n");
	return 77;
}

#endif
