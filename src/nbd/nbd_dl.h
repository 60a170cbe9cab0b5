/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nbd_dl.h - libnbd, loaded when a VM image or NBD URI is first opened
 *
 * libnbd pulls in GnuTLS and libxml2 (with ICU's 30 MB of data): linked
 * in, every initramfs that holds e2trim would carry 47 MB of libraries
 * that a boot-time trim of a block device never uses.  So libnbd.so.0 is
 * opened with dlopen() only when it is needed, and the calls below go
 * through a table of its functions.  Include this after <libnbd.h>, in
 * the files that call libnbd (nbd_io.c, nbd_readahead.c, target_nbd.c)
 * and nowhere else.
 */
#ifndef E2TRIM_NBD_DL_H
#define E2TRIM_NBD_DL_H

#include <libnbd.h>
#include <e2trim_err.h>

/* X(return type, name, parameters) for every libnbd call e2trim makes */
#define NBD_DL_FUNCS(X) \
	X(struct nbd_handle *, nbd_create, (void)) \
	X(void, nbd_close, (struct nbd_handle *)) \
	X(const char *, nbd_get_error, (void)) \
	X(int, nbd_get_errno, (void)) \
	X(int, nbd_add_meta_context, (struct nbd_handle *, const char *)) \
	X(int, nbd_connect_uri, (struct nbd_handle *, const char *)) \
	X(int, nbd_connect_systemd_socket_activation, \
	  (struct nbd_handle *, char **)) \
	X(int64_t, nbd_get_size, (struct nbd_handle *)) \
	X(int, nbd_can_trim, (struct nbd_handle *)) \
	X(int, nbd_can_flush, (struct nbd_handle *)) \
	X(int, nbd_is_read_only, (struct nbd_handle *)) \
	X(int, nbd_can_meta_context, (struct nbd_handle *, const char *)) \
	X(int64_t, nbd_get_block_size, (struct nbd_handle *, int)) \
	X(int, nbd_pread, (struct nbd_handle *, void *, size_t, uint64_t, \
			   uint32_t)) \
	X(int64_t, nbd_aio_pread, (struct nbd_handle *, void *, size_t, \
				   uint64_t, nbd_completion_callback, \
				   uint32_t)) \
	X(int, nbd_trim, (struct nbd_handle *, uint64_t, uint64_t, uint32_t)) \
	X(int, nbd_zero, (struct nbd_handle *, uint64_t, uint64_t, uint32_t)) \
	X(int, nbd_flush, (struct nbd_handle *, uint32_t)) \
	X(int, nbd_block_status, (struct nbd_handle *, uint64_t, uint64_t, \
				  nbd_extent_callback, uint32_t)) \
	X(int64_t, nbd_aio_trim, (struct nbd_handle *, uint64_t, uint64_t, \
				  nbd_completion_callback, uint32_t)) \
	X(int64_t, nbd_aio_zero, (struct nbd_handle *, uint64_t, uint64_t, \
				  nbd_completion_callback, uint32_t)) \
	X(int, nbd_aio_in_flight, (struct nbd_handle *)) \
	X(int, nbd_aio_is_ready, (struct nbd_handle *)) \
	X(int, nbd_poll, (struct nbd_handle *, int)) \
	X(int, nbd_shutdown, (struct nbd_handle *, uint32_t))

#define NBD_DL_FIELD(ret, name, params) ret (*name) params;
struct e2t_nbd_dl {
	NBD_DL_FUNCS(NBD_DL_FIELD)
};
#undef NBD_DL_FIELD

/*
 * Load libnbd.so.0 (once, for the process; thread-safe).  Returns 0, or
 * E2TRIM_ERR_NO_LIBNBD with *@why (may be NULL) saying why it cannot be
 * loaded.
 */
errcode_t e2t_nbd_dl_load(const char **why);

/* The table, valid once e2t_nbd_dl_load() returned 0. */
extern struct e2t_nbd_dl e2t_nbd_dl;

/* From here on, every libnbd call in this file goes through the table. */
#define NBD_DL_REDIRECT
#define nbd_create (e2t_nbd_dl.nbd_create)
#define nbd_close (e2t_nbd_dl.nbd_close)
#define nbd_get_error (e2t_nbd_dl.nbd_get_error)
#define nbd_get_errno (e2t_nbd_dl.nbd_get_errno)
#define nbd_add_meta_context (e2t_nbd_dl.nbd_add_meta_context)
#define nbd_connect_uri (e2t_nbd_dl.nbd_connect_uri)
#define nbd_connect_systemd_socket_activation \
	(e2t_nbd_dl.nbd_connect_systemd_socket_activation)
#define nbd_get_size (e2t_nbd_dl.nbd_get_size)
#define nbd_can_trim (e2t_nbd_dl.nbd_can_trim)
#define nbd_can_flush (e2t_nbd_dl.nbd_can_flush)
#define nbd_is_read_only (e2t_nbd_dl.nbd_is_read_only)
#define nbd_can_meta_context (e2t_nbd_dl.nbd_can_meta_context)
#define nbd_get_block_size (e2t_nbd_dl.nbd_get_block_size)
#define nbd_pread (e2t_nbd_dl.nbd_pread)
#define nbd_aio_pread (e2t_nbd_dl.nbd_aio_pread)
#define nbd_trim (e2t_nbd_dl.nbd_trim)
#define nbd_zero (e2t_nbd_dl.nbd_zero)
#define nbd_flush (e2t_nbd_dl.nbd_flush)
#define nbd_block_status (e2t_nbd_dl.nbd_block_status)
#define nbd_aio_trim (e2t_nbd_dl.nbd_aio_trim)
#define nbd_aio_zero (e2t_nbd_dl.nbd_aio_zero)
#define nbd_aio_in_flight (e2t_nbd_dl.nbd_aio_in_flight)
#define nbd_aio_is_ready (e2t_nbd_dl.nbd_aio_is_ready)
#define nbd_poll (e2t_nbd_dl.nbd_poll)
#define nbd_shutdown (e2t_nbd_dl.nbd_shutdown)

#endif /* E2TRIM_NBD_DL_H */
