#!/bin/bash
# Prints what names the dashboard's symbols, and so what link/dashboard.order was made for: the
# toolchain, the release profile's settings, and every crate the binary links with its version
# and features (Cargo derives each crate's symbol hash from these). link/order.sh writes it to
# link/dashboard.inputs beside the order; tests/house.rs runs it again and fails when it differs,
# so a toolchain, a dependency or a feature that would leave the order stale is seen in the very
# change that makes it (docs/install.md, "The link order, and a build that links with any
# linker"). Needs cargo (it reads Cargo.lock; a crate not fetched yet is fetched).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "toolchain $(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)"
awk '/^\[profile\.release\]/ {p = 1; next} /^\[/ {p = 0} p && NF && $1 !~ /^#/' Cargo.toml |
  sed 's/^/profile.release /'
# One line a crate: name, version, features (a path dependency without its path, which differs
# between checkouts; a crate met again without the "(*)" cargo marks it with).
cargo tree --locked --quiet -p ichor-tui -e normal --prefix none -f '{p} {f}' |
  sed -e 's/ (\*)$//' -e 's# (/[^)]*)##' -e 's/ *$//' | sort -u
# Our own crates' dependencies, one line an edge: cargo mixes a crate's dependencies into its
# symbol hash, so a dependency added to one of ours renames every symbol of it and of the crates
# above it (a third-party crate's edges follow from its version and features, listed above).
cargo tree --locked --quiet -p ichor-tui -e normal,build --prefix depth -f '{p}' |
  sed -e 's/ (\*)$//' -e 's/ (proc-macro)$//' | awk '
    { match($0, /^[0-9]+/); d = substr($0, 1, RLENGTH) + 0; name = substr($0, RLENGTH + 1)
      own[d] = (name ~ / \(\//); sub(/ \(\/[^)]*\)$/, "", name); at[d] = name
      if (d > 0 && own[d - 1]) print "edge " at[d - 1] " -> " name }' | sort -u
