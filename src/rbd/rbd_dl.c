// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbd_dl.c - librbd and librados, loaded on first use (see rbd_dl.h)
 *
 * As nbd_dl.c does for libnbd: the table of functions is filled once
 * under pthread_once and never changed after; the libraries stay loaded.
 * The declarations below are librados' and librbd's C API (stable since
 * Mimic; Debian 12 has 16.2) are in rbd_dl_api.h.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "rbd_dl.h"
#include "rbd_dl_api.h"
#include "rbd_dl_int.h"



static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *load_error;
static char dl_error[256];

#define SYM(lib, field, name) \
	(*(void **)&e2t_rbd_fn.field = dlsym(lib, name)) != NULL

static void load(void)
{
	void *rados = dlopen("librados.so.2", RTLD_NOW | RTLD_LOCAL);
	void *rbd = rados ? dlopen("librbd.so.1", RTLD_NOW | RTLD_LOCAL) : NULL;

	if (!rbd) {
		const char *e = dlerror();

		snprintf(dl_error, sizeof(dl_error), "%s",
			 e ? e : "cannot load librbd.so.1");
		load_error = dl_error;
		return;
	}
	if (!(SYM(rados, create, "rados_create") &&
	      SYM(rados, conf_read_file, "rados_conf_read_file") &&
	      SYM(rados, conf_set, "rados_conf_set") &&
	      SYM(rados, connect, "rados_connect") &&
	      SYM(rados, shutdown, "rados_shutdown") &&
	      SYM(rados, ioctx_create, "rados_ioctx_create") &&
	      SYM(rados, ioctx_set_namespace, "rados_ioctx_set_namespace") &&
	      SYM(rados, ioctx_destroy, "rados_ioctx_destroy") &&
	      SYM(rados, rados_stat, "rados_stat") &&
	      SYM(rados, last_version, "rados_get_last_version") &&
	      SYM(rados, unlock, "rados_unlock") &&
	      SYM(rados, obj_lockers, "rados_list_lockers") &&
	      SYM(rbd, open_read_only, "rbd_open_read_only") &&
	      SYM(rbd, close, "rbd_close") &&
	      SYM(rbd, open, "rbd_open") &&
	      SYM(rbd, read, "rbd_read") &&
	      SYM(rbd, get_features, "rbd_get_features") &&
	      SYM(rbd, get_id, "rbd_get_id") &&
	      SYM(rbd, lock_acquire, "rbd_lock_acquire") &&
	      SYM(rbd, lock_release, "rbd_lock_release") &&
	      SYM(rbd, is_lock_owner, "rbd_is_exclusive_lock_owner") &&
	      SYM(rbd, flush, "rbd_flush") &&
	      SYM(rbd, aio_create, "rbd_aio_create_completion") &&
	      SYM(rbd, aio_discard, "rbd_aio_discard") &&
	      SYM(rbd, aio_wait, "rbd_aio_wait_for_complete") &&
	      SYM(rbd, aio_return, "rbd_aio_get_return_value") &&
	      SYM(rbd, aio_release, "rbd_aio_release") &&
	      SYM(rbd, aio_read, "rbd_aio_read") &&
	      SYM(rbd, watchers_list, "rbd_watchers_list") &&
	      SYM(rbd, watchers_list_cleanup, "rbd_watchers_list_cleanup") &&
	      SYM(rbd, list_lockers, "rbd_list_lockers") &&
	      SYM(rbd, snap_list, "rbd_snap_list") &&
	      SYM(rbd, snap_list_end, "rbd_snap_list_end") &&
	      SYM(rbd, stat, "rbd_stat") &&
	      SYM(rbd, config_image_list, "rbd_config_image_list") &&
	      SYM(rbd, config_image_list_cleanup,
		  "rbd_config_image_list_cleanup") &&
	      SYM(rbd, get_size, "rbd_get_size") &&
	      SYM(rbd, diff_iterate2, "rbd_diff_iterate2")))
		load_error = "librbd.so.1 lacks a function e2trim needs "
			     "(Ceph 13 or later)";
	/* Ceph 15 and later; without it --zeroout is refused on RBD */
	*(void **)&e2t_rbd_fn.aio_write_zeroes = dlsym(rbd, "rbd_aio_write_zeroes");
}

