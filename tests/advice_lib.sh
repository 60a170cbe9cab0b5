# shellcheck shell=bash
# tests/advice_lib.sh - the advice suite's steps, shared by
# tests/e2e/t_advice.sh, tests/e2e/t_advice_vm.sh and tests/ceph/t_rbd_advice.sh.
#
# A refusal's fix is followed to the letter: the command between the
# message's backquotes (--json's "fix", src/README.md's convention) is run
# with sh -c as it stands, and the next e2trim run must trim (0) or refuse
# with a code the first message announced (ADVICE_ANNOUNCED, set by the
# caller from what the message says comes next): a fix that turns one
# refusal into an unrelated one fails (issues 42, 45).  A fix with no command (a person's
# decision) must be expected by the caller, with the reason, which the
# table prints.  Source it after tests/lib.sh.
#
# The table: one line per case, "ADVICE|code|kind|condition|fix|result",
# printed as the test's notes by advice_table (grep -o 'ADVICE|.*').

ADVICE_ROWS=()
# a fix may be an e2trim command (--fsck): the one under test, by the name
# the message gives
mkdir -p "$T/bin"
ln -sf "$E2TRIM" "$T/bin/e2trim"
export PATH="$T/bin:$PATH"

# probe TARGET...: e2trim --json -n, run in $T; sets RC, FIX (the span
# between the message's first pair of backquotes; empty: none), MSG
# (stderr).  --json's "fix" must be null exactly when there is none (no
# python here: a python start per probe was most of the suite's time).
probe() {
	# shellcheck disable=SC2016  # backquotes, not a command
	local json=$T/probe.json re='`([^`]*)`'
	(cd "$T" && "$E2TRIM" --json -n "$@" >"$json" 2>"$T/probe.err")
	RC=$?
	MSG=$(cat "$T/probe.err")
	FIX=
	[[ $MSG =~ $re ]] && FIX=${BASH_REMATCH[1]}
	grep -q '"targets"' "$json" || { echo "$MSG"; fail "no JSON document for $*"; }
	if [ -z "$FIX" ]; then
		grep -q '"fix": null' "$json" || { echo "$MSG"; cat "$json"; fail "$*: no command in the message, but --json has a fix"; }
	else
		! grep -q '"fix": null' "$json" || { echo "$MSG"; fail "$*: a command in the message, but --json's fix is null"; }
	fi
}

# unxz_to XZ IMG: XZ decompressed into IMG, sparse
unxz_to() {
	xz -dc "$1" | dd of="$2" bs=1M iflag=fullblock conv=sparse status=none || fail "xz -dc $1"
}

# The codes a next run may give besides 0: those the first message
# announced, space-separated ("11" for a swap device: the message says it
# is swap, not ext).  Empty unless the caller sets it for one case.
ADVICE_ANNOUNCED=

# announced RC: 0, or a code the first message announced
announced() {
	[ "$1" = 0 ] && return 0
	[[ " $ADVICE_ANNOUNCED " == *" $1 "* ]]
}

# advise NAME KIND CODE WANT_NAME WHY ARGS...: ARGS (the target, as given to
# e2trim) is refused with CODE ("-": any refusal, 10 or more).  If the
# message gives a command, it must match the regex WANT_NAME (it names this
# very filesystem), it is run with sh -c in $T, and the next run must exit
# 0 or a code the message announced (ADVICE_ANNOUNCED).  If it gives none, WHY (the reason a
# person decides) must not be empty.  Sets ADVICE_CODE, ADVICE_MSG (the
# refusal's message), ADVICE_PERSON (1 when no command was given) and adds
# a row to the table.
advise() {
	local name=$1 kind=$2 want=$3 want_name=$4 why=$5 fix fixrc
	shift 5
	probe "$@"
	# shellcheck disable=SC2034  # ADVICE_MSG: for the caller
	ADVICE_CODE=$RC ADVICE_PERSON=0 ADVICE_MSG=$MSG
	if [ "$want" = - ]; then
		[ "$RC" -ge 10 ] || { echo "$MSG"; fail "$name ($kind): not refused (exit $RC)"; }
	else
		[ "$RC" = "$want" ] || { echo "$MSG"; fail "$name ($kind): exit $RC, not $want"; }
	fi
	if [ -z "$FIX" ]; then
		[[ $MSG != *'`'* ]] || { echo "$MSG"; fail "$name ($kind): backquotes in the message, but no \"fix\""; }
		[ -n "$why" ] || { echo "$MSG"; fail "$name ($kind): exit $RC with no command to run, and not listed as a person's decision"; }
		ADVICE_PERSON=1
		advice_row "$RC" "$kind" "$name" "person: $why" "-"
		return
	fi
	[[ $FIX =~ $want_name ]] || fail "$name ($kind): fix '$FIX' does not name $want_name"
	fix=$FIX
	(cd "$T" && sh -c "$fix") >"$T/fix.out" 2>&1
	fixrc=$?
	probe "$@"
	[ "$RC" != "$ADVICE_CODE" ] || { echo "$MSG"; cat "$T/fix.out"; fail "$name ($kind): '$fix' (exit $fixrc) left the same refusal, $ADVICE_CODE"; }
	announced "$RC" || { echo "$MSG"; cat "$T/fix.out"; fail "$name ($kind): after '$fix', exit $RC: an unrelated refusal, not one the message announced (${ADVICE_ANNOUNCED:-none})"; }
	advice_row "$ADVICE_CODE" "$kind" "$name" "$fix" "$RC"
}

# person_did WHAT CMD ARGS...: after a person's decision (advise gave no
# command), what that person would do (CMD, run with sh -c in $T): the
# next run on ARGS must exit 0 or a code the refusal announced.  The last
# row's result says so.
person_did() {
	local what=$1 cmd=$2 last
	shift 2
	[ "$ADVICE_PERSON" = 1 ] || fail "person_did: the last case gave a command"
	(cd "$T" && sh -c "$cmd") >"$T/fix.out" 2>&1 || { cat "$T/fix.out"; fail "$what: '$cmd' failed"; }
	probe "$@"
	[ "$RC" != "$ADVICE_CODE" ] || { echo "$MSG"; fail "after $what, the same refusal, $RC"; }
	announced "$RC" || { echo "$MSG"; fail "after $what, exit $RC: not one the refusal announced (${ADVICE_ANNOUNCED:-none})"; }
	last=$((${#ADVICE_ROWS[@]} - 1))
	ADVICE_ROWS[last]="${ADVICE_ROWS[last]%|-}|$RC once a person did: $what"
}

# advice_row CODE KIND CONDITION FIX RESULT
advice_row() {
	local IFS='|'
	ADVICE_ROWS+=("ADVICE|$*")
}

# advice_table: the table as the test's notes
advice_table() {
	local row
	note "ADVICE|code|kind|condition|fix as printed (or person: why)|exit after it"
	for row in "${ADVICE_ROWS[@]}"; do note "$row"; done
}
