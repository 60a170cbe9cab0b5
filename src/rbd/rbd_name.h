/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rbd_name.h - an RBD name taken apart, names kept apart from options
 *              (rbd_name.c; src/rbd/rbd.md says why)
 */
#ifndef E2TRIM_RBD_NAME_H
#define E2TRIM_RBD_NAME_H

#include <stddef.h>

struct rbd_spec;

/*
 * s->buf (what follows "rbd:") taken apart in place into s->name (its
 * escapes undone: POOL[/NAMESPACE]/IMAGE[@SNAP], which splits on '/'
 * and '@'), s->snap, s->conf, s->id and the other keys allowed.  0, or
 * 1 with @why saying what is wrong (a usage error).
 */
int e2t_rbd_name_parse(struct rbd_spec *s, char *why, size_t len);

#endif /* E2TRIM_RBD_NAME_H */
