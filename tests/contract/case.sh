#!/bin/bash
# tests/contract/case.sh KIND SCENARIO: one case of the suite (run.sh
# runs them all).  Exit 0 pass, 77 skip, 78 not applicable (the reason
# on its "N/A: " line), anything else a failure.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC1090
. "$CX/kinds/$1.sh"
# shellcheck disable=SC1090
. "$CX/scenarios/$2.sh"
why=$(kind_na "$2")
[ -z "$why" ] || na "$why"
scenario_run
