#!/bin/bash
# A cephx user whose key may read the pool but not write it (osd 'profile
# rbd-read-only'), as a monitoring or backup key is (issue 46, point 5):
# -n works with it, and a real run, after every check passed read-only,
# is refused with words that say so (the key lacks write permission on
# the pool, and the ceph auth caps that gives it), not "check that the
# cluster answers"; nothing changes, no lock is left.  Needs the cluster
# with cephx (tests/ceph/run.sh starts it so: CEPH_AUTH=cephx).
. "$(dirname "$0")/ceph_lib.sh"
own_images cephx
IMG=rbd/cephx
OUT=$T/out ERR=$T/err
grep -q '^auth_client_required = cephx' "$C" ||
	skip "the cluster runs without cephx (tests/ceph/run.sh starts it with CEPH_AUTH=cephx)"

# a user of this run's own, its key in a keyring the test's conf names
user=ro${RANDOM}${RANDOM}
ceph -c "$C" auth get-or-create "client.$user" mon 'profile rbd' \
	osd 'profile rbd-read-only pool=rbd' >"$T/keyring" || fail "ceph auth get-or-create"
# shellcheck disable=SC2317  # called by the trap
on_exit() { local rc=$?; ceph -c "$C" auth del "client.$user" >/dev/null 2>&1; ceph_exit "$rc"; }
trap on_exit EXIT
{ cat "$C"; printf '[client.%s]\nkeyring = %s\n' "$user" "$T/keyring"; } >"$T/ceph.conf"
chmod 600 "$T/ceph.conf" "$T/keyring"
SPEC="rbd:$IMG:conf=$T/ceph.conf:id=$user"

mkfs "$T/fs.img" 64M -t ext4 -b 4096
age "$T/fs.img" 3
rbd -c "$C" import --no-progress "$T/fs.img" "$IMG" || fail "rbd import"
image_sha() { rbd -c "$C" export --no-progress "$IMG" - 2>/dev/null | sha256sum | cut -d' ' -f1; }
sha0=$(image_sha)

"$E2TRIM" -n "$SPEC" >"$OUT" 2>"$ERR"; RC=$?
assert_rc 0 "-n with a read-only key"
"$E2TRIM" -v "$SPEC" >"$OUT" 2>"$ERR"; RC=$?
cat "$ERR"
assert_rc 1 "a trim with a read-only key"
assert_grep "key of client.$user may read pool rbd but lacks write permission" "$ERR" "what the key lacks"
assert_grep "ceph auth caps client.$user mon 'profile rbd' osd 'profile rbd pool=rbd'" "$ERR" "the fix"
grep -q "check that the cluster answers" "$ERR" && fail "a read-only key told to check the cluster"
assert_eq "$(image_sha)" "$sha0" "the image after the refusal"
assert_eq "$(rbd -c "$C" lock ls --format json "$IMG")" "[]" "locks after the refusal"
note "a read-only cephx key: -n 0, a trim refused naming the missing write caps, image unchanged"
exit 0
