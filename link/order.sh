#!/bin/bash
# Makes link/dashboard.order: the functions the dashboard runs, in the order the release binary
# had them, for the linker to lay out together (see build.rs and docs/install.md, "The link
# order, and a build that links with any linker"), and link/dashboard.inputs, what it was made
# for (link/inputs.sh). Needs valgrind and tmux; takes minutes.
#
#   cargo build --release --bin ichor-tui && link/order.sh target/release/ichor-tui
#
# It runs the dashboard under callgrind on the in-process, gRPC, Connect and tunnel routes, each
# against a demo cluster of 300 operations at 120x36, browses a little (an operation, the
# clusters, help, the filter, a refresh), quits, and keeps every function any of them ran.
set -euo pipefail
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true; for n in inproc grpc connect tunnel; do tmux kill-session -t order-$n 2>/dev/null || true; done' EXIT
freeport() { python3 -c "import socket;s=socket.socket();s.bind(('127.0.0.1',0));print(s.getsockname()[1])"; }
ICHOR_DEMO_OPERATIONS=300 "$BIN" demo-cluster --listen 127.0.0.1:0 --kubeconfig-out "$D/kc" --log-file "$D/dc.log" > "$D/dc.out" 2>&1 & PIDS+=($!)
ICHOR_DEMO_OPERATIONS=300 "$BIN" serve --demo --listen 127.0.0.1:0 --allow-anonymous --log-file "$D/serve.log" > "$D/serve.out" 2>&1 & PIDS+=($!)
UIP=$(freeport)
ICHOR_DEMO_OPERATIONS=300 "$BIN" demo-cluster --listen 127.0.0.1:0 --ichor-ui-forward "127.0.0.1:$UIP" --kubeconfig-out "$D/kct" --log-file "$D/dct.log" > "$D/dct.out" 2>&1 & PIDS+=($!)
sleep 6
"$BIN" serve --kubeconfig "$D/kct" --listen "127.0.0.1:$UIP" --log-file "$D/serve-t.log" > "$D/serve-t.out" 2>&1 & PIDS+=($!)
sleep 3
SURL=http://$(sed -n 's/serving on //p' "$D/serve.out" | head -1)
run() { # name, dashboard arguments...
  local n=$1; shift; mkdir -p "$D/h-$n"
  tmux new-session -d -s "order-$n" -x 120 -y 36 "HOME=$D/h-$n valgrind --tool=callgrind --demangle=no --compress-strings=no --compress-pos=no --callgrind-out-file=$D/cg-$n.out $BIN $* --log-file $D/t-$n.log 2> $D/vg-$n.err"
}
keys() { local n=$1; shift; for k in "$@"; do tmux send-keys -t "order-$n" "$k"; sleep 4; done; }
run inproc --kubeconfig "$D/kc" --backend in-process
run grpc --server "$SURL" --protocol grpc
run connect --server "$SURL" --protocol connect
run tunnel --kubeconfig "$D/kct" --backend remote
sleep 60
# What each ran to start and sit idle on its list: dumped apart (cg-NAME.out.1), to lay out first.
callgrind_control --dump=idle >/dev/null
sleep 5
for n in inproc grpc connect tunnel; do
  keys "$n" j j Enter Tab Escape '?' Escape 2 Enter Escape 1 / a Escape R G g
done
sleep 20
for n in inproc grpc connect tunnel; do keys "$n" q; done
sleep 20
ls "$D"/cg-*.out* >&2
python3 "$HERE/order.py" "$BIN" "$D"/cg-*.out.1 --then "$D"/cg-*.out* > "$HERE/dashboard.order"
# What the order was made for (tests/house.rs checks that the sources still build it).
"$HERE/inputs.sh" > "$HERE/dashboard.inputs"
rm -rf "$D"
