#!/usr/bin/env node
// `npm run build`: compiles the runtime code to dist/ (JavaScript, declarations, source maps) and
// prebuilds the workflow bundles workers load instead of bundling at start-up:
//   dist/workflow-bundle.js         the session workflow;
//   dist/workflow-bundle-traced.js  the same with the OpenTelemetry workflow interceptors, used when
//                                   tracing is on (see worker/tracing.ts).
// `--if-stale` skips all of it when dist/ is newer than every source (set-up uses it).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, STAMP, distIsFresh } = require('../bin/freshness');

async function main() {
  if (process.argv.includes('--if-stale') && distIsFresh()) {
    console.error('build: dist/ is up to date');
    return;
  }
  const started = Date.now();
  const dist = path.join(ROOT, 'dist');
  fs.rmSync(dist, { recursive: true, force: true });
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
  const { bundleWorkflowCode } = require('@temporalio/worker');
  const { bundlerLogger } = require(path.join(dist, 'worker', 'create-worker'));
  const { PREBUILT_BUNDLES } = require(path.join(dist, 'worker', 'workflow-bundle'));
  for (const { file, workflowInterceptorModules } of PREBUILT_BUNDLES) {
    const { code } = await bundleWorkflowCode({
      workflowsPath: path.join(dist, 'workflows', 'index.js'),
      workflowInterceptorModules,
      logger: bundlerLogger,
    });
    fs.writeFileSync(path.join(dist, file), code);
  }
  fs.writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  console.error(`build: dist/ built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((err) => {
  process.stderr.write(`build: ${err && err.stack ? err.stack : String(err)}\n`);
  process.exit(1);
});
