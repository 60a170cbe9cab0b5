#!/bin/bash
# tests/names.sh OBJECT... - names of our own (issue 43; src/README.md,
# "Folders and name prefixes"): no global symbol that an object of the
# library or the command defines lies in a namespace a dependency owns.
# One line per offender (object, symbol), then a count; exit 1 if any.
set -u
re='^(nbd_|rbd_|rados_|ext2fs_|e2p_|blkid_|io_uring_|com_err)'
n=0 bad=0
while IFS= read -r o; do
	n=$((n + 1))
	nm "$o" >/dev/null 2>&1 || { echo "names: $o: nm cannot read it"; bad=$((bad + 1)); continue; }
	while read -r _ type sym; do
		case $type in [TDBRGSVW]) ;; *) continue ;; esac
		[[ $sym =~ $re ]] || continue
		echo "names: ${o#./}: $sym, in a dependency's namespace (src/README.md: e2t_ in front)"
		bad=$((bad + 1))
	done < <(nm -g --defined-only "$o" 2>/dev/null | awk 'NF == 3')
done < <(printf '%s\n' "$@")
[ "$n" -gt 0 ] || { echo "names: no objects given"; exit 1; }
echo "names: $n objects, $bad symbols in a dependency's namespace"
[ "$bad" = 0 ]
