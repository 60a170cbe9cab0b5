/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rbd_int.h - an RBD image's name taken apart, inside the nbd family
 *             (image_rbd.c makes it, rbd_cmd.c reads it)
 */
#ifndef E2TRIM_RBD_INT_H
#define E2TRIM_RBD_INT_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

#define MAX_OPTS 16

struct rbd_dl;

struct rbd_spec {
	char *buf;			/* the copy the pointers below are in */
	char *qemu;			/* the name qemu-nbd gets (see below) */
	const char *name;		/* POOL[/NAMESPACE]/IMAGE[@SNAP] */
	const char *conf, *id;		/* NULL: rbd's defaults */
	const char *key[MAX_OPTS], *val[MAX_OPTS];
	int nopts;
	unsigned int snap : 1,
		     map_known : 1;
	uint64_t (*data)[2];		/* rbd diff's extents (e2t_rbd_spec_keep_map) */
	size_t ndata;
	struct rbd_dl *dl;		/* librbd's connection, once made */
	unsigned int dl_tried : 1;
	errcode_t dl_err;		/* why it could not be made, and words */
	char dl_why[256];
};

#endif /* E2TRIM_RBD_INT_H */
