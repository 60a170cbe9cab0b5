#!/bin/bash
# How e2trim reads, trims and asks Ceph about an image (watchers, locks,
# granularity, rbd du's count, where it holds data): librbd in the
# process, so that a run starts no `rbd` command (each costs ~0.15 s) and
# no qemu-nbd at all (it used to start two: read-only, then writable);
# and where librbd cannot be loaded (here: a librados.so.2 that is not a
# library, first on LD_LIBRARY_PATH), a refusal that names librbd1, the
# image unchanged.  Wrappers on PATH log every rbd and qemu-nbd that
# e2trim starts.  The run: exit 0, the JSON's allocated_before/after are
# what rbd du --exact says, e2fsck -fn clean on the image exported.
. "$(dirname "$0")/ceph_lib.sh"
own_images how-lib how-cmd
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
[ "$(grep -c '^qemu-nbd ' "$T/runs.lib")" = 0 ] || { cat "$T/runs.lib"; fail "e2trim started qemu-nbd: the image is read and trimmed through librbd"; }

# without librbd: refused (1), naming the package, nothing started
: >"$T/runs"
sha0=$(rbd -c "$C" export --no-progress rbd/how-cmd - 2>/dev/null | sha256sum)
LD_LIBRARY_PATH=$T/nolib PATH=$T/bin:$PATH "$E2TRIM" \
	"rbd:rbd/how-cmd:conf=$C" >"$T/out" 2>"$ERR"; RC=$?
cat "$ERR"
assert_rc 1 "without librbd"
assert_grep "install librbd1" "$ERR" "the package to install"
[ ! -s "$T/runs" ] || { cat "$T/runs"; fail "without librbd, e2trim started a program"; }
assert_eq "$(rbd -c "$C" export --no-progress rbd/how-cmd - 2>/dev/null | sha256sum)" "$sha0" "the image after the refusal"
note "without librbd: refused (1), naming librbd1, image unchanged"
for i in lib cmd; do rbd -c "$C" rm --no-progress "rbd/how-$i" >/dev/null 2>&1; done
exit 0
