#!/bin/bash
# How e2trim asks Ceph about an image (watchers, locks, granularity, rbd
# du's count, where it holds data): librbd in the process, so that a run
# starts no `rbd` command at all (each costs ~0.15 s); and where librbd
# cannot be loaded (here: a librados.so.2 that is not a library, first on
# LD_LIBRARY_PATH), the rbd command, with the same result.  Wrappers on
# PATH log every rbd and qemu-nbd that e2trim starts.  Both runs: exit 0,
# the JSON's allocated_before/after are what rbd du --exact says, the same
# bytes trimmed, e2fsck -fn clean on the image exported.
. "$(dirname "$0")/ceph_lib.sh"
ERR=$T/err

mkdir -p "$T/bin" "$T/nolib"
printf 'not a library\n' >"$T/nolib/librados.so.2"
for c in rbd qemu-nbd; do
	# the wrapped programs load the real libraries ($1 and $@ are the
	# wrapper's own, not expanded here)
	# shellcheck disable=SC2016
	printf '#!/bin/sh\necho "%s $1" >>"%s"\nexec env -u LD_LIBRARY_PATH /usr/bin/%s "$@"\n' \
		"$c" "$T/runs" "$c" >"$T/bin/$c"
	chmod 755 "$T/bin/$c"
done

mkfs "$T/fs.img" 256M -t ext4 -b 4096
age "$T/fs.img" 3
for i in lib cmd; do
	rbd -c "$C" import --no-progress "$T/fs.img" "rbd/how-$i" || fail "rbd import"
done

# run NAME [LD_LIBRARY_PATH]: e2trim --json on rbd/how-NAME, its runs of
# rbd and qemu-nbd in $T/runs.NAME
run() {
	local name=$1 libs=${2:-}
	: >"$T/runs"
	before=$(du_exact "rbd/how-$name")
	LD_LIBRARY_PATH=$libs PATH=$T/bin:$PATH "$E2TRIM" --json \
		"rbd:rbd/how-$name:conf=$C" >"$T/j.$name" 2>"$ERR"; RC=$?
	cat "$ERR"
	assert_rc 0 "e2trim ($name)"
	mv "$T/runs" "$T/runs.$name"
	after=$(du_exact "rbd/how-$name")
	python3 - "$T/j.$name" "$before" "$after" <<'PY' || fail "$name: the JSON's allocated_before/after are not rbd du's"
import json, sys
r = json.load(open(sys.argv[1]))["targets"][0]["result"]
b, a = int(sys.argv[2]), int(sys.argv[3])
assert r["allocated_before"] == b and r["allocated_after"] == a and a < b, (r, b, a)
PY
	rbd -c "$C" export --no-progress "rbd/how-$name" "$T/out.img" >/dev/null 2>&1 || fail "rbd export"
	e2fsck -fn "$T/out.img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$name: e2fsck -fn"; }
	rm -f "$T/out.img"
	note "$name: rbd du --exact $((before >> 20)) -> $((after >> 20)) MiB; started: $(sort "$T/runs.$name" | uniq -c | sed "s/^ *//" | paste -sd, -)"
}

run lib
[ "$(grep -c '^rbd ' "$T/runs.lib")" = 0 ] || { cat "$T/runs.lib"; fail "librbd loads, yet e2trim ran the rbd command"; }
[ "$(grep -c '^qemu-nbd ' "$T/runs.lib")" = 2 ] || fail "not two qemu-nbd (read-only, then writable)"

run cmd "$T/nolib"
# status and lock ls at the start and at each of the two rechecks
for sub in status lock; do
	[ "$(grep -c "^rbd $sub\$" "$T/runs.cmd")" = 3 ] || { cat "$T/runs.cmd"; fail "without librbd: not three rbd $sub"; }
done
for sub in config du diff; do
	grep -q "^rbd $sub\$" "$T/runs.cmd" || { cat "$T/runs.cmd"; fail "without librbd: no rbd $sub"; }
done
python3 - "$T/j.lib" "$T/j.cmd" <<'PY' || fail "librbd and the rbd command led to different trims"
import json, sys
a, b = (json.load(open(f))["targets"][0]["result"] for f in sys.argv[1:])
for k in ("bytes_trimmed", "requests", "allocated_before", "allocated_after"):
    assert a[k] == b[k], (k, a[k], b[k])
PY
for i in lib cmd; do rbd -c "$C" rm --no-progress "rbd/how-$i" >/dev/null 2>&1; done
exit 0
