// Whether the compiled `dist/` is up to date with the TypeScript sources, for the `loopwright`
// command and the build. In an installed package there are no sources, so `dist/` is always used.
// Hand-written: comparing a few hundred mtimes needs no library, and it runs on every command.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
/** Folders compiled into dist/ (tsconfig.build.json includes the same). */
const SOURCE_DIRS = ['workflows', 'activities', 'worker', 'client', 'serve', 'cli', 'common', 'codec', 'bundle', 'fake-model'];
const STAMP = path.join(ROOT, 'dist', '.build-stamp');

/** Newest modification time (ms) of the sources, or 0 when this is not a checkout. */
function newestSourceMs() {
  let newest = 0;
  const walk = (dir) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|json)$/.test(entry.name)) newest = Math.max(newest, fs.statSync(full).mtimeMs);
    }
  };
  for (const dir of SOURCE_DIRS) walk(path.join(ROOT, dir));
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package.json']) {
    try {
      newest = Math.max(newest, fs.statSync(path.join(ROOT, file)).mtimeMs);
    } catch {
      // not a checkout
    }
  }
  return newest;
}

/** True when dist/ was built and no source changed since (always true without sources). */
function distIsFresh() {
  let built;
  try {
    built = fs.statSync(STAMP).mtimeMs;
  } catch {
    return false;
  }
  if (!fs.existsSync(path.join(ROOT, 'cli', 'cli.ts'))) return true;
  return newestSourceMs() <= built;
}

module.exports = { ROOT, STAMP, SOURCE_DIRS, distIsFresh };
