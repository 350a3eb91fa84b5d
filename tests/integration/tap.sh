# tap.sh -- what the server integration scripts share; sourced, never run:
#   . "$(dirname "$0")/tap.sh" NAME
# makes WORK (a temporary directory named after NAME, removed at exit), PIDS (servers the script
# starts and appends to; SPID is one more) killed at exit, and the PASS/FAIL counters with ok,
# not_ok, expect DESC ACTUAL WANTED and expect_grep DESC PATTERN FILE.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tg-$1.XXXXXX")
PIDS=()
SPID=""
PASS=0
FAIL=0

tap_cleanup() {
    local p
    for p in "${PIDS[@]}" $SPID; do
        kill -9 "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    rm -rf "$WORK"
}
trap tap_cleanup EXIT

ok() { PASS=$((PASS + 1)); echo "ok - $1"; }
not_ok() {
    FAIL=$((FAIL + 1))
    echo "not ok - $1"
    [ $# -gt 1 ] && echo "    $2" | head -c 600 && echo
}
expect() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', want '$3'"; fi; }
expect_grep() {
    if grep -qE -- "$2" "$3"; then ok "$1"; else not_ok "$1" "no /$2/ in: $(head -c 400 "$3")"; fi
}

# tap_serve NAME ARGS...: starts `$TG_BIN serve ARGS...` (the caller names --listen and
# --probe-listen, port 0 for free ports) with its log in $WORK/NAME.log, appends it to PIDS and sets
# SPID; waits up to 5 s for both listeners and sets WPORT and PPORT. Fails when either is missing.
tap_serve() {
    local name=$1
    shift
    "$TG_BIN" serve "$@" 2>"$WORK/$name.log" &
    SPID=$!
    PIDS+=("$SPID")
    for _ in $(seq 1 50); do
        grep -qs 'probes listening' "$WORK/$name.log" && break
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.1
    done
    WPORT=$(grep -o 'webhook listening on [^ ]* port [0-9]*' "$WORK/$name.log" | awk '{print $NF}')
    PPORT=$(grep -o 'probes listening on [^ ]* port [0-9]*' "$WORK/$name.log" | awk '{print $NF}')
    [ -n "$WPORT" ] && [ -n "$PPORT" ]
}
