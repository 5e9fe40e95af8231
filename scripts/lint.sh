#!/usr/bin/env bash
# Check the layering rules of the tracked sources (git ls-files under src/
# and include/; tests, bench and fuzz harnesses may use any library).
#
#   scripts/lint.sh          check this checkout
#   scripts/lint.sh DIR      check the checkout at DIR
#
# Every violation prints as `lint: FILE:LINE: what`, then a summary; the
# exit status is 1 if there was any. The rules:
#   - each library is included only where its list below allows;
#   - `->ops->` (a transport's vtable) is spelled only in src/engine/transport/;
#   - under src/engine/mcp/, `->host->` (the lifecycle's struct client_host)
#     is spelled only in HOST_OK, the wrappers beside the questions;
#   - every include/engine/ header is included by a front end (src/front,
#     src/cli, src/ui, src/export, src/audit, src/tap, src/main.c, their
#     include/ folders), directly or through another include/engine/
#     header, and there are at most ENGINE_HEADERS_MAX of them;
#   - no .c, .cpp or .h file has more than MAX_LINES lines, and no
#     function more than MAX_FUNCTION;
#   - no two .c/.cpp files share a base name;
#   - no file under src/engine/{core,io,transport,mcp}/ includes
#     engine/server.h, engine/fleet.h or a fleet/ header;
#   - no ring between folders in the #include graph (scripts/rings.py);
#   - process control (fork, exec, spawn, waitpid, kill) only in PROC_OK;
#   - an enum's constants begin with the first word of its type's name
#     (enum failure_reason: FAILURE_...), X-macro expansions included;
#   - the engine includes no curses, "ui/", "front/", "cli/", "export/",
#     "audit/" or "tap/" header.
# Comments and string literals are not code: a rule never fires on them.
set -euo pipefail

# --- where each library may be included (a trailing / means a folder) ---
CURL_OK=(src/engine/io/ src/engine/core/url.c)
CURSES_OK=(src/ui/)
OPENSSL_OK=(src/engine/oauth/)
YAML_OK=(src/engine/config/)
TOML_OK=(src/engine/config/config_toml.cpp)  # the one C++ file: toml++
# The exporter's HTTP server: the daemon, its connection guard, and the
# endpoints that answer on their own (issue 29): /probe suspends its
# connection while the probe runs and resumes it with the answer, /sd
# writes the discovery document; serve.h is what they share.
# The HTTP tap (issue 31) is such a server too: it stands in for an
# agent's Streamable HTTP server, suspending each connection while the
# upstream answers and resuming it piece by piece as the answer arrives.
MHD_OK=(src/cli/cli_serve.c src/cli/serve_guard.c include/cli/serve_guard.h
        src/cli/serve_probe.c src/cli/serve_sd.c include/cli/serve.h
        src/tap/tap_http.c)
# Process control lives in at most two files.
PROC_OK=(src/engine/io/child.c src/engine/transport/stdio.c)
OPS_OK=(src/engine/transport/)      # where ->ops-> may be spelled
HOST_OK=(src/engine/mcp/client_int.h)  # where mcp/ may spell ->host->
MAX_LINES=1200
MAX_FUNCTION=150                    # lines of one function
ENGINE_HEADERS_MAX=24

ROOT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
cd "$ROOT"

declare -A per_check=()
violations=0

# lint_report CHECK FILE LINE WHAT: print one violation, count it.
lint_report() {
  printf 'lint: %s:%s: %s\n' "$2" "$3" "$4"
  per_check[$1]=$(( ${per_check[$1]:-0} + 1 ))
  violations=$(( violations + 1 ))
}

# lint_allowed FILE LIST...: true if FILE is in LIST or under a folder of it.
lint_allowed() {
  local f="$1" p
  shift
  for p in "$@"; do
    case "$p" in
      */) [[ "$f" == "$p"* ]] && return 0 ;;
      *) [[ "$f" == "$p" ]] && return 0 ;;
    esac
  done
  return 1
}

mapfile -t files < <(git ls-files -- 'src/*.c' 'src/*.h' 'src/*.cpp' \
                                      'include/*.c' 'include/*.h')
existing=()
for f in "${files[@]}"; do
  [ -f "$f" ] && existing+=("$f")
done
files=("${existing[@]}")

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The C part: copy each file into $tmp/code with comments and string and
# character literals blanked (lines kept, #include names kept), and check
# the enum constants' prefixes on those copies.
python3 - "$tmp/code" "${files[@]}" <<'PY' > "$tmp/enums"
import os
import re
import sys

