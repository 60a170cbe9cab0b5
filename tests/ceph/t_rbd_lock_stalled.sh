#!/bin/bash
# A stop while e2trim's lock request is never answered (issue 46, point
# 4): every check passed on the read-only open, e2trim is held right
# before it asks for the exclusive lock (pause point rbd-lock), and the
# cluster stops answering (`ceph osd pause`: every client's requests
# wait in the client).  The name sets librados' timeouts to 0 (none), so
# only e2trim's own wait bounds the request.  Events, never a time: e2trim's
# client has the paused map (its objecter's map_epoch, through its own
# admin socket), then is let go and is seen waiting for the header
# (objecter_requests); then SIGTERM.  It must end with 130 by its own
# wait's look at the stop (not by the command's stop watch, which ends
# the process 10 s after a stop and says so; its 60 s bound for a lock
# request would end it with another code), and
# once the cluster answers again no lock is left and the image is as
# imported.
# e2e: no-sanitize (the stuck connection is left to the process's end on purpose: librbd's own objects then read as leaks)
. "$(dirname "$0")/ceph_lib.sh"
own_images lockstall
IMG=rbd/lockstall
# shellcheck disable=SC2119  # no [client] lines more
asok_conf
SPEC="rbd:$IMG:conf=$T/e2trim.conf:rados_osd_op_timeout=0:rados_mon_op_timeout=0:client_mount_timeout=0"

mkfs "$T/fs.img" 128M -t ext4 -b 4096
age "$T/fs.img" 5
rbd -c "$C" import --no-progress "$T/fs.img" "$IMG" || fail "rbd import"
sha0=$(sha_of "$T/fs.img")
id=$(image_id "$IMG")
locks() { locks_of "$IMG"; }
# shellcheck disable=SC2317  # called through until_event
waits_on_header() { e2trim_waits_on "rbd_header.$id"; }

PAUSE_STAGE=rbd-lock pause_e2trim "$SPEC"
assert_eq "$(locks)" "" "locks before e2trim asks for one"
cluster_pause
epoch=$(osd_epoch)
until_event "e2trim's client with the paused map (epoch $epoch)" e2trim_has_map "$epoch"
pause_release 1
until_event "e2trim's lock request waiting" waits_on_header
kill -TERM "$(cat "$PAUSE.pid")"
resume_e2trim
cat "$ERR"
assert_rc 130 "SIGTERM while the lock request is not answered"
# the library's own wait obeyed it, not the command's last resort (its
# stop watch ends the process 10 s after a stop and says so)
! grep -q "still waiting for the Ceph cluster" "$ERR" ||
	fail "the lock request did not obey the stop: the command's stop watch ended the process"
cluster_unpause
assert_eq "$(locks)" "" "locks once the cluster answers again"
rbd -c "$C" export --no-progress "$IMG" "$T/x.img" >/dev/null 2>&1 || fail "rbd export"
assert_eq "$(sha_of "$T/x.img")" "$sha0" "the image after the stop"
note "SIGTERM with the lock request unanswered: 130 ($(tail -1 "$ERR")), no lock, image as imported"
exit 0
