#!/usr/bin/env bash
# A bundle's cold start against a single-file tool's, per runtime, in the same run on the same
# machine (issue 11). Cold start is the first call of a freshly published version, timed with
# curl:
#   - single file: the echo tools of bench/runtimes (echo_python, echo_javascript, echo_lua);
#     the call takes a spare worker and sends it the code;
#   - bundle: the executor's test bundles (services/executor/testdata/bundles: a vendored Python
#     package, a JavaScript node_modules, two Lua modules), each version with a file of its own
#     so that its digest is new: the call fetches the bundle from the registry, checks its
#     SHA-256, unpacks it, and mounts it on a spare worker's /bundle view;
#   - bundle, same bytes: a new version whose bundle some earlier version already had (the
#     executor's cache holds it): the spare and its view alone.
# Prints min, median and max per series; exits non-zero when a call failed.
#
#   bench/bundles.sh [versions=5]
set -euo pipefail
cd "$(dirname "$0")/.."
versions=${1:-5}
bin=build/bin
[ -x $bin/toolgate ] || scripts/build.sh >/dev/null

source bench/system.sh
system_data_dir
start_system "$data"
export TOOLGATE_URL=$url TOOLGATE_API_KEY=$key

# Copies a tool into the data directory (publish writes the function's id into its manifest).
prepare() {  # name source [runtime handler]: a manifest for a bundle when runtime is given
  local dir=$data/tools/$1
  mkdir -p "$data/tools"
  cp -r "$2" "$dir"
  if [ $# -gt 2 ]; then
    cat >"$dir/toolgate.json" <<JSON
{"name": "bench-$1", "description": "bench/bundles.sh", "category": "Utilities",
 "visibility": "private", "price_micro_usd": 0, "version": "1.0.0", "runtime": "$3",
 "compute_type": "CPU", "input_schema": {"type": "object"}, "bundle": true, "handler": "$4"}
JSON
  fi
}
publish() {  # name version: prints the function id
  local dir=$data/tools/$1
  sed -i "s/\"version\": \"[^\"]*\"/\"version\": \"$2\"/" "$dir/toolgate.json"
  $bin/toolgate publish "$dir" --json 2>>"$data/publish.log" |
    sed -n 's/.*"function_id": *"\([^"]*\)".*/\1/p' || true
}
event='{"event":{"title":"Bench","text":"ab","n":3,"name":"b","hello":"world"}}'
failed=0
first_call() {  # function_id version: prints milliseconds
  local code seconds
  read -r code seconds < <(curl -s -o "$data/answer" -w '%{http_code} %{time_total}\n' -X POST \
    "$url/api/v1/functions/$1/$2/invoke" -H "Authorization: $key" \
    -H 'Content-Type: application/json' -d "$event")
  [ "$code" = 200 ] || { echo "first call of $1 $2 answered $code: $(cat "$data/answer")" >&2; failed=1; }
  awk -v s="$seconds" 'BEGIN { printf "%.1f\n", s * 1000 }'
}
summary() {  # milliseconds...: min median max
  printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { printf "%s ms | %s ms | %s ms", v[1], v[int((NR + 1) / 2)], v[NR] }'
}

printf '| runtime | cold start | min | median | max |\n|---|---|---|---|---|\n'
for rt in python javascript lua; do
  case $rt in
    python) bundle=python-vendored handler=src/main.py ;;
    javascript) bundle=javascript-node-modules handler=handler.js ;;
    lua) bundle=lua-modules handler=handler.lua ;;
  esac
  prepare "single-$rt" "bench/runtimes/echo_$rt"
  prepare "bundle-$rt" "services/executor/testdata/bundles/$bundle" "$rt" "$handler"
  single=() fresh=() same=()
  for i in $(seq 1 "$versions"); do
    id=$(publish "single-$rt" "1.0.$i")
    [ -n "$id" ] || { cat "$data/publish.log"; exit 1; }
    single+=("$(first_call "$id" "1.0.$i")")
    # New bytes, so a new digest: fetched, checked and unpacked on the first call.
    echo "$i" >"$data/tools/bundle-$rt/bench-version.txt"
    id=$(publish "bundle-$rt" "1.0.$i")
    [ -n "$id" ] || { cat "$data/publish.log"; exit 1; }
    fresh+=("$(first_call "$id" "1.0.$i")")
    # The same bytes again under a new version: the executor already holds them.
    id=$(publish "bundle-$rt" "1.1.$i")
    [ -n "$id" ] || { cat "$data/publish.log"; exit 1; }
    same+=("$(first_call "$id" "1.1.$i")")
  done
  echo "| $rt | single file | $(summary "${single[@]}") |"
  echo "| $rt | bundle, new digest | $(summary "${fresh[@]}") |"
  echo "| $rt | bundle, digest already unpacked | $(summary "${same[@]}") |"
done
exit $failed
