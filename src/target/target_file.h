/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target_file.h - an image file: holes punched
 */
#ifndef E2TRIM_TARGET_FILE_H
#define E2TRIM_TARGET_FILE_H

#include "target_core.h"

/*
 * Prepare @t over @fd (already open, for writing unless dry run).
 * Returns 0, EOPNOTSUPP when the device cannot do @mode at all, or
 * another errno value.
 */
errcode_t target_file_init(struct target *t, int fd, enum trim_mode mode);

#endif /* E2TRIM_TARGET_FILE_H */
