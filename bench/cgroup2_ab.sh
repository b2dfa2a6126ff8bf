#!/bin/bash
# cgroup2_ab.sh — two build trees' sandbox_bench, alternating, inside the cgroup v2 guest
# (scripts/cgroup2-vm.sh), for a change whose cost only shows on cgroup v2.
#   bench/cgroup2_ab.sh [-n JOBS] [-r ROUNDS] OLD_BUILD NEW_BUILD [-- sandbox_bench args]
# Default: 100 jobs of print(1) in zygote mode under the full profile, 5 rounds, each round
# OLD then NEW. Guest times are software emulation's: compare the two sides, not with the host.
set -eu -o pipefail
n=100 rounds=5
while getopts n:r: o; do
  case $o in n) n=$OPTARG;; r) rounds=$OPTARG;; *) exit 2;; esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
shift 2
[ "${1:-}" = -- ] && shift
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(-z -c 'print(1)' full)
here=$(cd "$(dirname "$0")/.." && pwd)
# Only this directory and the two trees are shared: the guest's /tmp stays its own tmpfs.
dir=$(mktemp -d /tmp/codeq-cgroup2-ab.XXXXXX)
trap 'rm -rf "$dir"' EXIT
script=$dir/ab.sh
{
  echo 'for round in $(seq '"$rounds"'); do'
  for side in old new; do
    b=$([ $side = old ] && echo "$old" || echo "$new")
    printf '  echo "round $round %s: $(%q/sandbox_bench -n %d' "$side" "$b" "$n"
    printf ' %q' "${args[@]}"
    printf ' 2>&1 | tail -1)"\n'
  done
  echo done
} > "$script"
shares=(-s "$dir" -s "$old" -s "$new")
bash "$here/scripts/cgroup2-vm.sh" "${shares[@]}" -m 3G -t 1800 -- sh "$script"
