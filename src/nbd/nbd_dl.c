// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nbd_dl.c - load libnbd.so.0 on first use (see nbd_dl.h for why)
 *
 * The one piece of process-wide state this adds: the table of libnbd's
 * functions, filled once under pthread_once and never changed after, as
 * the error tables are (errors.c).  The library stays loaded.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#include <libnbd.h>	/* the prototypes, before nbd_dl.h's macros */

#include "nbd_dl.h"

struct e2t_nbd_dl e2t_nbd_dl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *load_error;	/* NULL: loaded */
static char dl_error[256];

#undef nbd_create
#undef nbd_close
#undef nbd_get_error
#undef nbd_get_errno
#undef nbd_add_meta_context
#undef nbd_connect_uri
#undef nbd_connect_systemd_socket_activation
#undef nbd_get_size
#undef nbd_can_trim
#undef nbd_can_flush
#undef nbd_is_read_only
#undef nbd_can_meta_context
#undef nbd_get_block_size
#undef nbd_pread
#undef nbd_aio_pread
#undef nbd_trim
#undef nbd_zero
#undef nbd_flush
#undef nbd_block_status
#undef nbd_aio_trim
#undef nbd_aio_zero
#undef nbd_aio_in_flight
#undef nbd_aio_is_ready
#undef nbd_poll
#undef nbd_shutdown

static void load(void)
{
	static const char *const missing = "libnbd.so.0 lacks a function "
					   "e2trim needs (libnbd 1.14 or later)";
	void *lib = dlopen("libnbd.so.0", RTLD_NOW | RTLD_LOCAL);
	struct e2t_nbd_dl t;

	if (!lib) {
		const char *e = dlerror();

		snprintf(dl_error, sizeof(dl_error), "%s",
			 e ? e : "cannot load libnbd.so.0");
		load_error = dl_error;
		return;
	}
#define NBD_DL_LOAD(ret, name, params) \
	*(void **)&t.name = dlsym(lib, #name); \
	if (!t.name) { \
		load_error = missing; \
		return; \
	}
	NBD_DL_FUNCS(NBD_DL_LOAD)
#undef NBD_DL_LOAD
	e2t_nbd_dl = t;
}

errcode_t e2t_nbd_dl_load(const char **why)
{
	pthread_once(&once, load);
	if (why)
		*why = load_error;
	return load_error ? E2TRIM_ERR_NO_LIBNBD : 0;
}
