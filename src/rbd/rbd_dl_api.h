/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rbd_dl_api.h - the part of librados' and librbd's C API rbd_dl.c
 *                loads (stable since Mimic; Debian 12 has 16.2):
 *                opaque handles, and the structs the listing functions
 *                fill.  For rbd_dl.c only.
 */
#ifndef E2TRIM_RBD_DL_API_H
#define E2TRIM_RBD_DL_API_H

#include <stdint.h>
#include <time.h>

typedef void *rados_t;
typedef void *rados_ioctx_t;
typedef void *rbd_image_t;
typedef void *rbd_completion_t;
typedef void (*rbd_callback_t)(rbd_completion_t, void *);

#define RBD_LOCK_MODE_EXCLUSIVE 0
#define RBD_FEATURE_EXCLUSIVE_LOCK (1ULL << 2)

typedef struct {
	char *addr;
	int64_t id;
	uint64_t cookie;
} rbd_image_watcher_t;

typedef struct {
	char *name;
	char *value;
	int source;
} rbd_config_option_t;

typedef struct {
	uint64_t id;
	uint64_t size;
	const char *name;
} rbd_snap_info_t;

typedef struct {
	uint64_t size;
	uint64_t obj_size;
	uint64_t num_objs;
	int order;
	char block_name_prefix[24];
	int64_t parent_pool;
	char parent_name[96];
} rbd_image_info_t;

#endif /* E2TRIM_RBD_DL_API_H */
