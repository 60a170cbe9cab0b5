#!/bin/bash
# A trim that the NBD server carries out but never answers, and then the
# connection lost (issue 46, point 3's count, through libnbd): the report
# must not say that only the answered requests were trimmed and "the rest
# of the free space is untouched".  libnbd fails every command in flight
# when the connection dies (their completions run, with ENOTCONN): each
# is counted apart, sent but not confirmed, with its bytes and where they
# start.
#
# The server is nbdkit's eval plugin over a raw ext4 image (aged: every
# free block holds 0x5a, a punched hole reads as zeros), one request at a
# time (the plugin's default thread model).  Its trim punches the hole;
# the third one then says so into a FIFO (the event the test waits for)
# and blocks, unanswered.  e2trim has sent many more meanwhile (up to 64
# in flight; the filesystem, 1 KiB blocks in 1 MiB groups without
# flex_bg, has more free extents than that, so e2trim waits for a free
# slot when the connection goes) and the server reads none of them.  The
# test then kills nbdkit (SIGKILL: the connection is lost, no reply
# sent).  No timing: the FIFO's line, or e2trim's end, is waited for.
# Then:
#  - exit 1 (a discard failed), and the message counts at least one
#    request unconfirmed, with bytes, from the held trim's first byte
#    (main before: "after 219 KiB (224256 bytes) trimmed in 2 requests;
#    the rest of the free space is untouched", nothing more);
#  - --list (in the JSON document) names what was sent: their bytes are
#    those trimmed and those unconfirmed together, each request counted
#    once, and the plan went on beyond them (nothing sent from there);
#  - the bytes that differ from the image before (1 KiB blocks compared)
#    are more than those reported trimmed (the held trim was carried
#    out), no more than those and the unconfirmed together, no more
#    before the first unconfirmed byte than the trimmed, and none at or
#    after the end of what was sent; the used blocks are unchanged;
#  - the JSON result counts the unconfirmed requests and bytes as the
#    message does.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
command -v nbdkit >/dev/null || skip "nbdkit not installed (make deps installs it)"
nbdkit --dump-plugin eval >/dev/null 2>&1 || skip "nbdkit's eval plugin not installed"

mkfs "$T/aged.raw" 128M -t ext4 -b 1024 -g 1024 -O ^flex_bg
age "$T/aged.raw" 3
cp "$T/aged.raw" "$T/fs.raw"
used0=$(used_blocks_digest "$T/aged.raw")
planned=$(oracle_extents "$T/aged.raw" | wc -l)
[ "$planned" -gt 70 ] || fail "$planned free extents: too few for 64 requests in flight and more waiting"

# $T/held: the held trim's line ("held OFFSET COUNT PID"), or e2trim's
# end ("exited"); $T/hold: what the held trim waits on (opened by no one)
mkfifo "$T/held" "$T/hold" "$T/kit.pid" || fail "mkfifo"
exec 6<>"$T/held"
# the trim: the hole punched, then from the third on held unanswered
trim=$(cat <<EOF
echo "\$4 \$3" >>'$T/trims'
fallocate -p -o "\$4" -l "\$3" '$T/fs.raw' || exit 1
[ "\$(wc -l <'$T/trims')" -ge 3 ] || exit 0
echo "held \$4 \$3 \$\$" >'$T/held'
read -r _ <'$T/hold'
exit 1
EOF
)
# nbdkit in the foreground; its pid file is a FIFO that it writes once
# it accepts connections (as in t_nbd_uri_refusals.sh)
exec 5<>"$T/kit.pid"
nbdkit -f -U "$T/kit.sock" -P "$T/kit.pid" eval \
	get_size="stat -c %s '$T/fs.raw'" \
	pread="dd if='$T/fs.raw' skip=\$4 count=\$3 iflag=skip_bytes,count_bytes status=none" \
	pwrite="dd of='$T/fs.raw' seek=\$4 conv=notrunc oflag=seek_bytes status=none" \
	can_trim='exit 0' \
	trim="$trim" &
PIDS+=("$!")
kit=$!
read -r -t 300 -u 5 pid || true
exec 5>&-
[ "$pid" = "$kit" ] || fail "nbdkit did not start"

(
	rc=0
	# shellcheck disable=SC2086
	${E2TRIM_WRAP:-} "$E2TRIM" -v --list --json "nbd+unix:///?socket=$T/kit.sock" \
		>"$T/out" 2>"$T/err" || rc=$?
	echo "$rc" >"$T/rc"
	echo exited >&6
) &
run=$!
read -r -t 300 -u 6 what off len spid ||
	fail "neither a held trim nor e2trim's end within 300 s (guard)"
