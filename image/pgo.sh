#!/usr/bin/env bash
# The image's kubeheal binary, built with profile-guided optimisation (PGO): an instrumented
# build parses every golden log in tests/fixtures (real tools' output), LLVM merges the counts it
# wrote, and the release build lays out and inlines the code by them. The parser is branchy code
# whose hot paths the compiler cannot guess: on the parser bench's log the PGO binary takes about
# a fifth less CPU time, on logs it was not trained on (outside trials' logs) about an eighth.
#
#   image/pgo.sh build   # the binary at $KUBEHEAL_PGO_DIR/kubeheal
#   image/pgo.sh test    # build, then the parser's golden and combined-log tests on PGO code
#   image/pgo.sh bench   # build, then the parser bench with the PGO binary timed beside it
#
# KUBEHEAL_PGO_DIR (default target/pgo) holds the two builds' target folders, the raw and
# merged profiles and the binary; CI keeps it under ~/.cache/kubeheal so that later runs build
# only what changed. Needs LLVM's llvm-profdata of the toolchain's own LLVM version: rustup's
# llvm-tools component (installed here when rustup is there).
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-build}"
[ $# -gt 0 ] && shift
case "$mode" in
  build | test | bench) ;;
  *) echo "usage: image/pgo.sh build|test|bench [cargo bench arguments]" >&2; exit 2 ;;
esac

work="${KUBEHEAL_PGO_DIR:-target/pgo}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"

host="$(rustc -vV | sed -n 's/^host: //p')"
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup >/dev/null; then
  rustup component add llvm-tools >/dev/null
fi
if [ ! -x "$profdata" ]; then
  echo "image/pgo.sh: $profdata is missing: install LLVM's tools of this toolchain (rustup component add llvm-tools)" >&2
  exit 1
fi

# 1. The instrumented binary. Each process writes its counts to a file of its own in raw/.
rm -rf "$work/raw"
RUSTFLAGS="-Cprofile-generate=$work/raw" \
  cargo build --release --locked --bin kubeheal --target-dir "$work/gen"

# 2. The training run: every golden log, in the workspace of the project it was made from.
logs=0
nowhere="$(mktemp -d)"
trap 'rm -rf "$nowhere"' EXIT
for log in tests/fixtures/logs/*.log tests/fixtures/library_logs/*.log; do
  expected="${log%.log}.expected.json"
  project=""
  [ -f "$expected" ] && project="$(sed -n 's/^  "project": "\(.*\)",\{0,1\}$/\1/p' "$expected" | head -n 1)"
  workspace="tests/fixtures/projects/$project"
  # The library logs' projects are not in the repository: no files to resolve paths with.
  [ -n "$project" ] && [ -d "$workspace" ] || workspace="$nowhere"
  # A log the parser rejects would be a bug the golden tests report; here it only trains.
  "$work/gen/release/kubeheal" parse --workspace "$workspace" "$log" >/dev/null 2>&1 || true
  logs=$((logs + 1))
done
[ "$logs" -gt 100 ] || { echo "image/pgo.sh: only $logs golden logs found to train on" >&2; exit 1; }
"$profdata" merge -o "$work/kubeheal.profdata" "$work/raw"
echo "image/pgo.sh: profile of $logs golden logs in $work/kubeheal.profdata"

# 3. The optimised build. A function the training never ran is built as usual (no warning).
use_profile="-Cprofile-use=$work/kubeheal.profdata -Cllvm-args=-pgo-warn-missing-function=false"
RUSTFLAGS="$use_profile" cargo build --release --locked --bin kubeheal --target-dir "$work/use"
install -m 0755 "$work/use/release/kubeheal" "$work/kubeheal"
echo "image/pgo.sh: $work/kubeheal"
case "$mode" in
  build) ;;
  test)
    RUSTFLAGS="$use_profile" cargo test --release --locked --target-dir "$work/use" \
      --test parser_golden --test parser_combined --test parser_structured
    ;;
  bench)
    # The bench's own copy of the library is another crate to LLVM (its dependencies' features
    # differ): the profile does not apply to it. The binary is timed beside it instead.
    KUBEHEAL_BENCH_BIN="$work/kubeheal" cargo bench --locked --bench parser "$@"
    ;;
esac
