#!/usr/bin/env bash
# Makes a BMAD project with the BMAD installer from npm, as a BMAD user does: core and the BMad
# Method module (bmm), skills for Claude Code (.claude/skills/), no questions asked. About 3 s with
# the installer in npm's cache, 6 s without (it downloads about 40 MB once).
#   bash install.sh <project folder> [bmad-method version, default 6.11.0]
set -euo pipefail
project=${1:?usage: install.sh <project folder> [version]}
version=${2:-6.11.0}
npx --yes "bmad-method@${version}" install --yes --modules bmm --tools claude-code --user-name Sam --directory "$project"
