#!/usr/bin/env bash
# Before and after, side by side in one run: two release builds of the
# server alternating (three rounds), with the floor, under the same light
# bots as ../shared/peers/bench/compare.sh (400 players, compact snapshots).
#
#   git worktree add /tmp/old-tree <REV>
#   (cd /tmp/old-tree && CARGO_TARGET_DIR=$PWD/../old-target cargo build --release -p skirmish-server)
#   cargo build --release -p skirmish-server
#   docs/bench/before_after.sh /tmp/old-target/release/skirmish-server target/release/skirmish-server
#
# Run it from the project root, with ../shared beside it.
set -euo pipefail
old_bin=$(realpath "$1"); new_bin=$(realpath "$2")
here=$(realpath ../shared/peers)
work=${TMPDIR:-/tmp}/skirmish-peers
mkdir -p "$work"
tar -C "$here" --exclude node_modules --exclude logs --exclude results -cf - . | tar -C "$work" -xf -
if [ ! -d "$work/node_modules/ws" ]; then (cd "$work" && npm install --no-audit --no-fund --silent >/dev/null); fi
[ -f /usr/include/openssl/sha.h ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libssl-dev >/dev/null
cc -O2 -o "$work/floor-server/floor" "$work/floor-server/floor.c" -lcrypto
export FLOOR_BIN="$work/floor-server/floor"
export SKIRMISH_ENCODING=compact
mkdir -p "$work/results"
rm -f "$work"/results/ab-{old,new,floor}.jsonl
for rep in 1 2 3; do
  for v in old new; do
    bin=$old_bin; [ "$v" = new ] && bin=$new_bin
    SKIRMISH_BIN=$bin bash -c "cd $work && bench/run.sh skirmish 400 20 results/ab-$v.jsonl" >/dev/null 2>&1 || echo "run $v failed"
  done
  (cd "$work" && bench/run.sh floor 400 20 results/ab-floor.jsonl >/dev/null 2>&1) || echo "floor failed"
done
python3 - "$work/results" <<'PY'
import json, sys, statistics as st, os
d = sys.argv[1]
med = {}
for v in ['old', 'new', 'floor']:
    rows = [json.loads(l) for l in open(os.path.join(d, f'ab-{v}.jsonl')) if l.strip()]
    per = [r['server_cpu_pct'] / r['n'] * 100 for r in rows]
    for r in rows:
        print(f"{v:5s} cpu {r['server_cpu_pct']:5.1f} % (user {r['server_cpu_user_pct']}, sys {r['server_cpu_sys_pct']})  {r['rx_msgs_per_client_s']:5.2f} snapshots/s  gap p99 {r['state_gap_ms']['p99']} ms")
    med[v] = st.median(per)
print(f"CPU per 100 players (median): old {med['old']:.2f} %, new {med['new']:.2f} %, floor {med['floor']:.2f} %")
print(f"new / old: {med['new']/med['old']:.3f};  old / floor: {med['old']/med['floor']:.2f};  new / floor: {med['new']/med['floor']:.2f}")
PY
