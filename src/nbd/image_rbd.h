/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * image_rbd.h - a Ceph RBD image named in qemu's spelling,
 *               rbd:POOL/IMAGE[@SNAP][:conf=FILE][:id=USER][:KEY=VALUE]
 */
#ifndef E2TRIM_IMAGE_RBD_H
#define E2TRIM_IMAGE_RBD_H

#include <stddef.h>
#include <stdint.h>

struct rbd_spec;

/* Does @path name an RBD image ("rbd:...")? */
int rbd_is_spec(const char *path);

/*
 * Take @path apart; 0, or -1 with @why saying what is wrong with it
 * (ENOMEM also says so in @why).
 */
int rbd_spec_parse(const char *path, struct rbd_spec **out, char *why,
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

/* What rbd_ask() asks (RBD_ASK_*, or'ed) and what it found. */
#define RBD_ASK_CLIENTS		0x03	/* rbd status, rbd lock ls */
#define RBD_ASK_GRANULARITY	0x04	/* rbd config image list */
#define RBD_ASK_USED		0x08	/* rbd du --exact */
#define RBD_ASK_MAP		0x10	/* rbd diff (not for a snapshot) */

struct rbd_facts {
	struct rbd_clients clients;
	/*
	 * librbd's rbd_discard_granularity_bytes for the image: with
	 * rbd_skip_partial_discard (the default) it drops what a discard
	 * does not cover of each aligned chunk.  0 when it cannot be told.
	 */
	uint64_t granularity;
	/* the bytes the image (or its snapshot) holds, as rbd du --exact */
	uint64_t used_bytes;
	/*
	 * Where the image holds data, [start, end) in bytes, sorted and
	 * apart: rbd diff's exact extents (qemu's block status says whole
	 * 4 MiB objects).  Outside them the image reads zeroes and holds
	 * nothing to free.  Freed by rbd_facts_free().
	 */
	uint64_t (*data)[2];
	size_t ndata;
	unsigned int used_known : 1,
		     map_known : 1;
};

/*
 * Ask librbd (rbd_dl.c, one connection kept with @s) what @what says,
 * and the rbd command, all at once, what librbd could not tell.  -1 with the rbd
 * command's words in @why only when the clients were asked and could not
 * be told; what else could not be told is left unknown (0).
 */
int rbd_ask(struct rbd_spec *s, unsigned int what, struct rbd_facts *f,
	    char *why, size_t len);

void rbd_facts_free(struct rbd_facts *f);

/* @f's data map kept with @s (freed with it), taken from @f. */
void rbd_spec_keep_map(struct rbd_spec *s, struct rbd_facts *f);

/* The map kept, as nbd_conn.h's data_map: 1, or 0 when there is none. */
int rbd_spec_data_map(const struct rbd_spec *s, const uint64_t (**map)[2],
		      size_t *n);

#endif /* E2TRIM_IMAGE_RBD_H */
