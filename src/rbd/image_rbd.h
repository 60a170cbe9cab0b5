/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * image_rbd.h - a Ceph RBD image named in qemu's spelling,
 *               rbd:POOL/IMAGE[@SNAP][:conf=FILE][:id=USER][:KEY=VALUE]
 */
#ifndef E2TRIM_IMAGE_RBD_H
#define E2TRIM_IMAGE_RBD_H

#include <stddef.h>
#include <stdint.h>

#include "rbd_cmd.h"

struct rbd_spec;

/* Does @path name an RBD image ("rbd:...")? */
int e2t_rbd_is_spec(const char *path);

/*
 * Take @path apart; 0, or E2TRIM_ERR_USAGE with @why saying what is wrong
 * with it (ENOMEM also says so in @why).
 */
errcode_t e2t_rbd_spec_parse(const char *path, struct rbd_spec **out, char *why,
			 size_t len);

/* It names a snapshot (@SNAP): read-only. */
int e2t_rbd_spec_is_snap(const struct rbd_spec *s);

/*
 * The name qemu-nbd opens: @path with bounds on librados's waits for the
 * cluster, unless @path sets them (image_rbd.c).
 */
const char *e2t_rbd_spec_qemu_name(const struct rbd_spec *s);

void e2t_rbd_spec_free(struct rbd_spec *s);

/* POOL[/NAMESPACE]/IMAGE[@SNAP], as librbd opens it. */
const char *e2t_rbd_spec_name(const struct rbd_spec *s);

/* The cephx user the name connects as (id=..., else librados' "admin"). */
const char *e2t_rbd_spec_id(const struct rbd_spec *s);

/*
 * librbd's connection kept with @s (made on first use, with the options
 * the name gives): 0, or ELIBACC when librbd or librados cannot be
 * loaded, or librados' errno value, with words in @why.
 */
struct rbd_dl;
errcode_t e2t_rbd_spec_connect(struct rbd_spec *s, struct rbd_dl **out, char *why,
			   size_t len);

/*
 * Ask librbd (rbd_dl.c, one connection kept with @s) what @what says,
 * and the rbd command, all at once, what librbd could not tell.  An
 * error (as e2t_rbd_cmd_ask()'s, with words in @why) only when the clients
 * were asked and could not be told; what else could not be told is left
 * unknown (0).
 */
errcode_t e2t_rbd_ask(struct rbd_spec *s, unsigned int what, struct rbd_facts *f,
		  char *why, size_t len);

void e2t_rbd_facts_free(struct rbd_facts *f);

/* @f's data map kept with @s (freed with it), taken from @f. */
void e2t_rbd_spec_keep_map(struct rbd_spec *s, struct rbd_facts *f);

/* The map kept, as nbd_conn.h's data_map: 1, or 0 when there is none. */
int e2t_rbd_spec_data_map(const struct rbd_spec *s, const uint64_t (**map)[2],
		      size_t *n);

#endif /* E2TRIM_IMAGE_RBD_H */
