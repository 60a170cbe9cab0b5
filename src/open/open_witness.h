/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * open_witness.h - a writer that came and went, seen by what it left
 *                  (open_witness.c)
 */
#ifndef E2TRIM_OPEN_WITNESS_H
#define E2TRIM_OPEN_WITNESS_H

#include "e2trim_int.h"

/*
 * Copy the bytes the plan rests on (the primary superblock, the group
 * descriptors, the MMP block) as the target's own descriptor reads them
 * now, right after libext2fs read them; refuse (26) if they already
 * differ from libext2fs's copy.  Nothing for a target without a
 * descriptor of its own (NBD, RBD: see open_witness.c).
 */
errcode_t witness_take(struct e2trim *t);

/*
 * Read them again and compare byte for byte: 0 when unchanged, 26
 * (E2TRIM_ERR_CHANGED, naming what changed) when another writer came.
 * The _now_and_then form looks when a batch's time has passed since the
 * last look (100 ms, and at least 20 times what the last look took).
 */
errcode_t witness_look(struct e2trim *t);
errcode_t witness_look_now_and_then(struct e2trim *t);

/*
 * @err, a check's or the verification's refusal, or 26 when the witness
 * shows another writer came since open: a bitmap whose checksum no longer
 * matches, an inode that points into free space, are then its doing, not
 * damage, and the fix is not e2fsck.  @err itself when nothing changed
 * (its particulars kept), when it is 0 or a stop.
 */
errcode_t witness_explains(struct e2trim *t, errcode_t err);

void witness_free(struct e2trim *t);

#endif /* E2TRIM_OPEN_WITNESS_H */
