# shellcheck shell=bash
# Sourced by scripts/setup.sh and scripts/test.sh: runs a step of the set-up
# with its output (apt, CMake, the compiler) appended to a log, and prints a
# line or two for it instead.
#
#   steps_log out/setup.log           # the log (DPEM_LOG), emptied
#   step "building build/dpem" scripts/build.sh
#
# On success it prints "== building build/dpem ... done (2 min 5 s)", followed
# by the compiler warnings of the step if there were any (the build should
# have none). On failure it prints the first error line and the last 30 lines
# of the step's output, names the log, and exits with the step's status.
# DPEM_FULL_LOG=1 (set by .ci/run) prints the step's whole output instead of
# its last 30 lines. A sudo password prompt still reaches the terminal: sudo
# asks on the terminal, not on standard output.

# Starts the log of the steps, DPEM_LOG, at $1 (its folder created, the file
# emptied).
steps_log() {
  mkdir -p "$(dirname "$1")"
  export DPEM_LOG="$1"
  : >"$DPEM_LOG"
}

step_elapsed() {
  local s=$((SECONDS - $1))
  if [ "$s" -ge 60 ]; then echo "$((s / 60)) min $((s % 60)) s"; else echo "$s s"; fi
}

step() {
  local label="$1"
  shift
  local first_line start rc=0
  first_line=$(($(wc -l <"$DPEM_LOG") + 2))
  start=$SECONDS
  printf '== %s ... ' "$label"
  echo "== $label: $*" >>"$DPEM_LOG"
  "$@" >>"$DPEM_LOG" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "done ($(step_elapsed "$start"))"
    local warnings
    warnings=$(tail -n +"$first_line" "$DPEM_LOG" | grep -c ': warning:' || true)
    if [ "$warnings" -gt 0 ]; then
      echo "   $warnings compiler warnings (the first 10 below; all of them in $DPEM_LOG):"
      tail -n +"$first_line" "$DPEM_LOG" | grep ': warning:' | head -n 10 | sed 's/^/   /'
    fi
    return 0
  fi
  echo "FAILED (exit status $rc, after $(step_elapsed "$start"))"
  {
    # The compiler's, CMake's or apt's first error; else ninja's FAILED line.
    local pattern first_error=""
    for pattern in ': (fatal )?error:|^CMake Error|^E: ' '^FAILED:'; do
      [ -n "$first_error" ] && break
      first_error=$(tail -n +"$first_line" "$DPEM_LOG" | grep -m 1 -E "$pattern" || true)
    done
    if [ -n "$first_error" ]; then echo "first error: $first_error"; fi
    if [ "${DPEM_FULL_LOG:-0}" = 1 ]; then
      echo "---- output of this step ($DPEM_LOG) ----"
      tail -n +"$first_line" "$DPEM_LOG"
    else
      echo "---- last 30 lines of $DPEM_LOG ----"
      tail -n 30 "$DPEM_LOG"
    fi
    echo "---- the whole log: $DPEM_LOG"
  } >&2
  exit "$rc"
}
