/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open_data_file.h - open: a qcow2's external data file must be its own
 *                    (open_data_file.c)
 */
#ifndef E2TRIM_OPEN_DATA_FILE_H
#define E2TRIM_OPEN_DATA_FILE_H

#include "e2trim_int.h"

/*
 * The data file held in t->nbd->data_fd holds
 * data only in clusters the qcow2 allocates, and none past its virtual
 * size: else E2TRIM_ERR_USAGE (3), naming the file and the byte, as the
 * other data-file gates refuse.  0 also when there is no data file, or
 * the server answers no block status.
 */
errcode_t open_data_file_own(struct e2trim *t);

#endif /* E2TRIM_OPEN_DATA_FILE_H */
