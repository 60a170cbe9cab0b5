/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rbd_dl.h - librbd and librados, loaded on first use: what e2trim asks
 *            of an RBD image, and its bytes (read and trimmed)
 *
 * The rbd command costs ~0.15 s a question (start-up and reaching the
 * cluster); one connection in the process answers each in milliseconds.
 * No header of Ceph's is needed (Debian ships librbd1 without them): the
 * few functions and structs used are declared in rbd_dl.c.  When the
 * libraries cannot be loaded, an RBD image is refused (open_rbd.c); the
 * rbd command answers only what librbd could not tell (image_rbd.c).
 */
#ifndef E2TRIM_RBD_DL_H
#define E2TRIM_RBD_DL_H

#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <et/com_err.h>

struct rbd_dl;

/*
 * Connect as the rbd command would be told: @conf (NULL: librados'
 * search), @id (NULL: admin), Ceph options @key[i]=@val[i].  0; ELIBACC
 * when librbd/librados cannot be loaded, ENOMEM, or librados' errno
 * value when the cluster did not answer, with words in @why each time.
 */
errcode_t e2t_rbd_dl_connect(const char *conf, const char *id,
			 const char *const *key, const char *const *val,
			 int nopts, struct rbd_dl **out, char *why, size_t len);

/*
 * The image POOL[/NAMESPACE]/IMAGE[@SNAP] opened read-only: 0 or an
 * errno value (ENAMETOOLONG, EINVAL: no POOL/, or librbd's).
 */
errcode_t e2t_rbd_dl_open(struct rbd_dl *d, const char *name);

/*
 * Of the image open: its watchers' and lockers' addresses (", " between,
 * in @who) and how many (*@count); how many snapshots it has; librbd's
 * discard granularity as librbd applies it, capped at the object size
 * (0: not told).  Each 0 or librbd's errno value.
 */
errcode_t e2t_rbd_dl_watchers(struct rbd_dl *d, int *count, char *who,
			  size_t len);
/* e2t_rbd_dl_lockers(): also the first lock's id and owner (client.N), or "" */
errcode_t e2t_rbd_dl_lockers(struct rbd_dl *d, int *count, char *who,
			 size_t len, char *id, size_t idlen, char *owner,
			 size_t ownerlen);
errcode_t e2t_rbd_dl_snapshots(struct rbd_dl *d, int *count);
uint64_t e2t_rbd_dl_granularity(struct rbd_dl *d);

/*
 * The name of the image's newest snapshot (the highest id) into @name,
 * "" when it has none: 0, ENOMEM, ENAMETOOLONG or librbd's errno value.
 */
errcode_t e2t_rbd_dl_newest_snap(struct rbd_dl *d, char *name, size_t len);

/*
 * Every extent the image holds, in order (rbd_diff_iterate2, not whole
 * objects; from its creation, or what changed since snapshot
 * @from_snap; @parent: a clone's parent's too): @cb for each, which
 * returns 0 to go on.  0, librbd's errno value, or the code @cb stopped
 * the walk with.
 */
errcode_t e2t_rbd_dl_extents(struct rbd_dl *d, const char *from_snap, int parent,
			 errcode_t (*cb)(uint64_t off, uint64_t len, void *arg),
			 void *arg);

/*
 * The image e2trim reads and trims, open beside the questions' (which
 * come and go) until e2t_rbd_dl_io_close(): POOL[/NAMESPACE]/IMAGE[@SNAP],
 * @read_only (rbd_open_read_only: no watch, nothing written, not even
 * the object map) or read-write.  0 or an errno value, librbd's.
 */
errcode_t e2t_rbd_dl_io_open(struct rbd_dl *d, const char *name, int read_only);

/* Its size now (librbd refreshes it when the header changes). */
errcode_t e2t_rbd_dl_io_size(struct rbd_dl *d, uint64_t *size);

/* @len bytes at @off, all of them; 0 or librbd's errno value. */
errcode_t e2t_rbd_dl_io_read(struct rbd_dl *d, void *buf, size_t len,
			 uint64_t off);

/*
 * Start reading @len bytes at @off into @buf, or discarding (@zero:
 * writing zeroes over) them: *@comp is waited for with e2t_rbd_dl_io_wait(),
 * which releases it and says how it went.  0 or an errno value;
 * EOPNOTSUPP for @zero where librbd cannot (before Ceph 15).
 */
errcode_t e2t_rbd_dl_io_aio_read(struct rbd_dl *d, void *buf, size_t len,
			     uint64_t off, void **comp);
errcode_t e2t_rbd_dl_io_discard(struct rbd_dl *d, uint64_t off, uint64_t len,
			    int zero, void **comp);
int e2t_rbd_dl_io_can_zero(void);
errcode_t e2t_rbd_dl_io_wait(void *comp);

errcode_t e2t_rbd_dl_io_flush(struct rbd_dl *d);

/* The lock released, the image closed; nothing open is fine. */
void e2t_rbd_dl_io_close(struct rbd_dl *d);

void e2t_rbd_dl_close_image(struct rbd_dl *d);
void e2t_rbd_dl_disconnect(struct rbd_dl *d);

#include "rbd_dl_lock.h"

#endif /* E2TRIM_RBD_DL_H */
