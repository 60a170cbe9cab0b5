#!/bin/bash
# A stop while the cluster does not answer (issue 46, points 3 and 4):
# e2trim holds the image's exclusive lock (held at the trim's start), the
# cluster stops answering (`ceph osd pause`: every client's requests
# wait, as with OSDs gone), and once e2trim's own client has the paused
# map (its objecter's map_epoch, through its admin socket: an event) it
# is sent SIGTERM, itself (e2trim_term), and goes on.  The stop comes
# after the pause, not before: the command's stop watch ends the process
# 10 s after a stop, and a `ceph osd pause` slow under load counted in
# those 10 s once (the watch, not the library, ended it, and no `rbd lock
# rm` was printed).  The name sets librados' timeouts to 0 (none), so only
# e2trim's own wait bounds the release of its lock: it must end with 130,
# say that its lock could not be released and give the exact `rbd lock
# rm` for it.  Once the cluster answers again that command, run as
# printed, leaves no lock, and the image is as imported (nothing was
# trimmed).
# e2e: no-sanitize (the stuck connection is left to the process's end on purpose: librbd's own objects then read as leaks)
. "$(dirname "$0")/ceph_lib.sh"
own_images stalled
IMG=rbd/stalled
# shellcheck disable=SC2119  # no [client] lines more
asok_conf
SPEC="rbd:$IMG:conf=$T/e2trim.conf:rados_osd_op_timeout=0:rados_mon_op_timeout=0:client_mount_timeout=0"

mkfs "$T/fs.img" 128M -t ext4 -b 4096
age "$T/fs.img" 5
rbd -c "$C" import --no-progress "$T/fs.img" "$IMG" || fail "rbd import"
sha0=$(sha_of "$T/fs.img")
locks() { locks_of "$IMG"; }

pause_e2trim "$SPEC"
[ -n "$(locks)" ] || fail "e2trim holds no lock at the trim's start"
cluster_pause
epoch=$(osd_epoch)
until_event "e2trim's client with the paused map (epoch $epoch)" e2trim_has_map "$epoch"
# shellcheck disable=SC2119  # pause_e2trim's e2trim
e2trim_term
resume_e2trim
cat "$ERR"
assert_rc 130 "SIGTERM while the cluster does not answer"
cmd=$(sed -n "s/.*could not release its exclusive lock.*remove it: \(rbd lock rm .*\)$/\1/p" "$ERR")
[ -n "$cmd" ] || fail "no rbd lock rm for the lock e2trim could not release"
cluster_unpause
# the lock is e2trim's, and the command names exactly it
IFS=$'\t' read -r id owner < <(locks)
assert_eq "$cmd" "rbd lock rm $IMG '$id' $owner" "the printed command"
eval "rbd -c \"\$C\" ${cmd#rbd }" || fail "the printed command: $cmd"
assert_eq "$(locks)" "" "locks after the printed command"
rbd -c "$C" export --no-progress "$IMG" "$T/x.img" >/dev/null 2>&1 || fail "rbd export"
assert_eq "$(sha_of "$T/x.img")" "$sha0" "the image after the stop"
note "SIGTERM with the cluster paused: 130 within the guard, '$cmd' printed and run: no lock left, image as imported"
exit 0
