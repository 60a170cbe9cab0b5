#!/bin/bash
# An RBD image whose data objects live in another pool (rbd import
# --data-pool, as erasure-coded setups make them) is read, checked and
# trimmed like any other (issue 46, point 2): its header object is
# rbd_header.<image id> in the image's pool, while its block_name_prefix
# names the data pool (rbd_data.<data pool id>.<image id>), so a header
# name built from the prefix does not exist ("No such file or
# directory", exit 1).  The oracle: every block the bitmap marks in use
# reads back as imported, e2fsck -fn is clean, and rbd du --exact drops.
. "$(dirname "$0")/ceph_lib.sh"
own_images dpool
IMG=rbd/dpool
DPOOL=rbddp
SPEC="rbd:$IMG:conf=$C"
OUT=$T/out ERR=$T/err

# the data pool: one per cluster (the contract's kind rbddp uses it too)
if ! ceph -c "$C" osd pool ls | grep -qx "$DPOOL"; then
	ceph -c "$C" osd pool create "$DPOOL" 8 8 >/dev/null 2>&1 || fail "ceph osd pool create $DPOOL"
	timeout 120 rbd -c "$C" pool init "$DPOOL" || fail "rbd pool init $DPOOL"
fi
mkfs "$T/fs.img" 128M -t ext4 -b 4096
age "$T/fs.img" 5
rbd -c "$C" import --no-progress --data-pool "$DPOOL" "$T/fs.img" "$IMG" || fail "rbd import --data-pool"
prefix=$(rbd -c "$C" info --format json "$IMG" | python3 -c 'import json,sys; print(json.load(sys.stdin)["block_name_prefix"])')
case $prefix in rbd_data.*.*) ;; *) fail "block_name_prefix $prefix names no data pool" ;; esac
used0=$(used_blocks_digest "$T/fs.img")
before=$(du_exact "$IMG")

"$E2TRIM" -n "$SPEC" >"$OUT" 2>"$ERR"; RC=$?
assert_rc 0 "-n on an image with a data pool"
"$E2TRIM" -v "$SPEC" >"$OUT" 2>"$ERR"; RC=$?
cat "$OUT" "$ERR"
assert_rc 0 "a trim of an image with a data pool"
after=$(du_exact "$IMG")
[ "$after" -lt "$before" ] || fail "rbd du --exact $before -> $after: nothing freed"
rbd -c "$C" export --no-progress "$IMG" "$T/x.img" >/dev/null 2>&1 || fail "rbd export"
e2fsck -fn "$T/x.img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn after the trim"; }
assert_eq "$(used_blocks_digest "$T/x.img")" "$used0" "the used blocks after the trim"
assert_eq "$(rbd -c "$C" lock ls --format json "$IMG")" "[]" "locks after the run"
note "data pool $DPOOL (prefix $prefix): rbd du --exact $((before >> 10)) -> $((after >> 10)) KiB, used blocks as imported"
exit 0