errcode_t e2t_rbd_dl_connect(const char *conf, const char *id,
			 const char *const *key, const char *const *val,
			 int nopts, struct rbd_dl **out, char *why, size_t len)
{
	struct rbd_dl *d;
	errcode_t err;
	int i, rc;

	*out = NULL;
	pthread_once(&once, load);
	if (load_error) {
		snprintf(why, len, "%s", load_error);
		return ELIBACC;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(why, len, "out of memory");
		return ENOMEM;
	}
	rc = e2t_rbd_fn.create(&d->cluster, id);
	if (rc) {
		free(d);
		err = ceph_err(rc);
		snprintf(why, len, "librados: %s", strerror((int)err));
		return err;
	}
	rc = e2t_rbd_fn.conf_read_file(d->cluster, conf);
	for (i = 0; !rc && i < nopts; i++)
		rc = e2t_rbd_fn.conf_set(d->cluster, key[i], val[i]);
	if (!rc)
		rc = e2t_rbd_fn.connect(d->cluster);
	if (rc) {
		err = ceph_err(rc);
		snprintf(why, len, "librados: %s", strerror((int)err));
		e2t_rbd_fn.shutdown(d->cluster);
		free(d);
		return err;
	}
	*out = d;
	return 0;
}

/*
 * POOL[/NAMESPACE]/IMAGE[@SNAP], taken apart in @buf, opened into
 * *@io and *@image (both NULL on failure), @read_only or not.
 */
static errcode_t open_named(struct rbd_dl *d, const char *name, int read_only,
			    rados_ioctx_t *io, rbd_image_t *image)
{
	char buf[512], *pool = buf, *ns = NULL, *img, *snap, *p;
	int rc;

	*io = *image = NULL;
	if (snprintf(buf, sizeof(buf), "%s", name) >= (int)sizeof(buf))
		return ENAMETOOLONG;
	snap = strchr(buf, '@');
	if (snap)
		*snap++ = '\0';
	img = strchr(buf, '/');
	if (!img)
		return EINVAL;
	*img++ = '\0';
	p = strchr(img, '/');
	if (p) {
		*p++ = '\0';
		ns = img;
		img = p;
	}
	rc = e2t_rbd_fn.ioctx_create(d->cluster, pool, io);
	if (rc) {
		*io = NULL;
		return ceph_err(rc);
	}
	if (ns)
		e2t_rbd_fn.ioctx_set_namespace(*io, ns);
	rc = read_only ? e2t_rbd_fn.open_read_only(*io, img, image, snap) :
			 e2t_rbd_fn.open(*io, img, image, snap);
	if (rc) {
		*image = NULL;
		e2t_rbd_fn.ioctx_destroy(*io);
		*io = NULL;
		return ceph_err(rc);
	}
	return 0;
}

errcode_t e2t_rbd_dl_open(struct rbd_dl *d, const char *name)
{
	e2t_rbd_dl_close_image(d);
	return open_named(d, name, 1, &d->io, &d->image);
}

static void append(char *who, size_t len, const char *addr)
{
	size_t used = strlen(who);

	if (used < len)
		snprintf(who + used, len - used, "%s%s", used ? ", " : "",
			 addr);
}

errcode_t e2t_rbd_dl_watchers(struct rbd_dl *d, int *count, char *who,
			  size_t len)
{
	rbd_image_watcher_t w[64];
	size_t n = sizeof(w) / sizeof(w[0]), i;
	int rc = e2t_rbd_fn.watchers_list(d->image, w, &n);

	if (rc == -ERANGE) {	/* more than 64: all refused anyway */
		*count = (int)n;
		return 0;
	}
	if (rc < 0)
		return ceph_err(rc);
	for (i = 0; i < n; i++)
		append(who, len, w[i].addr);
	e2t_rbd_fn.watchers_list_cleanup(w, n);
	*count = (int)n;
	return 0;
}

errcode_t e2t_rbd_dl_lockers(struct rbd_dl *d, int *count, char *who,
			 size_t len, char *id, size_t idlen, char *owner,
			 size_t ownerlen)
{
	char tag[256], clients[4096], cookies[4096], addrs[4096], *p;
	size_t tl = sizeof(tag), cl = sizeof(clients), kl = sizeof(cookies);
	size_t al = sizeof(addrs);
	int excl, i;
	ssize_t n = e2t_rbd_fn.list_lockers(d->image, &excl, tag, &tl, clients, &cl,
				    cookies, &kl, addrs, &al);

	if (n < 0)
		return ceph_err((int)n);
	/* each list: strings one after another, each ended by a NUL */
	id[0] = owner[0] = '\0';
	if (n > 0 && strlen(cookies) < idlen && strlen(clients) < ownerlen) {
		snprintf(id, idlen, "%s", cookies);
		snprintf(owner, ownerlen, "%s", clients);
	}
	for (i = 0, p = addrs; i < n && p < addrs + al; i++) {
		append(who, len, p);
		p += strlen(p) + 1;
	}
	*count = (int)n;
	return 0;
}

