/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck_target.h - a name e2fsck can check, and write, for any target
 *
 * e2fsck reads files and block devices from their first byte.  A
 * partition inside an image gets a loop device bounded by its table
 * entry (fsck_loop.c); a VM image gets its content as a file through
 * nbdfuse over qemu-nbd (fsck_vm.c); a partition of a VM image gets both.
 */
#ifndef E2TRIM_FSCK_TARGET_H
#define E2TRIM_FSCK_TARGET_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

struct fsck_target {
	char name[PATH_MAX + 32];	/* what e2fsck is given */
	int loop_fd;			/* the loop device, held; -1 */
	char loop[32];			/* its name: "loop7"; "" */
	pid_t fuse_pid;			/* nbdfuse (and its qemu-nbd); 0 */
	char dir[PATH_MAX];		/* our folder: mount point, pid file */
	char mnt[PATH_MAX + 8];		/* the mount point in @dir; "" */
};

/* Nothing held yet: fsck_target_release() may be called on it. */
void fsck_target_init(struct fsck_target *ft);

/*
 * A loop device over @path (a file or a device) from @offset for @size
 * bytes, read-only with @read_only; its name in ft->name.  It is made
 * with autoclear: the kernel removes it once the last holder closes it,
 * even if e2trim is killed.  Returns 0 or -errno, with @why said.
 */
int fsck_loop_make(struct fsck_target *ft, const char *path, uint64_t offset,
		   uint64_t size, int read_only, char *why, size_t len);

/*
 * The content of VM image @path (qemu's @format) as a file in a folder
 * of our own under $TMPDIR: nbdfuse over qemu-nbd, both in a session of
 * their own (a terminal's Ctrl-C reaches e2fsck, not them), qemu-nbd
 * holding the image's lock until fsck_target_release().  Its name in
 * ft->name.  Returns 0 or -errno with @why said.
 */
int fsck_vm_mount(struct fsck_target *ft, const char *path,
		  const char *format, int read_only, char *why, size_t len);

/* The halves of fsck_target_release(): 0, or -1 said on stderr. */
int fsck_loop_release(struct fsck_target *ft);
int fsck_vm_release(struct fsck_target *ft);

/*
 * Let go of what @ft holds, the last first: the loop device (waiting
 * until the kernel has removed it), the mount, nbdfuse and qemu-nbd
 * (waiting until they have exited: the image's lock is free after), the
 * folder.  Returns 0, or -1 when something could not be released (said
 * on stderr).
 */
int fsck_target_release(struct fsck_target *ft);

#endif /* E2TRIM_FSCK_TARGET_H */
