/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rbd_dl_int.h - inside rbd_dl*.c only: the table of
 *                librados' and librbd's functions (filled once by
 *                rbd_dl.c's load()), a connection, Ceph's codes made ours
 */
#ifndef E2TRIM_RBD_DL_INT_H
#define E2TRIM_RBD_DL_INT_H

#include <errno.h>
#include <signal.h>
#include <sys/types.h>
#include <et/com_err.h>

#include "rbd_dl_api.h"

struct ceph_fns {
	int (*create)(rados_t *, const char *);
	int (*conf_read_file)(rados_t, const char *);
	int (*conf_set)(rados_t, const char *, const char *);
	int (*connect)(rados_t);
	void (*shutdown)(rados_t);
	int (*ioctx_create)(rados_t, const char *, rados_ioctx_t *);
	void (*ioctx_set_namespace)(rados_ioctx_t, const char *);
	void (*ioctx_destroy)(rados_ioctx_t);
	int (*rados_stat)(rados_ioctx_t, const char *, uint64_t *, time_t *);
	uint64_t (*last_version)(rados_ioctx_t);
	int (*open_read_only)(rados_ioctx_t, const char *, rbd_image_t *,
			      const char *);
	int (*close)(rbd_image_t);
	int (*open)(rados_ioctx_t, const char *, rbd_image_t *, const char *);
	ssize_t (*read)(rbd_image_t, uint64_t, size_t, char *);
	int (*get_features)(rbd_image_t, uint64_t *);
	int (*get_id)(rbd_image_t, char *, size_t);
	int (*unlock)(rados_ioctx_t, const char *, const char *,
		      const char *);
	ssize_t (*obj_lockers)(rados_ioctx_t, const char *, const char *,
			       int *, char *, size_t *, char *, size_t *,
			       char *, size_t *, char *, size_t *);
	int (*lock_acquire)(rbd_image_t, int);
	int (*lock_release)(rbd_image_t);
	int (*is_lock_owner)(rbd_image_t, int *);
	int (*flush)(rbd_image_t);
	int (*aio_create)(void *, rbd_callback_t, rbd_completion_t *);
	int (*aio_discard)(rbd_image_t, uint64_t, uint64_t, rbd_completion_t);
	int (*aio_wait)(rbd_completion_t);
	ssize_t (*aio_return)(rbd_completion_t);
	void (*aio_release)(rbd_completion_t);
	int (*aio_read)(rbd_image_t, uint64_t, size_t, char *,
			rbd_completion_t);
	int (*aio_write_zeroes)(rbd_image_t, uint64_t, size_t,
				rbd_completion_t, int, int);
	int (*watchers_list)(rbd_image_t, rbd_image_watcher_t *, size_t *);
	void (*watchers_list_cleanup)(rbd_image_watcher_t *, size_t);
	ssize_t (*list_lockers)(rbd_image_t, int *, char *, size_t *, char *,
				size_t *, char *, size_t *, char *, size_t *);
	int (*snap_list)(rbd_image_t, rbd_snap_info_t *, int *);
	void (*snap_list_end)(rbd_snap_info_t *);
	int (*stat)(rbd_image_t, rbd_image_info_t *, size_t);
	int (*config_image_list)(rbd_image_t, rbd_config_option_t *, int *);
	void (*config_image_list_cleanup)(rbd_config_option_t *, int);
	int (*get_size)(rbd_image_t, uint64_t *);
	int (*diff_iterate2)(rbd_image_t, const char *, uint64_t, uint64_t,
			     uint8_t, uint8_t,
			     int (*)(uint64_t, size_t, int, void *), void *);
};
extern struct ceph_fns e2t_rbd_fn;

/*
 * librados and librbd return -errno (or a count); made ours once, here:
 * the errno value, positive.
 */
static inline errcode_t ceph_err(int rc)
{
	if (rc > 0)
		return EIO;
	return (errcode_t)-rc;	/* conventions: Ceph's -errno, made ours */
}

struct rbd_dl {
	rados_t cluster;
	rados_ioctx_t io;
	rbd_image_t image;		/* opened for a question, then closed */
	rados_ioctx_t wio;		/* the image read and trimmed (rbd_dl_io_*) */
	rbd_image_t wimage;
	unsigned int locked : 1,	/* rbd_lock_acquire() took it */
		     stuck : 1;		/* a call never came back: leave all */
	/* the stop flag e2trim's own waits look at (NULL: none) */
	const volatile sig_atomic_t *stop;
	/* the lock taken: its header, cookie and owner (rbd lock ls's) */
	char header[96], cookie[128], owner[64];
};

#endif /* E2TRIM_RBD_DL_INT_H */
