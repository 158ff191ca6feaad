# Shared by the end-to-end command tests (sourced, not run): a scratch folder
# removed on exit, a failure count, and the checks they make.
#   source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
fails=0

expect() {  # expect NAME TEXT PATTERN: PATTERN (grep -E) must occur in TEXT
  if ! grep -Eq -- "$3" <<<"$2"; then
    echo "FAIL: $1: output lacks /$3/"
    fails=$((fails + 1))
  fi
}

reject() {  # reject NAME TEXT PATTERN: PATTERN (grep -E) must not occur in TEXT
  if grep -Eq -- "$3" <<<"$2"; then
    echo "FAIL: $1: output has /$3/"
    fails=$((fails + 1))
  fi
}

expect_rc() {  # expect_rc NAME GOT WANT
  if [ "$2" -ne "$3" ]; then
    echo "FAIL: $1: exit code $2, expected $3"
    fails=$((fails + 1))
  fi
}
