/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rbd_cmd.h - what e2trim asks of an RBD image, and the `rbd` command's
 *             answers (rbd_cmd.c)
 */
#ifndef E2TRIM_RBD_CMD_H
#define E2TRIM_RBD_CMD_H

#include <stddef.h>
#include <stdint.h>
#include <e2trim_err.h>

struct rbd_spec;

/* Who has the image open. */
struct rbd_clients {
	int watchers;		/* clients watching it (`rbd status`) */
	int lockers;		/* holding a lock, the exclusive lock too */
	char watcher[512];	/* their addresses, ", " between */
	char locker[512];
	/* the first lock's id and owner (client.N): what rbd lock rm takes */
	char lock_id[128];
	char lock_owner[64];
};

/* What e2t_rbd_ask() asks (RBD_ASK_*, or'ed) and what it found. */
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
	 * nothing to free.  Freed by e2t_rbd_facts_free().
	 */
	uint64_t (*data)[2];
	size_t ndata;
	unsigned int used_known : 1,
		     map_known : 1;
};

/*
 * librados waits for a monitor or an OSD forever by default: bounds for
 * qemu, librados in the process and the rbd command alike (rbd_cmd.c).
 */
#define RBD_NTIMEOUTS 3
#define RBD_TIMEOUT_SECONDS "60"
extern const char *const e2t_rbd_timeouts[RBD_NTIMEOUTS];

/* The name sets Ceph option @key itself. */
int e2t_rbd_has_key(const struct rbd_spec *s, const char *key);

/* Extents collected in any order, then sorted and merged. */
struct rbd_extents {
	uint64_t (*d)[2];
	size_t n, cap;
};


/*
 * One more extent (a walk's callback: @arg is the struct rbd_extents):
 * 0 or ENOMEM.
 */
errcode_t e2t_rbd_extent_add(uint64_t off, uint64_t len, void *arg);

/* @x sorted and merged into @f's map; @x is @f's after. */
void e2t_rbd_extents_to_map(struct rbd_extents *x, struct rbd_facts *f);

/*
 * What the rbd command says of @what (RBD_ASK_*), all at once, into @f
 * (zeroed by the caller).  0; with its words in @why when the clients
 * were asked and could not be told, the errno value of why the command
 * could not be run (ENOENT: no rbd command) or E2TRIM_ERR_NBD_START
 * when it failed; what else could not be told is left unknown.
 */
errcode_t e2t_rbd_cmd_ask(const struct rbd_spec *s, unsigned int what,
		      struct rbd_facts *f, char *why, size_t len);

#endif /* E2TRIM_RBD_CMD_H */