errcode_t e2t_rbd_dl_snapshots(struct rbd_dl *d, int *count)
{
	int max = 0;
	int rc = e2t_rbd_fn.snap_list(d->image, NULL, &max);

	/* too small an array: it says how many it needs, one for the end */
	if (rc == -ERANGE) {
		*count = max > 0 ? max - 1 : 0;
		return 0;
	}
	if (rc < 0)
		return ceph_err(rc);
	*count = rc;
	return 0;
}

uint64_t e2t_rbd_dl_granularity(struct rbd_dl *d)
{
	rbd_config_option_t *o;
	rbd_image_info_t info;
	int max = 0, i;
	uint64_t g = 0;

	if (e2t_rbd_fn.config_image_list(d->image, NULL, &max) != -ERANGE || max <= 0)
		return 0;
	o = calloc(max, sizeof(*o));
	if (!o)
		return 0;
	if (e2t_rbd_fn.config_image_list(d->image, o, &max) == 0) {
		for (i = 0; i < max; i++)
			if (o[i].name && o[i].value &&
			    !strcmp(o[i].name, "rbd_discard_granularity_bytes"))
				g = strtoull(o[i].value, NULL, 10);
		e2t_rbd_fn.config_image_list_cleanup(o, max);
	}
	free(o);
	/*
	 * librbd cuts each discard per object and caps the granularity at
	 * the object size: a chunk wider than an object would reach into
	 * the next one, which a clone may not have (a discard there copies
	 * the parent's object up)
	 */
	if (g && !e2t_rbd_fn.stat(d->image, &info, sizeof(info)) && info.obj_size &&
	    info.obj_size < g)
		g = info.obj_size;
	return g;
}

errcode_t e2t_rbd_dl_newest_snap(struct rbd_dl *d, char *name, size_t len)
{
	rbd_snap_info_t *s;
	int max = 0, i, n, newest = -1;
	errcode_t err = 0;

	*name = '\0';
	n = e2t_rbd_fn.snap_list(d->image, NULL, &max);
	if (n >= 0 && max <= 0)
		return 0;	/* none */
	if (n != -ERANGE)
		return ceph_err(n);
	s = calloc(max, sizeof(*s));
	if (!s)
		return ENOMEM;
	n = e2t_rbd_fn.snap_list(d->image, s, &max);
	if (n < 0) {
		free(s);
		return ceph_err(n);
	}
	/* the newest is the highest id, whatever the order listed */
	for (i = 0; i < n; i++)
		if (s[i].name && (newest < 0 || s[i].id > s[newest].id))
			newest = i;
	if (newest >= 0 && snprintf(name, len, "%s", s[newest].name) >=
			   (int)len)
		err = ENAMETOOLONG;
	e2t_rbd_fn.snap_list_end(s);
	free(s);
	return err;
}

struct walk {
	errcode_t (*cb)(uint64_t off, uint64_t len, void *arg);
	void *arg;
	errcode_t err;		/* what stopped the walk, ours */
};

/*
 * librbd's callback: a negative return stops the walk (and is what
 * rbd_diff_iterate2 returns); @cb's code is kept in the walk.
 * conventions: librbd's callback convention, not ours
 */
static int one_extent(uint64_t off, size_t len, int exists, void *arg)
{
	struct walk *w = arg;

	if (!exists || !len)
		return 0;
	w->err = w->cb(off, len, w->arg);
	return w->err ? -ECANCELED : 0;
}

errcode_t e2t_rbd_dl_extents(struct rbd_dl *d, const char *from_snap, int parent,
			 errcode_t (*cb)(uint64_t off, uint64_t len, void *arg),
			 void *arg)
{
	struct walk w = { cb, arg, 0 };
	uint64_t size;
	int rc = e2t_rbd_fn.get_size(d->image, &size);

	if (rc)
		return ceph_err(rc);
	rc = e2t_rbd_fn.diff_iterate2(d->image, from_snap, 0, size, !!parent, 0,
			      one_extent, &w);
	if (w.err)
		return w.err;
	return rc ? ceph_err(rc) : 0;
}

