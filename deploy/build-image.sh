#!/bin/sh
# Builds the ichor-tui image from a built binary with podman (or docker, as $CONTAINER_ENGINE):
#   deploy/build-image.sh target/release/ichor-tui [TAG]
# TAG defaults to localhost/ichor-tui:VERSION, the binary's own version (what deploy/base names).
# The context is a temporary folder holding rootfs/: the binary, stripped of its symbols and
# debug information ($STRIP, default strip), and each library `ldd` says it links with the
# dynamic loader, at the paths the binary looks for them. The binary's version, commit and
# build date become the image's OCI labels.
set -eu
bin=${1:?usage: deploy/build-image.sh BINARY [TAG]}
engine=${CONTAINER_ENGINE:-podman}
# "ichor-tui 0.1.0 (commit 1a3271e0c0de, built 2026-12-03T09:12:44Z)"
said=$("$bin" --version)
version=$(echo "$said" | awk '{print $2}')
revision=$(echo "$said" | sed -n 's/.*(commit \([^,]*\),.*/\1/p')
created=$(echo "$said" | sed -n 's/.*, built \([^)]*\)).*/\1/p')
tag=${2:-localhost/ichor-tui:$version}
here=$(cd "$(dirname "$0")" && pwd)
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
mkdir -p "$context/rootfs/usr/bin"
cp "$bin" "$context/rootfs/usr/bin/ichor-tui"
"${STRIP:-strip}" --strip-all "$context/rootfs/usr/bin/ichor-tui"
# "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)";
# nothing for a static binary.
{ ldd "$bin" 2>/dev/null || true; } | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
  while read -r lib; do
    mkdir -p "$context/rootfs$(dirname "$lib")"
    cp -L "$lib" "$context/rootfs$lib"
  done
"$engine" build --quiet --file "$here/Containerfile" --tag "$tag" \
  --build-arg "VERSION=$version" --build-arg "REVISION=$revision" --build-arg "CREATED=$created" \
  "$context" >/dev/null
echo "$tag"
