#!/usr/bin/env bash
# Packs what the GPU check needs on a machine without our packages: the executor, the driver,
# nats-server (a static binary), the worker runtimes and the shared libraries they link that a
# stock Ubuntu lacks. Output: gpu-bundle/ (git-ignored), run there with tests/gpu/run.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=gpu-bundle
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
cp build/bin/toolgate-executor build/bin/gpu_check /usr/sbin/nats-server "$out/bin/"
cp -r build/runtimes "$out/runtimes"
cp tests/gpu/matmul.py tests/gpu/run.sh "$out/"
for bin in build/bin/toolgate-executor build/bin/gpu_check; do
  ldd "$bin" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
      *) cp -L "$lib" "$out/lib/" ;;
    esac
  done
done
du -sh "$out"
