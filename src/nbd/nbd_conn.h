/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nbd_conn.h - one connection to an NBD server: the bottom of the NBD
 * family.  nbd_io.c makes and reads it, nbd_readahead.c asks ahead on
 * it, target_nbd.c trims through it.
 */
#ifndef E2TRIM_NBD_CONN_H
#define E2TRIM_NBD_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct nbd_handle;

/*
 * qemu-nbd's block status of the backing chain (with -A): 0 unallocated,
 * 1 in the top layer, 2 and up in a backing file.  Only the top layer's
 * clusters can be freed; base:allocation calls a backing file's
 * clusters data too.
 */
#define NBD_CONTEXT_DEPTH "qemu:allocation-depth"

/* What the server said of its export when the connection was made. */
struct nbd_server_facts {
	uint64_t size_bytes;	/* of the export */
	uint64_t min_block;	/* the server's block sizes, 0: not said */
	uint64_t pref_block;
	uint64_t max_block;
	unsigned int can_trim : 1,
		     has_status : 1,	/* base:allocation block status */
		     has_depth : 1;	/* qemu:allocation-depth too */
};

struct nbd_conn {
	struct nbd_handle *h;
	char name[40];		/* "nbd-conn:<address>": what ext2fs_open2()
				   gives e2t_nbd_io_manager's open */
	struct nbd_server_facts srv;	/* anew on each (re)connection */
	int data_fd;		/* a qcow2's external data file, or -1 */
	pid_t owner_pid;	/* who connected: only it ends the
				   connection and its server (fork) */
	/*
	 * The stderr file of the qemu-nbd e2trim started (nbd_server.c
	 * finds the server by it), 0 0 for a server of someone else's.
	 */
	dev_t err_dev;
	ino_t err_ino;
	/*
	 * Where the image holds data, [start, end) export bytes sorted and
	 * apart, when its own store tells it finer than block status does
	 * (RBD: rbd diff's exact extents, where qemu says whole 4 MiB
	 * objects); target_nbd.c asks it instead.  Owned by who set it.
	 */
	const uint64_t (*data_map)[2];
	size_t data_map_n;
	unsigned int drops_discard : 1,	/* the server frees nothing (v2 overlay) */
		     has_data_map : 1;
};

#endif /* E2TRIM_NBD_CONN_H */
