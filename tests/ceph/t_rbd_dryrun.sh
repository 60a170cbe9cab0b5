#!/bin/bash
# A dry run (-n) on an RBD image writes nothing anywhere (issue 33, point
# 6): every object of the pool, the image's header and object map
# included, keeps its size, mtime, bytes, xattrs and omap, and no lock
# or watcher is left.  (qemu-nbd's "read-only" server opened the image
# read-write in librbd and rewrote its object map.)  A refusal (a lock
# another client holds) changes nothing either, nor does a real run
# that a filesystem gate refuses (13).
. "$(dirname "$0")/ceph_lib.sh"
own_images dry unclean
IMG=rbd/dry
# librbd writes the access time into the header at an open once this
# many seconds passed since the last (60 by default): 1 here, so that
# the listing below (seconds) is enough for an open to be due to write it
cp "$C" "$T/ceph.conf"
printf '[client]\nrbd_atime_update_interval = 1\n' >>"$T/ceph.conf"
SPEC="rbd:$IMG:conf=$T/ceph.conf"
OUT=$T/out ERR=$T/err

mkfs "$T/fs.img" 128M -t ext4 -b 4096
age "$T/fs.img" 7
rbd -c "$C" import --no-progress "$T/fs.img" "$IMG" || fail "rbd import"
# one line per object of the pool: its size, mtime, bytes, xattrs and
# omap (python3-rados: one connection, not five rados commands an object)
objects() {
	/usr/bin/python3 - "$C" <<'PY' || fail "listing the pool's objects"
import calendar, hashlib, rados, sys
c = rados.Rados(conffile=sys.argv[1])
c.connect()
io = c.open_ioctx("rbd")
for name in sorted(o.key for o in io.list_objects()):
    size, mtime = io.stat(name)
    data = io.read(name, size) if size else b""
    xattrs = sorted(io.get_xattrs(name))
    with rados.ReadOpCtx() as op:
        it, _ = io.get_omap_vals(op, "", "", 100000)
        io.operate_read_op(op, name)
        omap = sorted(it)
    print(name, size, calendar.timegm(mtime), hashlib.sha256(data).hexdigest()[:16],
          hashlib.sha256(repr((xattrs, omap)).encode()).hexdigest()[:16])
io.close()
c.shutdown()
PY
}
objects >"$T/before"
grep -q '^rbd_object_map\.' "$T/before" || fail "the image has no object map: nothing to watch"

"$E2TRIM" -n -v "$SPEC" >"$OUT" 2>"$ERR"; RC=$?
cat "$OUT" "$ERR"
assert_rc 0 "-n on an RBD image"
assert_grep "trimmed (dry run)" "$OUT" "the dry run's report"
objects >"$T/after"
diff "$T/before" "$T/after" || fail "-n changed an object of the pool"
assert_eq "$(rbd -c "$C" lock ls --format json "$IMG" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 0 "locks after -n"
note "-n: $(wc -l <"$T/after") objects of the pool unchanged (object map included), no lock"

# a refusal: another client's lock (rbd lock add), e2trim refuses (26)
rbd -c "$C" lock add "$IMG" e2trim-test || fail "rbd lock add"
objects >"$T/before"
"$E2TRIM" "$SPEC" >"$OUT" 2>"$ERR"; RC=$?
assert_rc 26 "a locked RBD image"
"$E2TRIM" --json "$SPEC" >"$T/j" 2>"$ERR"; RC=$?
assert_rc 26 "a locked RBD image (--json)"
python3 - "$T/j" <<'PY' || fail "the refusal's JSON status"
import json, sys
assert json.load(open(sys.argv[1]))["targets"][0]["status"] == "refused"
PY
objects >"$T/after"
diff "$T/before" "$T/after" || fail "a refusal changed an object of the pool"
note "a refusal (26): every object unchanged"
rbd -c "$C" lock rm "$IMG" e2trim-test "$(rbd -c "$C" lock ls --format json "$IMG" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["locker"])')" || fail "rbd lock rm"
rbd -c "$C" rm --no-progress "$IMG" >/dev/null 2>&1

# a REAL run refused by a filesystem gate (not clean: 13) changes no
# object either: the checks run on a read-only open, and the image is
# opened read-write and locked only once they all passed.  (The lock
# taken before the first read rewrote the header and the object map.)
IMG=rbd/unclean
SPEC="rbd:$IMG:conf=$T/ceph.conf"
cp "$T/fs.img" "$T/unclean.img"
debugfs -w -R "ssv state 0" "$T/unclean.img" >/dev/null 2>&1 || fail "debugfs ssv state 0"
rbd -c "$C" import --no-progress "$T/unclean.img" "$IMG" || fail "rbd import"
objects >"$T/before"
"$E2TRIM" -v "$SPEC" >"$OUT" 2>"$ERR"; RC=$?
cat "$OUT" "$ERR"
assert_rc 13 "a real run on an unclean filesystem in an RBD image"
objects >"$T/after"
diff "$T/before" "$T/after" || fail "a refused real run changed an object of the pool"
assert_eq "$(rbd -c "$C" lock ls --format json "$IMG" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 0 "locks after a refused run"
note "a refused real run (13): $(wc -l <"$T/after") objects of the pool unchanged, no lock"
rbd -c "$C" rm --no-progress "$IMG" >/dev/null 2>&1
exit 0
