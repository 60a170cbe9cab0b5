#!/bin/bash
# What the report says of an RBD image when the last look fails (issue
# 33, point 7): the image renamed while e2trim trims it (held at the
# first discard; a rename needs no exclusive lock), so that the rbd du
# after cannot find it: the JSON's allocated_after is null (unknown),
# never 0, allocated_before is what rbd du --exact said, the run trimmed.
. "$(dirname "$0")/ceph_lib.sh"
own_images named renamed

mkfs "$T/fs.img" 64M -t ext4 -b 4096
age "$T/fs.img" 9
rbd -c "$C" import --no-progress "$T/fs.img" rbd/named || fail "rbd import"
before=$(du_exact rbd/named)
pause_arm trimming@start
"$E2TRIM" --json "rbd:rbd/named:conf=$C" >"$T/j" 2>"$T/err" &
run=$!
unset E2TRIM_TEST_PAUSE
pause_wait
[ "$PAUSED" != exited ] || { cat "$T/err"; fail "e2trim ended before its first discard"; }
rbd -c "$C" rename rbd/named rbd/renamed || fail "rbd rename"
pause_release 1
wait "$run"; RC=$?
pause_disarm
ERR=$T/err
assert_rc 0 "a trim whose image was renamed meanwhile"
python3 - "$T/j" "$before" <<'PY' || fail "the JSON of a run whose last rbd du failed"
import json, sys
t = json.load(open(sys.argv[1]))["targets"][0]
r = t["result"]
assert t["status"] == "trimmed", t["status"]
assert r["bytes_trimmed"] > 0, r
assert r["allocated_before"] == int(sys.argv[2]), r
assert r["allocated_after"] is None, r
PY
note "renamed mid-run: allocated_before $((before >> 10)) KiB, allocated_after null"
rbd -c "$C" rm --no-progress rbd/renamed >/dev/null 2>&1
exit 0
