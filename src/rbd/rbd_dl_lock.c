// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbd_dl_lock.c - librbd's exclusive lock on the image e2trim trims:
 *                 taken, watched (features, header), released, and what
 *                 is left of it when the cluster stopped answering
 *
 * librados bounds its operations (rados_osd_op_timeout...), but a lock
 * request is a loop of them that can go on for ever, and a name may set
 * the timeouts to 0 (none).  So the lock is taken and released in a
 * thread of its own while e2trim waits for it, up to a bound and only
 * until a stop (d->stop): a call that never comes back leaves the
 * connection stuck, and nothing of it is touched again (its threads may
 * still use it) before the process ends.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rbd_dl_int.h"
#include "rbd_dl_lock.h"
#include "test_pause.h"

/* waits of e2trim's own: a lock request, a release at a stop */
#define LOCK_WAIT_S 60
#define RELEASE_STOPPED_WAIT_S 5

struct call {
	pthread_mutex_t lock;
	pthread_cond_t done_cv;
	int (*fn)(struct rbd_dl *d);
	struct rbd_dl *d;
	int rc, done, left;	/* left: the waiter gave up, the thread frees */
};

static void call_free(struct call *c)
{
	pthread_cond_destroy(&c->done_cv);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static void *call_thread(void *arg)
{
	struct call *c = arg;
	int rc = c->fn(c->d), left;

	pthread_mutex_lock(&c->lock);
	c->rc = rc;
	c->done = 1;
	left = c->left;
	pthread_cond_signal(&c->done_cv);
	pthread_mutex_unlock(&c->lock);
	if (left)
		call_free(c);
	return NULL;
}

/*
 * @fn(@d) in a thread, waited for up to @seconds and (@stoppable) until
 * a stop: its return value (librbd's convention), or -ETIMEDOUT / -EINTR
 * when it did not come back (then @d is stuck).
 */
static int bounded(struct rbd_dl *d, int (*fn)(struct rbd_dl *), int seconds,
		   int stoppable)
{
	struct call *c = calloc(1, sizeof(*c));
	struct timespec end, now, step;
	pthread_condattr_t ca;
	pthread_t tid;
	int rc;

	if (!c)
		return -ENOMEM;	/* conventions: librbd's -errno, as @fn's */
	pthread_mutex_init(&c->lock, NULL);
	/* the bound on the monotonic clock: a clock set meanwhile moves it not */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->done_cv, &ca);
	pthread_condattr_destroy(&ca);
	c->fn = fn;
	c->d = d;
	if (pthread_create(&tid, NULL, call_thread, c)) {
		call_free(c);
		return fn(d);	/* no thread: wait as librbd waits */
	}
	pthread_detach(tid);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += seconds;
	pthread_mutex_lock(&c->lock);
	for (;;) {
		if (c->done || (stoppable && d->stop && *d->stop))
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			break;
		/* a look at the stop flag 10 times a second */
		step = now;
		step.tv_nsec += 100000000;
		if (step.tv_nsec >= 1000000000) {
			step.tv_sec++;
			step.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&c->done_cv, &c->lock, &step);
	}
	if (c->done) {
		rc = c->rc;
		pthread_mutex_unlock(&c->lock);
		call_free(c);
		return rc;
	}
	c->left = 1;
	pthread_mutex_unlock(&c->lock);
	d->stuck = 1;
	rc = stoppable && d->stop && *d->stop ? EINTR : ETIMEDOUT;
	return -rc;	/* conventions: librbd's -errno, as @fn's */
}

void e2t_rbd_dl_set_stop(struct rbd_dl *d, const volatile sig_atomic_t *stop)
{
	d->stop = stop;
}

static int acquire(struct rbd_dl *d)
{
	return e2t_rbd_fn.lock_acquire(d->wimage, RBD_LOCK_MODE_EXCLUSIVE);
}

/* The lock just taken, as rbd lock ls lists it: ours is the only one. */
static void note_own_lock(struct rbd_dl *d)
{
	char tag[256], clients[512], cookies[512], addrs[512];
	size_t tl = sizeof(tag), cl = sizeof(clients), kl = sizeof(cookies);
	size_t al = sizeof(addrs);
	int excl;
	/*
	 * the header's lock as it is now, from the OSD: librbd's
	 * rbd_list_lockers() answers from what it read at its last refresh
	 */
	ssize_t n = e2t_rbd_fn.obj_lockers(d->wio, d->header, "rbd_lock", &excl,
					tag, &tl, clients, &cl, cookies, &kl,
					addrs, &al);

	d->cookie[0] = d->owner[0] = '\0';
	if (n != 1 || strlen(cookies) >= sizeof(d->cookie) ||
	    strlen(clients) >= sizeof(d->owner))
		return;
	snprintf(d->cookie, sizeof(d->cookie), "%s", cookies);
	snprintf(d->owner, sizeof(d->owner), "%s", clients);
}

errcode_t e2t_rbd_dl_io_lock(struct rbd_dl *d)
{
	uint64_t features = 0, ver;
	int rc = e2t_rbd_fn.get_features(d->wimage, &features);
	errcode_t err;

	if (rc)
		return ceph_err(rc);
	if (!(features & RBD_FEATURE_EXCLUSIVE_LOCK))
		return EOPNOTSUPP;
	/* the header's name, before anything is held */
	err = e2t_rbd_dl_io_header_version(d, &ver);
	if (err)
		return err;
	/* E2TRIM_TEST_PAUSE=rbd-lock: a test stalls the cluster here */
	test_pause_point("rbd-lock", d->header);
	/* stopped already: nothing asked, nothing left running */
	if (d->stop && *d->stop)
		return EINTR;
	rc = bounded(d, acquire, LOCK_WAIT_S, 1);
	if (rc)
		return ceph_err(rc);
	d->locked = 1;
	note_own_lock(d);
	return 0;
}