[ "$what" = held ] || { cat "$T/err" >&2; fail "e2trim ended (exit $(cat "$T/rc")) before the server held a trim"; }
PIDS+=("$spid")
kill -9 "$kit" || fail "cannot kill nbdkit"
wait "$kit" 2>/dev/null	# gone: its socket closed, the connection lost
wait "$run"
kill "$spid" 2>/dev/null
RC=$(cat "$T/rc") OUT=$T/out ERR=$T/err
cat "$ERR"
assert_rc 1 "a run whose server lost the connection with a trim held"
[ "$(wc -l <"$T/trims")" = 3 ] || fail "the server took $(wc -l <"$T/trims") trims, not 3: its requests were not one at a time"

# what the message says
re='.*(\([0-9]*\) bytes) trimmed in \([0-9]*\) requests\{0,1\}, and \([0-9]*\) requests\{0,1\} of [^(]* (\([0-9]*\) bytes) from byte \([0-9]*\) on w[a-z]* sent but failed or got no answer.*'
read -r bytes reqs nu ubytes ufrom < <(sed -n "s/$re/\1 \2 \3 \4 \5/p" "$ERR")
[ -n "${ufrom:-}" ] || fail "the message counts no request sent and not confirmed (it says: $(tail -1 "$ERR"))"
[ "$nu" -ge 1 ] || fail "$nu requests unconfirmed: at least the held one was on its way"
[ "$ubytes" -gt 0 ] || fail "$ubytes bytes unconfirmed: at least the held trim's were on their way"
assert_eq "$ufrom" "$off" "the first unconfirmed byte (the held trim's, as the server got it)"

# what the JSON says; --list: the ranges sent
read -r jrc jnu jub jreqs jbytes sent_n sent_sum sent_end < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
t = d["targets"][0]
r = t["result"]
l = t["list"] or []
print(d["exit_code"], r["requests_unconfirmed"], r["bytes_unconfirmed"],
      r["requests"], r["bytes_trimmed"], len(l), sum(x["length"] for x in l),
      max([x["start"] + x["length"] for x in l] or [0]))' "$OUT") ||
	fail "the JSON document lacks result.requests_unconfirmed or the list"
assert_eq "$jrc $jnu $jub $jreqs $jbytes" "1 $nu $ubytes $reqs $bytes" \
	"the JSON's exit code, unconfirmed requests and bytes, requests and bytes trimmed"
# every request sent (one per extent here: nbdkit calls it all data, and
# no extent nears 1 GiB) completed as trimmed or as unconfirmed, once
assert_eq "$sent_sum" "$((bytes + ubytes))" "the bytes --list says were sent"
[ "$sent_n" -lt "$planned" ] || fail "all $planned extents were sent: e2trim never waited for a free slot"

read -r changed below first last < <(python3 - "$T/aged.raw" "$T/fs.raw" "$ufrom" <<'PY'
import sys
a, b = (open(p, "rb") for p in sys.argv[1:3])
ufrom = int(sys.argv[3])
n = below = last = 0
first = -1
off = 0
while True:
    x, y = a.read(1024), b.read(1024)
    if not x:
        break
    if x != y:
        n += 1024
        below += 1024 if off < ufrom else 0
        first = off if first < 0 else first
        last = off + 1024
    off += 1024
print(n, below, first, last)
PY
)
[ "$changed" -gt "$bytes" ] ||
	fail "the image changed by $changed bytes, no more than the $bytes reported trimmed: the held trim was not carried out, the test shows nothing"
[ "$changed" -le $((bytes + ubytes)) ] ||
	fail "the image changed by $changed bytes, more than $bytes trimmed and $ubytes unconfirmed"
[ "$below" -le "$bytes" ] ||
	fail "$below bytes changed before the first unconfirmed byte $ufrom, more than the $bytes trimmed"
[ "$last" -le "$sent_end" ] || fail "a byte changed at $last, after byte $sent_end, from which nothing was sent"
assert_eq "$(used_blocks_digest "$T/fs.raw")" "$used0" "used blocks"
note "connection lost with a trim held: exit 1, '$bytes bytes in $reqs requests' and $nu unconfirmed ($ubytes bytes from byte $ufrom), $sent_n of $planned extents sent; the image changed by $changed bytes (from byte $first), none after byte $sent_end"
exit 0
