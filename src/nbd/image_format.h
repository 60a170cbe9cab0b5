/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * image_format.h - VM image formats by their magic, and their clusters
 */
#ifndef E2TRIM_IMAGE_FORMAT_H
#define E2TRIM_IMAGE_FORMAT_H

#include <stdint.h>

/* qemu's name for the format of the image on @fd, or NULL: raw. */
const char *image_format_probe(int fd);

/* @format is one whose magic image_format_probe() knows. */
int image_format_has_magic(const char *format);

enum image_choice {
	IMAGE_RAW,		/* no VM magic: raw */
	IMAGE_VM,		/* a VM magic, and no raw reading: *format */
	IMAGE_RAW_MAGIC,	/* reads as raw; the magic's header is not
				   one qemu would open: raw */
	IMAGE_AMBIGUOUS,	/* both readings hold: --format must say */
};

/*
 * How to open the @size-byte image file on @fd when no --format is
 * given: *@format gets the magic's format (or NULL).  Bytes a guest can
 * write never choose a VM format alone (see image_format.c).
 */
enum image_choice image_format_choose(int fd, uint64_t size,
				      const char **format);

/*
 * The image's cluster size in bytes (the unit it frees space in), or 0
 * when it cannot be told.
 */
uint64_t image_cluster_bytes(int fd, const char *path, const char *format);

/*
 * Does the image (@path, open on @fd, in @format, not qcow2) name a file
 * besides itself: a backing file, a data file, an extent elsewhere?  1
 * with *@what saying which and its name (as the image spells it) in
 * @name, else 0.  A vmdk descriptor and a qed's backing feature are read
 * here; the rest is what `qemu-img info` says, which opens no backing
 * file (and no extent of a descriptor: refused before).
 */
int image_names_files(int fd, const char *path, const char *format,
		      const char **what, char *name, size_t len);

#endif /* E2TRIM_IMAGE_FORMAT_H */
