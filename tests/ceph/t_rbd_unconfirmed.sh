#!/bin/bash
# A discard on its way when the cluster stops answering (issue 46, point
# 3's count): the OSD holds the request, librados gives up waiting for
# it (the op timeout), and the OSD carries it out once it runs again.
# The report must not say "0 B trimmed in 0 requests; the rest of the
# free space is untouched" then: that request is counted apart, sent but
# not confirmed, with its bytes and where they start.
#
# No timing: e2trim is held by its pause point rbd-request (its first
# request checked and not yet sent), the OSD is stopped (SIGSTOP: it
# keeps what reaches its socket, where `ceph osd pause` would hold the
# requests in the client), e2trim goes on and sends the request; its
# next check asks the OSD and times out (the name's op timeout, 5 s), so
# the run stops; the request in flight times out too.  Once e2trim asks
# for its own lock (its client's objecter_requests shows the question:
# an event), the OSD is let go on: it carries out the discard it holds,
# then answers e2trim, which removes its lock.  Then:
#  - exit 1, and the message says how many requests are unconfirmed (at
#    least that first one), their bytes and their first byte (main before: "after 0 B (0 bytes) trimmed in 0
#    requests", nothing more);
#  - the blocks that differ from the imported image (free blocks hold
#    0x5a, a discard reads as zeros) are more than the bytes reported
#    trimmed (the unconfirmed request was carried out), no more than
#    those and the unconfirmed bytes together, none before the first
#    unconfirmed byte unless trimmed, none at or after the byte the
#    message says nothing was sent from;
#  - no lock is left.
# The image has no object map: librbd would first mark the objects in
# it, a round trip of its own, and a stopped OSD holds that one first,
# so that the discard itself is never sent (then "unconfirmed" is right
# too, but the image does not show it).
. "$(dirname "$0")/ceph_lib.sh"
own_images unconf
: "${CEPH_DIR:?run through tests/ceph/run.sh}"
IMG=rbd/unconf
read -r osd osd_pid < <(awk '/^osd\./ {print $1, $2; exit}' "$CEPH_DIR/pids")
{ [ -n "${osd_pid:-}" ] && kill -0 "$osd_pid"; } || fail "no running OSD in $CEPH_DIR/pids"
STOPPED=
# shellcheck disable=SC2317  # called by the trap
go_on() { [ -z "$STOPPED" ] || kill -CONT "$osd_pid" 2>/dev/null; STOPPED=; }
# shellcheck disable=SC2317  # called by the trap
on_exit() {
	local rc=$?
	go_on
	ceph_exit "$rc"
}
trap on_exit EXIT

# shellcheck disable=SC2119  # no [client] lines more
asok_conf
SPEC="rbd:$IMG:conf=$T/e2trim.conf:rados_osd_op_timeout=5"

mkfs "$T/fs.img" 128M -t ext4 -b 4096
age "$T/fs.img" 5
rbd -c "$C" import --no-progress --image-feature layering,exclusive-lock \
	"$T/fs.img" "$IMG" || fail "rbd import"
id=$(image_id "$IMG")
locks() { locks_of "$IMG"; }
# e2trim's own look for its lock, once librbd's release gave up
# shellcheck disable=SC2317  # called through until_event
asking_own() { e2trim_waits_on "rbd_header.$id" "call lock.get_info"; }

PAUSE_STAGE=rbd-request pause_e2trim -v "$SPEC"
[ -n "$(locks)" ] || fail "e2trim holds no lock at its first request"
kill -STOP "$osd_pid" || fail "cannot stop $osd"
STOPPED=1
# the signal is sent, not yet taken: every thread of the OSD stopped
# (state T) before e2trim sends anything
# shellcheck disable=SC2317  # called through until_event
osd_stopped() { awk '{ sub(/.*\) /, ""); if ($1 != "T" && $1 != "t") exit 1 }' /proc/"$osd_pid"/task/*/stat; }
until_event "every thread of $osd stopped" osd_stopped
pause_release 1
until_event "e2trim looking for its own lock" asking_own
go_on
resume_e2trim
cat "$OUT" "$ERR"
assert_rc 1 "a run whose OSD stopped answering with a request on its way"
assert_eq "$(locks)" "" "locks once the OSD answered again"

# what the message says
re='.*nothing was sent from byte \([0-9]*\) on after .* (\([0-9]*\) bytes) trimmed in \([0-9]*\) requests\{0,1\}, and \([0-9]*\) requests\{0,1\} of [^(]* (\([0-9]*\) bytes) from byte \([0-9]*\) on w[a-z]* sent but failed or got no answer.*'
read -r from bytes reqs nu ubytes ufrom < <(sed -n "s/$re/\1 \2 \3 \4 \5 \6/p" "$ERR")
[ -n "${ufrom:-}" ] || fail "the message counts no request sent and not confirmed (it says: $(tail -1 "$ERR"))"
# at least the one held at the pause point; librbd may take a few more
# before a check of e2trim's fails
{ [ "$nu" -ge 1 ] && [ "$ubytes" -gt 0 ]; } || fail "$nu requests of $ubytes bytes unconfirmed: at least one was on its way"

rbd -c "$C" export --no-progress "$IMG" "$T/x.img" >/dev/null 2>&1 || fail "rbd export"
read -r changed first last < <(blocks_changed "$T/fs.img" "$T/x.img")
rm -f "$T/x.img"
[ "$changed" -gt "$bytes" ] ||
	fail "the image changed by $changed bytes, no more than the $bytes reported trimmed: the request on its way was not carried out, the test shows nothing"
[ "$changed" -le $((bytes + ubytes)) ] ||
	fail "the image changed by $changed bytes, more than $bytes trimmed and $ubytes unconfirmed"
[ "$bytes" -gt 0 ] || [ "$first" -ge "$ufrom" ] ||
	fail "a byte changed at $first, before the first unconfirmed byte $ufrom, with nothing trimmed"
[ "$last" -le "$from" ] || fail "a byte changed at $last, after byte $from, from which nothing was sent"
note "OSD stopped with a request on its way: 1, '$bytes bytes in $reqs requests' and $nu unconfirmed ($ubytes bytes from byte $ufrom); the image changed by $changed bytes, none after byte $from; no lock left"
exit 0
