/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * image_lock.h - qemu's image locks on a raw image file or block device
 *                (image_lock.c)
 */
#ifndef E2TRIM_IMAGE_LOCK_H
#define E2TRIM_IMAGE_LOCK_H

#include <stddef.h>
#include <sys/types.h>
#include <et/com_err.h>

/*
 * Hold on @fd the locks qemu takes for a writer that shares neither
 * write nor resize, until @fd's last descriptor is closed.  0 or an errno
 * value.
 */
errcode_t image_lock_take(int fd);

/*
 * Does another open file description hold one of qemu's lock bytes on
 * @fd's file?  1 or 0; @pid gets the holder if the kernel says (a POSIX
 * lock), else -1.
 */
int image_lock_other(int fd, pid_t *pid);

/*
 * Does another open file description hold qemu's "write" permission
 * byte on @fd's file (a writer; readers sharing a backing file do not
 * count)?  1 or 0; @pid as for image_lock_other().
 */
int image_lock_writer(int fd, pid_t *pid);

/*
 * The process holding qemu's locks on @fd's file (@hint if > 0, else
 * looked for in /proc/PID/fdinfo), its command in @name; -1 if it cannot
 * be found (another user's process, or none left).
 */
pid_t image_lock_holder(int fd, pid_t hint, char *name, size_t len);

#endif /* E2TRIM_IMAGE_LOCK_H */
