#!/usr/bin/env node
// Entry of the `loopwright` command. The sources are TypeScript; ts-node compiles them on the fly
// (transpile only: type checking is `npm run typecheck`), so there is no build step to forget.
require('ts-node').register({ transpileOnly: true, project: require('node:path').join(__dirname, '..', 'tsconfig.json') });
// Ctrl-C and SIGTERM end any command within seconds (the session stays on the server); installed
// before any command runs, so that the Temporal runtime's own handlers never get the last word.
require('../client/exit-on-signal').installExitOnSignal();
require('../client/cli')
  .main(process.argv.slice(2))
  .then((code) => process.exit(code), (err) => {
    process.stderr.write(`${err && err.stack ? err.stack : String(err)}\n`);
    process.exit(1);
  });