/* ---- the image read and trimmed (see rbd_dl.h) ---- */

errcode_t e2t_rbd_dl_io_open(struct rbd_dl *d, const char *name, int read_only)
{
	e2t_rbd_dl_io_close(d);
	return open_named(d, name, read_only, &d->wio, &d->wimage);
}

errcode_t e2t_rbd_dl_io_size(struct rbd_dl *d, uint64_t *size)
{
	int rc = e2t_rbd_fn.get_size(d->wimage, size);

	return rc ? ceph_err(rc) : 0;
}

errcode_t e2t_rbd_dl_io_read(struct rbd_dl *d, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	while (len) {
		n = e2t_rbd_fn.read(d->wimage, off, len, buf);
		if (n < 0)
			return ceph_err((int)n);
		if (n == 0)
			return EIO;	/* past the end: the caller bounds it */
		buf = (char *)buf + n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* A completion, or ENOMEM / librbd's code. */
static errcode_t new_completion(void **comp)
{
	int rc = e2t_rbd_fn.aio_create(NULL, NULL, comp);

	return rc ? ceph_err(rc) : 0;
}

errcode_t e2t_rbd_dl_io_aio_read(struct rbd_dl *d, void *buf, size_t len,
			     uint64_t off, void **comp)
{
	errcode_t err = new_completion(comp);
	int rc;

	if (err)
		return err;
	rc = e2t_rbd_fn.aio_read(d->wimage, off, len, buf, *comp);
	if (rc) {
		e2t_rbd_fn.aio_release(*comp);
		*comp = NULL;
		return ceph_err(rc);
	}
	return 0;
}

errcode_t e2t_rbd_dl_io_discard(struct rbd_dl *d, uint64_t off, uint64_t len,
			    int zero, void **comp)
{
	errcode_t err;
	int rc;

	if (zero && !e2t_rbd_fn.aio_write_zeroes)
		return EOPNOTSUPP;
	err = new_completion(comp);
	if (err)
		return err;
	rc = zero ? e2t_rbd_fn.aio_write_zeroes(d->wimage, off, len, *comp, 0, 0) :
		    e2t_rbd_fn.aio_discard(d->wimage, off, len, *comp);
	if (rc) {
		e2t_rbd_fn.aio_release(*comp);
		*comp = NULL;
		return ceph_err(rc);
	}
	return 0;
}

int e2t_rbd_dl_io_can_zero(void)
{
	return e2t_rbd_fn.aio_write_zeroes != NULL;
}

errcode_t e2t_rbd_dl_io_wait(void *comp)
{
	ssize_t rc;

	e2t_rbd_fn.aio_wait(comp);
	rc = e2t_rbd_fn.aio_return(comp);
	e2t_rbd_fn.aio_release(comp);
	return rc < 0 ? ceph_err((int)rc) : 0;
}

errcode_t e2t_rbd_dl_io_flush(struct rbd_dl *d)
{
	int rc = e2t_rbd_fn.flush(d->wimage);

	return rc ? ceph_err(rc) : 0;
}

/*
 * The lock released (rbd_dl_lock.c) before the image is closed:
 * rbd_close() would release it too, but a failed release is then not
 * seen.  After a call that never came back (a cluster that does not
 * answer) nothing is touched: librbd's threads may still use it all,
 * and the process is about to end.
 */
void e2t_rbd_dl_io_close(struct rbd_dl *d)
{
	if (d->wimage && d->locked)
		e2t_rbd_dl_release(d);
	d->locked = 0;
	if (d->stuck)
		return;
	if (d->wimage)
		e2t_rbd_fn.close(d->wimage);
	d->wimage = NULL;
	if (d->wio)
		e2t_rbd_fn.ioctx_destroy(d->wio);
	d->wio = NULL;
}

void e2t_rbd_dl_close_image(struct rbd_dl *d)
{
	if (d->image)
		e2t_rbd_fn.close(d->image);
	d->image = NULL;
	if (d->io)
		e2t_rbd_fn.ioctx_destroy(d->io);
	d->io = NULL;
}

void e2t_rbd_dl_disconnect(struct rbd_dl *d)
{
	if (!d)
		return;
	e2t_rbd_dl_io_close(d);
	if (d->stuck)
		return;	/* see e2t_rbd_dl_io_close() */
	e2t_rbd_dl_close_image(d);
	e2t_rbd_fn.shutdown(d->cluster);
	free(d);
}