out_dir, paths = sys.argv[1], sys.argv[2:]
INCLUDE = re.compile(r'[ \t]*#[ \t]*include[ \t]*(<[^>\n]*>|"[^"\n]*")')


def strip(text):
    """Blank comments and literals; keep newlines and #include names."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        if at_line_start:
            m = INCLUDE.match(text, i)
            if m:
                out.append(m.group(0))
                i = m.end()
            at_line_start = False
            continue
        c = text[i]
        if c == '\n':
            out.append(c)
            i += 1
            at_line_start = True
        elif text.startswith('/*', i):
            end = text.find('*/', i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:end]))
            i = end
        elif text.startswith('//', i):
            end = text.find('\n', i)
            end = n if end < 0 else end
            out.append(' ' * (end - i))
            i = end
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(c + ' ' * (min(j, n) - i - 1) + (c if j < n else ''))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def line_of(text, pos):
    return text.count('\n', 0, pos) + 1


def enum_check(path, text):
    """Print a lint line for each enum constant without its type's prefix."""
    # Function-like macros, by position: an X-macro enum names its
    # constants through the expansion of the macro it passes to the list.
    macros = []
    for m in re.finditer(r'^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)'
                         r'((?:[^\n\\]|\\\n|\\.)*)', text, re.M):
        params = [p.strip() for p in m.group(2).split(',')]
        body = re.sub(r'\\\n', ' ', m.group(3)).strip()
        macros.append((m.start(), m.group(1), params, body))
    for m in re.finditer(r'\benum[ \t\n]+(\w+)[ \t\n]*\{', text):
        name = m.group(1)
        prefix = name.split('_')[0].upper() + '_'
        close = text.find('}', m.end())
        if close < 0:
            continue
        body = text[m.end():close]
        # Preprocessor lines inside the body are not items; blank them.
        items = re.sub(r'^[ \t]*#(?:[^\n\\]|\\\n|\\.)*',
                       lambda d: re.sub(r'[^\n]', ' ', d.group(0)),
                       body, flags=re.M)
        depth, start = 0, 0
        for k, ch in enumerate(items + ','):
            if ch in '([':
                depth += 1
            elif ch in ')]':
                depth -= 1
            elif ch == ',' and depth == 0:
                item = items[start:k]
                off = m.end() + start + (len(item) - len(item.lstrip()))
                start = k + 1
                item = item.strip()
                # An X-macro list, LIST(X), brings its own commas: what
                # follows it in the same item is the next constant.
                call = LIST_CALL.match(item)
                while call:
                    check_list(path, text, off, call, prefix, name, macros)
                    off += call.end() + (len(item) - call.end()
                                         - len(item[call.end():].lstrip()))
                    item = item[call.end():].strip()
                    call = LIST_CALL.match(item)
                if item:
                    check_const(path, text, off, item, prefix, name)


LIST_CALL = re.compile(r'(\w+)[ \t\n]*\([ \t\n]*(\w+)[ \t\n]*\)')


def check_list(path, text, off, call, prefix, name, macros):
    """LIST(X): the constants are what X pastes."""
    line = line_of(text, off)
    defs = [d for d in macros if d[1] == call.group(2) and d[0] < off]
    if not defs:
        print(f'lint: {path}:{line}: enum {name}: {call.group(0)} expands a'
              f' macro this file does not define')
        return
    _, mname, params, body = defs[-1]
    paste = re.match(r'(\w*?)[ \t]*##[ \t]*(\w+)', body)
    if paste and paste.group(2) in params:
        check_const(path, text, off, paste.group(1), prefix, name,
                    paste.group(1) + '##' + paste.group(2))
    elif body.split(',')[0].strip() in params:
        print(f'lint: {path}:{line}: enum {name}: {mname} makes constants'
              f' without a prefix (write {prefix}##{params[0]})')
    else:
        print(f'lint: {path}:{line}: enum {name}: cannot read the constants'
              f' {mname} makes')


def check_const(path, text, off, item, prefix, name, shown=None):
    """One constant (or a pasted prefix): it must begin with prefix."""
    ident = re.match(r'\w*', item).group(0)
    if not ident.startswith(prefix):
        print(f'lint: {path}:{line_of(text, off)}: enum {name}:'
              f' {shown or ident or item} does not begin with {prefix}')


for path in paths:
    with open(path, encoding='utf-8', errors='replace') as f:
        code = strip(f.read())
    dest = os.path.join(out_dir, path)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, 'w', encoding='utf-8') as f:
        f.write(code)
    enum_check(path, code)
PY

