/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * image_format.h - VM image formats by their magic, and their clusters
 */
#ifndef E2TRIM_IMAGE_FORMAT_H
#define E2TRIM_IMAGE_FORMAT_H

#include <stdint.h>

/* qemu's name for the format of the image on @fd, or NULL: raw. */
const char *image_format_probe(int fd);

/*
 * The image's cluster size in bytes (the unit it frees space in), or 0
 * when it cannot be told.
 */
uint64_t image_cluster_bytes(int fd, const char *path, const char *format);

#endif /* E2TRIM_IMAGE_FORMAT_H */
