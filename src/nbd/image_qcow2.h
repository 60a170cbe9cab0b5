/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * image_qcow2.h - what a qcow2 header (and a LUKS one) tells e2trim
 *                 before qemu-nbd opens the image
 */
#ifndef E2TRIM_IMAGE_QCOW2_H
#define E2TRIM_IMAGE_QCOW2_H

#include <stdint.h>
#include <et/com_err.h>

struct qcow2_facts {
	uint32_t version;	/* 2 (compat=0.10) or 3 (compat=1.1) */
	unsigned int backing : 1,	/* over a backing file */
		     encrypted : 1;	/* crypt_method set */
	char data_file[4096];	/* the external data file, as named; or "" */
	char backing_file[4096];	/* the backing file, as named; or "" */
};

/*
 * 0 with @f filled if @fd starts with a qcow2 header; EINVAL if it does
 * not, or the errno value of a read that failed.
 */
errcode_t qcow2_facts_read(int fd, struct qcow2_facts *f);

/* Does @fd start with a LUKS header (a raw LUKS volume, qemu's luks)? */
int luks_header(int fd);

/*
 * The external data file @name of the image @image_path, opened
 * read-only for its size: relative names are the image directory's, as
 * qemu takes them.  The fd, or -1.
 */
int qcow2_open_data_file(const char *image_path, const char *name);

#endif /* E2TRIM_IMAGE_QCOW2_H */
