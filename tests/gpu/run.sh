#!/usr/bin/env bash
# The GPU check, run from gpu-bundle/ on the GPU machine: a NATS server, a GPU executor on the
# machine's devices, and one PyTorch matrix multiplication through it (gpu_check).
set -uo pipefail
cd "$(dirname "$0")"
export LD_LIBRARY_PATH="$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-/tmp}
nvidia-smi -L || ls -l /dev/nvidia*
# The executor's cgroup and sandbox tests on this host's kernel and cgroup hierarchy.
bin/executor_test --gtest_filter='Cgroup*:SandboxTest.*:GpuTest.*' 2>&1 | tail -30
python=$(command -v python3)
echo "python: $python ($($python -c 'import torch; print(torch.__version__, torch.cuda.is_available())'))"
bin/nats-server -a 127.0.0.1 -p 24222 > "$out/nats.log" 2>&1 &
nats=$!
head -c 32 /dev/urandom | base64 > executor.key
chmod 600 executor.key
# The venv that holds PyTorch is mounted read-only into the sandbox.
venv=$(dirname "$(dirname "$python")")
TOOLGATE_NATS_URL=nats://127.0.0.1:24222 bin/toolgate-executor --pool gpu \
  --executor-key-file executor.key --runtime-dir "$PWD/runtimes" --python "$python" \
  --sandbox-read-only "$venv" "$@" > "$out/executor.log" 2>&1 &
executor=$!
sleep 3
bin/gpu_check nats://127.0.0.1:24222 matmul.py '{"n": 4096}'
rc=$?
echo "gpu_check exit: $rc"
kill $executor $nats 2>/dev/null
wait
cp "$out/executor.log" "$out/executor.log.txt" 2>/dev/null
tail -40 "$out/executor.log"
exit $rc