errcode_t e2t_rbd_dl_io_header_version(struct rbd_dl *d, uint64_t *ver)
{
	char id[64];
	uint64_t size;
	time_t mtime;
	/*
	 * The header is rbd_header.<image id> in the image's own pool.  Not
	 * built from block_name_prefix: with a separate data pool (rbd
	 * create --data-pool) that is rbd_data.<data pool id>.<image id>.
	 * A format 1 image (no id, no exclusive-lock) fails here.
	 */
	int rc = e2t_rbd_fn.get_id(d->wimage, id, sizeof(id));

	if (rc == -ERANGE)
		return ENAMETOOLONG;
	if (rc)
		return rc == -EINVAL ? EOPNOTSUPP : ceph_err(rc);
	snprintf(d->header, sizeof(d->header), "rbd_header.%s", id);
	rc = e2t_rbd_fn.rados_stat(d->wio, d->header, &size, &mtime);
	if (rc)
		return ceph_err(rc);
	*ver = e2t_rbd_fn.last_version(d->wio);
	return 0;
}

errcode_t e2t_rbd_dl_features(struct rbd_dl *d, uint64_t *features)
{
	int rc = e2t_rbd_fn.get_features(d->wimage, features);

	return rc ? ceph_err(rc) : 0;
}

int e2t_rbd_dl_io_owns_lock(struct rbd_dl *d)
{
	int owner = 0;

	return d->locked && !e2t_rbd_fn.is_lock_owner(d->wimage, &owner) && owner;
}

/*
 * Is a lock of ours still listed on the header?  1 (its cookie in
 * @cookie), 0, or -errno.  Ours: our cookie, or any lock this client
 * holds (client.N is this connection alone).  librbd updates the cookie
 * to its new watch when a watch fails and comes back (rewatch, then
 * set_cookie: the lock is kept), so the cookie noted when the lock was
 * taken may be an old one; the owner does not change.
 */
static int own_listed(struct rbd_dl *d, char *cookie, size_t len)
{
	char tag[256], clients[4096], cookies[4096], addrs[4096], *p, *c;
	size_t tl = sizeof(tag), cl = sizeof(clients), kl = sizeof(cookies);
	size_t al = sizeof(addrs);
	int excl, i;
	ssize_t n = e2t_rbd_fn.obj_lockers(d->wio, d->header, "rbd_lock", &excl,
					tag, &tl, clients, &cl, cookies, &kl,
					addrs, &al);

	if (n < 0)
		return (int)n;
	for (i = 0, p = cookies, c = clients; i < n && p < cookies + kl &&
	     c < clients + cl; i++) {
		if (!strcmp(p, d->cookie) || (d->owner[0] &&
					      !strcmp(c, d->owner))) {
			/* cut short, it would name no lock */
			if (strlen(p) >= len)
				return -ENAMETOOLONG;	/* conventions: librbd's -errno */
			snprintf(cookie, len, "%s", p);
			return 1;
		}
		p += strlen(p) + 1;
		c += strlen(c) + 1;
	}
	return 0;
}

/* Listed and removed: 0 when nothing of ours is left, or -errno. */
static int remove_own(struct rbd_dl *d)
{
	char cookie[sizeof(d->cookie)];
	int rc = own_listed(d, cookie, sizeof(cookie));

	if (rc <= 0)
		return rc;
	rc = e2t_rbd_fn.unlock(d->wio, d->header, "rbd_lock", cookie);
	return rc == -ENOENT ? 0 : rc;
}

/*
 * librbd's release; then, if a lock of ours is still on the header
 * (librbd lost the lock when its watch failed, a stalled cluster, and
 * so no longer releases it; or exclusive-lock was switched off), removed
 * by this same client, which is the lock's owner: no blocklisting, no
 * break.  A cluster that does not answer yet (librados's op timeout) is
 * asked again until it does, up to LOCK_WAIT_S, or until a stop: the
 * waiter bounds it too.  0 when nothing of ours is left.
 */
static int release(struct rbd_dl *d)
{
	time_t end = time(NULL) + LOCK_WAIT_S;
	int rc;

	e2t_rbd_fn.lock_release(d->wimage);
	if (!d->cookie[0] || !d->header[0])
		return 0;
	do
		rc = remove_own(d);
	while (rc == -ETIMEDOUT && !(d->stop && *d->stop) &&
	       time(NULL) < end);
	return rc;
}

errcode_t e2t_rbd_dl_release(struct rbd_dl *d)
{
	int rc;

	if (!d->locked || d->stuck)
		return d->stuck ? ETIMEDOUT : 0;
	rc = bounded(d, release, d->stop && *d->stop ?
				 RELEASE_STOPPED_WAIT_S : LOCK_WAIT_S, 0);
	d->locked = 0;
	return rc ? ceph_err(rc) : 0;
}

int e2t_rbd_dl_stuck(const struct rbd_dl *d)
{
	return d->stuck;
}

int e2t_rbd_dl_own_lock(const struct rbd_dl *d, const char **cookie,
		       const char **owner)
{
	*cookie = d->cookie;
	*owner = d->owner;
	return d->cookie[0] && d->owner[0];
}