# lint_grep ERE FILE...: FILE:LINE:TEXT for each code line matching ERE.
lint_grep() {
  local re="$1"
  shift
  [ $# -gt 0 ] || return 0
  (cd "$tmp/code" && grep -nHE -- "$re" "$@") || true
}

INC='^[[:space:]]*#[[:space:]]*include[[:space:]]*'

# The engine: src/engine/ and include/engine/.
lint_engine() {
  [[ "$1" == src/engine/* || "$1" == include/engine/* ]]
}

# --- library confinement ---
# lint_library CHECK WHAT HEADER-ERE ALLOW...: report HEADER's includes
# outside ALLOW. curses in the engine is the layering check's to report.
lint_library() {
  local check="$1" what="$2" re="$3" file line text
  shift 3
  while IFS=: read -r file line text; do
    lint_allowed "$file" "$@" && continue
    [ "$check" = curses ] && lint_engine "$file" && continue
    text="$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*//' \
            <<<"$text")"
    lint_report library "$file" "$line" "$text: $what only in ${*}"
  done < <(lint_grep "$INC[<\"]$re" "${files[@]}")
}
lint_library curl curl 'curl/' "${CURL_OK[@]}"
lint_library curses curses '(ncursesw?/)?(curses|ncurses|term)\.h[>"]' \
  "${CURSES_OK[@]}"
lint_library openssl OpenSSL 'openssl/' "${OPENSSL_OK[@]}"
lint_library yaml libyaml 'yaml\.h[>"]' "${YAML_OK[@]}"
lint_library toml toml++ 'toml\+\+/' "${TOML_OK[@]}"
lint_library mhd libmicrohttpd 'microhttpd\.h[>"]' "${MHD_OK[@]}"

# --- layering: the engine includes no curses and no front end ---
while IFS=: read -r file line text; do
  lint_engine "$file" || continue
  text="$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*//' \
          <<<"$text")"
  lint_report layering "$file" "$line" \
    "the engine includes $text (curses and front ends sit above it)"
done < <(lint_grep "$INC(<(ncursesw?/)?(curses|ncurses|term)\.h>|[<\"]([^>\"]*/)?(ui|front|cli|export|audit|tap)/)" \
           "${files[@]}")

# --- a transport's vtable is spelled only by the transports ---
while IFS=: read -r file line text; do
  lint_allowed "$file" "${OPS_OK[@]}" && continue
  lint_report ops "$file" "$line" \
    "->ops-> outside ${OPS_OK[*]} (the vtable is the transports' own)"
done < <(lint_grep '->[[:space:]]*ops[[:space:]]*->' "${files[@]}")

# --- the lifecycle reports to its host only through the wrappers ---
while IFS=: read -r file line text; do
  [[ "$file" == src/engine/mcp/* ]] || continue
  lint_allowed "$file" "${HOST_OK[@]}" && continue
  lint_report host "$file" "$line" \
    "->host-> outside ${HOST_OK[*]} (call its client_report_*, client_retry, ... wrappers)"
done < <(lint_grep '->[[:space:]]*host[[:space:]]*->' "${files[@]}")

# --- include/engine/ is only what the front ends use ---
front=()
for f in "${files[@]}"; do
  case "$f" in
    src/front/*|src/cli/*|src/ui/*|src/export/*|src/audit/*|src/tap/*|\
    src/main.c|include/front/*|include/cli/*|include/ui/*|include/export/*|\
    include/audit/*|include/tap/*)
      front+=("$f") ;;
  esac
done
# Used: included by a front end, or by a header of include/engine/ that
# is used (a word such as engine/mcp.h comes with engine/server.h).
lint_grep "$INC[<\"]engine/[^>\"]*[>\"]" "${front[@]}" |
  sed -E 's/.*engine\/([^>"]*)[>"].*/include\/engine\/\1/' | sort -u \
  > "$tmp/used"
while :; do
  mapfile -t used_now < "$tmp/used"
  { printf '%s\n' "${used_now[@]}"
    lint_grep "$INC[<\"]engine/[^>\"]*[>\"]" "${used_now[@]}" |
      sed -E 's/.*engine\/([^>"]*)[>"].*/include\/engine\/\1/'
  } | sort -u > "$tmp/used2"
  cmp -s "$tmp/used" "$tmp/used2" && break
  mv "$tmp/used2" "$tmp/used"
done
headers=()
for f in "${files[@]}"; do
  [[ "$f" == include/engine/*.h ]] && headers+=("$f")
done
for f in "${headers[@]}"; do
  grep -qxF "$f" "$tmp/used" && continue
  lint_report headers "$f" 1 \
    'no front end includes it (a private header sits beside its .c)'
done
if [ "${#headers[@]}" -gt "$ENGINE_HEADERS_MAX" ]; then
  lint_report headers include/engine/ 1 \
    "${#headers[@]} headers, at most $ENGINE_HEADERS_MAX"
fi

# --- file length ---
for f in "${files[@]}"; do
  n=$(wc -l < "$f")
  if [ "$n" -gt "$MAX_LINES" ]; then
    lint_report length "$f" $(( MAX_LINES + 1 )) \
      "$n lines, at most $MAX_LINES (split it along a seam)"
  fi
done

# --- function length: a function's body (from its opening brace at the
# start of a line to the closing one) is at most MAX_FUNCTION lines ---
while IFS=: read -r file line what; do
  lint_report function "$file" "$line" "$what"
done < <(cd "$tmp/code" && awk -v max="$MAX_FUNCTION" '
  FNR == 1 { open = 0 }
  /^[A-Za-z_][A-Za-z0-9_]*\(/ { name = $0; sub(/\(.*/, "", name) }
  /^\{/ { open = FNR }
  /^\}/ && open {
    n = FNR - open + 1
    if (n > max)
      printf "%s:%d:%s: %d lines, at most %d (split it)\n", FILENAME, open,
        name, n, max
    open = 0
  }' "${files[@]}")

# --- no two source files share a base name (a header pairs with one) ---
while IFS= read -r base; do
  lint_report namesake "$(printf '%s\n' "${files[@]}" |
    grep -E "/$base\.(c|cpp)\$" | paste -sd' ' -)" 1 \
    "$base: two source files of one name (prefix one with its family)"
done < <(printf '%s\n' "${files[@]}" | grep -E '\.(c|cpp)$' |
         sed -E 's#.*/##; s/\.(c|cpp)$//' | sort | uniq -d)

# --- the floors below the fleet include no server or fleet header ---
while IFS=: read -r file line text; do
  case "$file" in
    src/engine/core/*|src/engine/io/*|src/engine/transport/*|\
    src/engine/mcp/*) ;;
    *) continue ;;
  esac
  lint_report floors "$file" "$line" \
    "a floor below the fleet includes ${text##*include} (the fleet is on top)"
done < <(lint_grep "$INC[<\"](engine/(server|fleet)\.h|fleet/[^>\"]*)[>\"]" \
           "${files[@]}")

# --- no ring between folders (scripts/rings.py computes them) ---
if ! rings_out="$(python3 "$ROOT/scripts/rings.py")"; then
  while IFS= read -r l; do
    case "$l" in
      "rings: a ring"*) lint_report rings scripts/rings.py 1 "${l#rings: }" ;;
      *) printf '%s\n' "$l" ;;
    esac
  done <<<"$rings_out"
fi

# --- process control ---
if [ "${#PROC_OK[@]}" -gt 2 ]; then
  lint_report process scripts/lint.sh \
    "$(grep -n '^PROC_OK=' "${BASH_SOURCE[0]}" | cut -d: -f1)" \
    "PROC_OK lists ${#PROC_OK[@]} files, at most 2"
fi
PROC_CALLS='(fork|vfork|execv[a-z]*|execl[a-z]*|posix_spawn[a-z_]*|waitpid|killpg|kill)[[:space:]]*\('
while IFS=: read -r file line text; do
  lint_allowed "$file" "${PROC_OK[@]}" && continue
  calls="$(grep -oE "(^|[^A-Za-z0-9_.>])$PROC_CALLS" <<<"$text" |
           sed -E 's/^[^a-z]//; s/[[:space:]]*\($/()/' | paste -sd, - |
           sed 's/,/, /g')"
  lint_report process "$file" "$line" "$calls outside ${PROC_OK[*]}"
done < <(lint_grep "(^|[^A-Za-z0-9_.>])$PROC_CALLS" "${files[@]}")

# --- enum constants (read by the C part above) ---
while IFS= read -r l; do
  printf '%s\n' "$l"
  per_check[enum]=$(( ${per_check[enum]:-0} + 1 ))
  violations=$(( violations + 1 ))
done < "$tmp/enums"

# --- summary ---
if [ "$violations" -eq 0 ]; then
  echo "lint: ${#files[@]} files, no violations"
  exit 0
fi
summary=""
for c in library layering ops host headers length function namesake floors \
    rings process enum; do
  [ -n "${per_check[$c]:-}" ] && summary+=" $c ${per_check[$c]},"
done
echo "lint: ${#files[@]} files, $violations violations:${summary%,}"
exit 1
