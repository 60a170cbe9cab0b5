/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * image_rbd.h - a Ceph RBD image named in qemu's spelling,
 *               rbd:POOL/IMAGE[@SNAP][:conf=FILE][:id=USER][:KEY=VALUE]
 */
#ifndef E2TRIM_IMAGE_RBD_H
#define E2TRIM_IMAGE_RBD_H

#include <stddef.h>
#include <stdint.h>
#include <e2trim_err.h>

struct rbd_spec;

/* Does @path name an RBD image ("rbd:...")? */
int rbd_is_spec(const char *path);

/*
 * Take @path apart; 0, or E2TRIM_ERR_USAGE with @why saying what is wrong
 * with it (ENOMEM also says so in @why).
 */
errcode_t rbd_spec_parse(const char *path, struct rbd_spec **out, char *why,
			 size_t len);

/* It names a snapshot (@SNAP): read-only. */
int rbd_spec_is_snap(const struct rbd_spec *s);

/*
 * The name qemu-nbd opens: @path with bounds on librados's waits for the
 * cluster, unless @path sets them (image_rbd.c).
 */
const char *rbd_spec_qemu_name(const struct rbd_spec *s);

void rbd_spec_free(struct rbd_spec *s);

/* Who has the image open: from rbd_clients(). */
struct rbd_clients {
	int watchers;		/* clients watching it (`rbd status`) */
	int lockers;		/* holding a lock, the exclusive lock too */
	char watcher[512];	/* their addresses, ", " between */
	char locker[512];
};

/*
 * 0; or with the rbd command's words in @why, the errno value of why it
 * could not be run, or E2TRIM_ERR_NBD_START when it failed.
 */
errcode_t rbd_clients(const struct rbd_spec *s, struct rbd_clients *c,
		      char *why, size_t len);

/*
 * The bytes the image (or its snapshot) holds in the cluster, as
 * `rbd du --exact` counts them.  0, or as rbd_clients() with @why
 * (ENODATA: rbd du named no size).
 */
errcode_t rbd_used_bytes(const struct rbd_spec *s, uint64_t *used, char *why,
			 size_t len);

/*
 * librbd's rbd_discard_granularity_bytes for the image: with
 * rbd_skip_partial_discard (the default) it drops what a discard does
 * not cover of each aligned chunk.  0 when it cannot be told.
 */
uint64_t rbd_discard_granularity(const struct rbd_spec *s);

#endif /* E2TRIM_IMAGE_RBD_H */
