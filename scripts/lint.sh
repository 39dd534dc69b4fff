#!/usr/bin/env bash
# Checks the shape of the C++ code (scripts/test.sh runs it after the build; issue 30):
#   1. clang-format-14 with .clang-format over the C++ files of src/, tests/, bench/ and plugin/;
#   2. clang-tidy-14's readability-function-size over every src/**/*.cpp (and the src/ headers they include): no
#      function over 80 lines, in parallel over nproc (about 4 CPU-minutes: 2 minutes on 2 idle cores);
#   3. no file in src/cmd/ over 300 lines.
# Usage: scripts/lint.sh [BUILD_DIR]; BUILD_DIR (default build) holds compile_commands.json, which CMake writes when
# it configures. Runs every check, prints what fails with how to fix it, and exits 1 when any failed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
max_function_lines=80
max_cmd_file_lines=300
failed=0

echo "-- format (clang-format-14, .clang-format)"
mapfile -t cxx < <(find src tests bench plugin -type f \( -name '*.cpp' -o -name '*.h' \) -not -path 'tests/cluster/*' |
  sort)
mapfile -t unformatted < <(clang-format-14 --dry-run "${cxx[@]}" 2>&1 |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: .*-Wclang-format-violations.*/\1/p' | sort -u)
if ((${#unformatted[@]})); then
  printf '  %s\n' "${unformatted[@]}"
  echo "${#unformatted[@]} file(s) differ from clang-format-14's layout; fix: clang-format-14 -i FILE... (all:"
  echo "  find src tests bench plugin -type f \\( -name '*.cpp' -o -name '*.h' \\) -not -path 'tests/cluster/*' |"
  echo "  xargs clang-format-14 -i)"
  failed=1
fi

echo "-- function size (clang-tidy-14 readability-function-size, at most $max_function_lines lines)"
if [[ ! -f "$build/compile_commands.json" ]]; then
  echo "$build/compile_commands.json is missing: configure first (cmake -S . -B $build -G Ninja)"
  exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
config="{CheckOptions: [{key: readability-function-size.LineThreshold, value: $max_function_lines}]}"
# One clang-tidy per file, its output kept apart so that parallel runs do not interleave.
find src -type f -name '*.cpp' | sort | xargs -P "$(nproc)" -I{} sh -c \
  'clang-tidy-14 -p "$1" --quiet --checks="-*,readability-function-size" --config="$2" \
     --header-filter="^$PWD/src/" "$3" >"$4/$(echo "$3" | tr / _).log" 2>&1 || echo "$3" >>"$4/broken"' \
  sh "$build" "$config" {} "$out" || true
# A warning names the function; the note after it says how long it is.
long=$(cat "$out"/*.log | sed -n \
  -e "s|^$PWD/||" \
  -e "s/^\([^:]*:[0-9]*\):[0-9]*: warning: function \('[^']*'\) exceeds.*/\1 \2/p" \
  -e "s/^[^:]*:[0-9]*:[0-9]*: note: \([0-9]*\) lines including whitespace and comments.*/\1 lines/p" |
  paste -d' ' - - | sort -u)
if [[ -n "$long" ]]; then
  echo "$long" | sed 's/^/  /'
  echo "$(echo "$long" | wc -l) function(s) over $max_function_lines lines; fix: split each into named functions, each"
  echo "  with a one-line contract comment (or a lambda into a named function)"
  failed=1
fi
if [[ -f "$out/broken" ]]; then
  grep -h -A3 " error: " "$out"/*.log | head -n 40
  echo "clang-tidy-14 failed on: $(sort "$out/broken" | tr '\n' ' ')"
  echo "  fix: the errors above; build once so that generated files exist and $build/compile_commands.json is current"
  failed=1
fi

echo "-- size of src/cmd files (at most $max_cmd_file_lines lines)"
big=$(wc -l src/cmd/*.cpp src/cmd/*.h | awk -v max="$max_cmd_file_lines" '$2 != "total" && $1 > max')
if [[ -n "$big" ]]; then
  echo "$big" | sed 's/^ */  /'
  echo "$(echo "$big" | wc -l) file(s) in src/cmd over $max_cmd_file_lines lines; fix: move a coherent part (a"
  echo "  helper class, a step of the command) into its own file, a command wiring what lower layers do"
  failed=1
fi

exit "$failed"
