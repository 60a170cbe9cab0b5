/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kept_buf.h - buffers left to reads the kernel may still have in flight
 */
#ifndef E2TRIM_KEPT_BUF_H
#define E2TRIM_KEPT_BUF_H

/*
 * An io_uring that broke may still have reads in flight into @buf: it is
 * never freed or used again, but kept on one process-wide list for as
 * long as the process lives, so that leak checkers see why.  Any thread
 * may call this at any time.
 */
void kept_buf_leave(void *buf);

#endif /* E2TRIM_KEPT_BUF_H */
