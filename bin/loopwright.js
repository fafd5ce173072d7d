#!/usr/bin/env node
// Entry of the `loopwright` command. It runs the compiled code in dist/ (`npm run build`). In a
// checkout whose sources changed since the last build, it runs the TypeScript sources through
// ts-node instead (transpile only; a development dependency), so an edit is never run stale.
'use strict';
const path = require('node:path');
const { ROOT, distIsFresh } = require('./freshness');

let base = path.join(ROOT, 'dist');
if (!distIsFresh()) {
  let tsNode;
  try {
    tsNode = require('ts-node');
  } catch {
    process.stderr.write('loopwright: dist/ is missing or out of date and ts-node is not installed; run `npm run build`.\n');
    process.exit(1);
  }
  tsNode.register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
  base = ROOT;
}
// Ctrl-C and SIGTERM end any command within seconds (the session stays on the server); installed
// before any command runs, so that the Temporal runtime's own handlers never get the last word.
require(path.join(base, 'cli', 'exit-on-signal')).installExitOnSignal();
// Exits once stdout and stderr are flushed: a large --json document is never cut at the pipe's buffer.
const { exitWhenFlushed } = require(path.join(base, 'cli', 'exit-flushed'));
require(path.join(base, 'cli', 'cli'))
  .main(process.argv.slice(2))
  .then(
    (code) => exitWhenFlushed(code),
    (err) => {
      process.stderr.write(`${err && err.stack ? err.stack : String(err)}\n`);
      exitWhenFlushed(1);
    },
  );
