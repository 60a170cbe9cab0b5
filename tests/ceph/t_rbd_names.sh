#!/bin/bash
# An RBD image's name is data, never Ceph options (issue 33, point 2).
# librbd takes any name: one named "vm7:admin_socket=<file>" is listed by
# `rbd ls` as it is, and README's old fleet recipe (rbd ls | sed
# 's|^|rbd:POOL/|') turned it into rbd:POOL/vm7:admin_socket=<file>:
# e2trim's librados, as root, unlinked <file> to bind its socket there,
# -n too.  Now: the line is refused (3) and <file> is left as it was, by
# -n and by a real run; the corrected recipe (escapes) names such an image
# exactly, or refuses it when its name holds what cannot be carried ('/'
# or '@'), and trims one whose name holds ':'.  A conf file others can
# change is refused (librados does what it says).
. "$(dirname "$0")/ceph_lib.sh"
OUT=$T/out ERR=$T/err
# a namespace of its own per run: a run that failed leaves nothing in the way
NS=names$RANDOM$RANDOM
SENT=$T/sentinel
EVIL="vm7:admin_socket=$SENT"

# the recipe reads the cluster from CEPH_CONF, as a host's /etc/ceph
export CEPH_CONF=$C
rbd namespace create "rbd/$NS" || fail "rbd namespace create"
mkfs "$T/fs.img" 64M -t ext4 -b 4096
age "$T/fs.img" 2
# vm7, the image the old recipe's line names, and web:1, a name with a colon
for i in vm7 web:1; do
	rbd import --no-progress "$T/fs.img" "rbd/$NS/$i" || fail "rbd import $i"
done
# the option-like name, through librbd's API (the rbd command splits it)
python3 - "$NS" "$EVIL" <<'PY' || fail "creating the image $EVIL"
import os, sys, rados, rbd
with rados.Rados(conffile=os.environ["CEPH_CONF"]) as c:
    with c.open_ioctx("rbd") as io:
        io.set_namespace(sys.argv[1])
        rbd.RBD().create(io, sys.argv[2], 64 << 20)
PY
rbd ls "rbd/$NS" | grep -qxF "$EVIL" || fail "rbd ls does not list $EVIL"
echo "a file root's librados must not touch" >"$SENT"
sent0=$(sha_of "$SENT")
image_sha() { rbd export --no-progress "rbd/$NS/$1" - 2>/dev/null | sha256sum | cut -d' ' -f1; }
vm7_sha=$(image_sha vm7)
sentinel_kept() {
	if [ ! -f "$SENT" ] || [ -S "$SENT" ]; then
		fail "$1: the sentinel file is gone"
	fi
	assert_eq "$(sha_of "$SENT")" "$sent0" "the sentinel's bytes after $1"
}

# 1. README's old recipe: the option-like name's line is refused, -n too
rbd ls "rbd/$NS" | sed "s|^|rbd:rbd/$NS/|" | grep -F admin_socket >"$T/old"
for n in "-n" ""; do
	# shellcheck disable=SC2086 # $n: -n or nothing
	"$E2TRIM" $n --targets-from "$T/old" >"$OUT" 2>"$ERR"; RC=$?
	cat "$ERR"
	sentinel_kept "the old recipe's line (${n:-real run})"
	assert_rc 3 "the old recipe's line (${n:-real run})"
	assert_grep "admin_socket= after an RBD name is refused" "$ERR" "the refusal's words"
done
assert_eq "$(image_sha vm7)" "$vm7_sha" "vm7's bytes after the refusals"
note "rbd:rbd/$NS/$EVIL refused with 3 (-n and a real run), the sentinel file kept"

# 2. the corrected recipe escapes '\', ':', '@', '/' and blanks: every line
# is one image's name; the option-like one is refused (its '/' cannot be
# carried: rename it), web:1 is trimmed under its own name
rbd ls "rbd/$NS" | sed 's/[\\:@/[:blank:]]/\\&/g' | sed "s|^|rbd:rbd/$NS/|" >"$T/list"
cat "$T/list"
grep -qxF "rbd:rbd/$NS/web\\:1" "$T/list" || fail "the recipe did not escape web:1"
web0=$(du_exact "rbd/$NS/web:1")
"$E2TRIM" --json --targets-from "$T/list" >"$T/j" 2>"$ERR"; RC=$?
cat "$ERR"
sentinel_kept "the corrected recipe"
assert_rc 64 "the corrected recipe's list (one refused, two trimmed)"
python3 - "$T/j" "$EVIL" <<'PY' || fail "the list's JSON"
import json, sys
ts = {t["target"]: t for t in json.load(open(sys.argv[1]))["targets"]}
bad = [t for n, t in ts.items() if "admin_socket" in n]
assert len(bad) == 1 and bad[0]["exit_code"] == 3, bad
assert "rename it" in bad[0]["error"], bad[0]
ok = [t for n, t in ts.items() if "admin_socket" not in n]
assert len(ok) == 2 and all(t["status"] == "trimmed" for t in ok), ok
PY
web1=$(du_exact "rbd/$NS/web:1")
[ "$web1" -lt "$web0" ] || fail "web:1 was not trimmed: rbd du $web0 -> $web1"
rbd export --no-progress "rbd/$NS/web:1" "$T/web.img" >/dev/null 2>&1 || fail "rbd export web:1"
e2fsck -fn "$T/web.img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn web:1"; }
# the old recipe's line for it reads ":1" as an option: refused, not vm7's
"$E2TRIM" -n "rbd:rbd/$NS/web:1" >"$OUT" 2>"$ERR"; RC=$?
assert_rc 3 "rbd:rbd/$NS/web:1 unescaped"
vm7_sha=$(image_sha vm7)
note "corrected recipe: $EVIL refused (rename it), web:1 trimmed as rbd:rbd/$NS/web\\:1 (rbd du $((web0 >> 20)) -> $((web1 >> 20)) MiB)"

# 3. a key given twice, and a conf file that others can change
"$E2TRIM" -n "rbd:rbd/$NS/vm7:conf=$C:conf=$C" >"$OUT" 2>"$ERR"; RC=$?
assert_rc 3 "conf= twice"
cp "$C" "$T/open.conf"
chmod 666 "$T/open.conf"
"$E2TRIM" -n "rbd:rbd/$NS/vm7:conf=$T/open.conf" >"$OUT" 2>"$ERR"; RC=$?
cat "$ERR"
assert_rc 3 "a conf file others can write"
assert_grep "can be changed by others" "$ERR" "the conf file's refusal"
sentinel_kept "the end"
assert_eq "$(image_sha vm7)" "$vm7_sha" "vm7's bytes at the end"
note "conf= twice and a world-writable conf file refused (3)"
for i in vm7 web:1 "$EVIL"; do
	python3 - "$NS" "$i" <<'PY'
import os, sys, rados, rbd
with rados.Rados(conffile=os.environ["CEPH_CONF"]) as c:
    with c.open_ioctx("rbd") as io:
        io.set_namespace(sys.argv[1])
        rbd.RBD().remove(io, sys.argv[2])
PY
done
rbd namespace remove "rbd/$NS" >/dev/null 2>&1
exit 0
