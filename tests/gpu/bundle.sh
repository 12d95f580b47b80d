#!/usr/bin/env bash
# Packs what the GPU check needs on a machine without our packages: the executor, the driver,
# nats-server (a static binary), the worker runtimes and the shared libraries they link that a
# stock Ubuntu lacks, and the executor's unit tests (their cgroup and sandbox cases run on the
# GPU host's kernel too). Output: gpu-bundle/ (git-ignored), run there with tests/gpu/run.sh, and
# the same packed as gpu-bundle.tar.xz (git-ignored) for a transfer with a size limit.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=gpu-bundle
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
for bin in toolgate-executor gpu_check executor_test; do strip -o "$out/bin/$bin" "build/bin/$bin"; done
cp /usr/sbin/nats-server "$out/bin/"
cp -r build/runtimes "$out/runtimes"
cp tests/gpu/matmul.py tests/gpu/run.sh "$out/"
for bin in build/bin/toolgate-executor build/bin/gpu_check build/bin/executor_test; do
  ldd "$bin" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
      *) cp -L "$lib" "$out/lib/" ;;
    esac
  done
done
du -sh "$out"
tar -cJf gpu-bundle.tar.xz "$out"
du -sh gpu-bundle.tar.xz
