#!/bin/bash
# The advice suite (tests/advice_lib.sh) on an RBD image: the refusals an
# RBD image can meet (13, 17, 24 and 26: a watcher, a lock left with no
# watcher, as a killed client's), each fix run as printed where the
# message gives a command, else listed as a person's decision with the
# reason; where the person's step is plain (stop the holder, remove the
# lock, mend the table) the suite takes it and checks that the next run
# gets past the refusal.  The table: grep -o 'ADVICE|.*' in the notes.
# shellcheck source-path=SCRIPTDIR source=ceph_lib.sh
. "$(dirname "$0")/ceph_lib.sh"
own_images adv13 adv17 adv24 adv26
# shellcheck source-path=SCRIPTDIR/.. source=../fixtures.sh
. "$(dirname "$0")/../fixtures.sh"
# shellcheck source-path=SCRIPTDIR/.. source=../advice_lib.sh
. "$(dirname "$0")/../advice_lib.sh"
PY=$(command -v /usr/bin/python3 || command -v python3)

WHY_FSCK="e2fsck cannot read an RBD image, nor --fsck: rbd device map, then e2fsck -f on the device"
# import IMG NAME: IMG as rbd/NAME; SPEC its name for e2trim
import() {
	rbd -c "$C" import --no-progress "$1" "rbd/$2" || fail "rbd import $2"
	SPEC="rbd:rbd/$2:conf=$C"
}

# 13 and 17: fixtures as they are
unxz_to "$IMAGES/unsafe-error-fs.img.xz" "$T/f.img"
import "$T/f.img" adv13
advise unsafe-error-fs RBD 13 - "$WHY_FSCK" "$SPEC"
rm -f "$T/f.img"
unxz_to "$IMAGES/unsafe-truncated.img.xz" "$T/f.img"
import "$T/f.img" adv17
advise unsafe-truncated RBD 17 - "the rest of the image must be found: no command brings it back" "$SPEC"

# 24: overlapping GPT entries, -p 1
truncate -s 20M "$T/d.img"
printf 'label: gpt\nstart=2048, size=16384, type=L\nstart=18432, size=16384, type=L\n' |
	sfdisk -q "$T/d.img" >/dev/null 2>&1 || fail sfdisk
mke2fs -q -t ext4 -E offset=1048576 "$T/d.img" 8M >/dev/null 2>&1 || fail mke2fs
"$PY" "$(dirname "$0")/../parttable.py" gpt-set "$T/d.img" 2 10000 30000 || fail parttable
import "$T/d.img" adv24
advise overlap "RBD -p 1" 24 - "which entry is right is the owner's to know: mend the table (sfdisk)" -p 1 "$SPEC"

# 26: a clean filesystem, held
mke2fs -q -t ext4 "$T/c.img" 16M >/dev/null 2>&1 || fail mke2fs
import "$T/c.img" adv26
W26="stopping the client that has it open (a VM) is its owner's decision"
rm -f "$T/holder.pid"
qemu-nbd --fork --pid-file "$T/holder.pid" -f raw -k "$T/holder.sock" "$SPEC" || fail "qemu-nbd holder"
HOLDER=$(cat "$T/holder.pid")
PIDS+=("$HOLDER")
advise watcher RBD 26 - "$W26" "$SPEC"
kill "$HOLDER"
wait_exit "$HOLDER" "the qemu-nbd holder"
person_did "the client stopped" true "$SPEC"
# a lock with nobody watching: what a killed client leaves (here taken by
# hand, rbd lock add); removing it is a person's decision (is its owner
# gone?), the command as src/nbd/README.md gives it
rbd -c "$C" lock add rbd/adv26 e2trim-advice || fail "rbd lock add"
advise stale-lock RBD 26 - "a lock with no watcher: remove it (rbd lock rm) only once its owner is known gone" "$SPEC"
# the message names the command that removes that very lock (before:
# "a running VM ... has it open: stop it", with nothing to stop); run as
# the message gives it (CEPH_CONF names the cluster, as an operator's
# /etc/ceph/ceph.conf would)
owner=$(rbd -c "$C" lock ls --format json rbd/adv26 | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["locker"])')
cmd="rbd lock rm rbd/adv26 e2trim-advice $owner"
[[ $MSG == *"no client watches it"*"$cmd, then run e2trim again"* ]] ||
	{ echo "$MSG"; fail "a lock with no watcher: the message does not name '$cmd'"; }
person_did "$cmd" "$cmd" "$SPEC"

for i in adv13 adv17 adv24 adv26; do rbd -c "$C" rm --no-progress "rbd/$i" >/dev/null 2>&1; done
advice_table
finish
