/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef E2TRIM_CHECK_H
#define E2TRIM_CHECK_H

#include "e2trim_int.h"

/*
 * Does the device (or partition, or loop device's bound) hold every block
 * the open filesystem claims?  0, or E2TRIM_ERR_TRUNCATED with its message.
 */
errcode_t check_size(struct e2trim *t);

#endif
