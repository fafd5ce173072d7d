/**
 * The session workflow's code for test workers. When dist/ is up to date with the sources (as after
 * set-up, and in CI), the bundles the build prebuilt there are the ones used: the code workers ship
 * with, read in milliseconds. Otherwise it is bundled from workflows/ (webpack, seconds on 2 cores)
 * once for as long as the sources stay the same instead of once per test file: the bundle is kept
 * in `node_modules/.cache/loopwright-test/` under a hash of what goes into it (workflows/, common/,
 * the lockfile, which fixes the interceptor packages a traced bundle adds). Workflow code imports
 * nothing else of ours (the layer rule in eslint.config.js).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { bundlerLogger, WORKFLOWS_PATH } from '../../worker/create-worker';
import { tracingWorkflowInterceptorModules } from '../../worker/tracing';
import { TRACED_WORKFLOW_BUNDLE_FILE, WORKFLOW_BUNDLE_FILE } from '../../worker/workflow-bundle';

// The command's own check (a JavaScript module of bin/, shared with the build).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { distIsFresh } = require('../../bin/freshness') as { distIsFresh(): boolean };

const ROOT = path.resolve(__dirname, '../..');
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'loopwright-test');

/**
 * The workflow code of `workflows/`: dist/'s prebuilt bundle while it is fresh, else bundled once per
 * version of its sources; `traced`: with the tracing interceptors (`tracingWorkflowInterceptorModules()`),
 * as a traced worker runs it.
 */
export async function testWorkflowBundle(options: { traced?: boolean } = {}): Promise<WorkflowBundle> {
  if (distIsFresh()) return { code: fs.readFileSync(path.join(ROOT, 'dist', options.traced ? TRACED_WORKFLOW_BUNDLE_FILE : WORKFLOW_BUNDLE_FILE), 'utf8') };
  const kind = options.traced ? 'traced-workflow-bundle-' : 'workflow-bundle-';
  const file = path.join(CACHE, `${kind}${sourceHash()}.json`);
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as WorkflowBundle;
  const bundle = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    ...(options.traced ? { workflowInterceptorModules: tracingWorkflowInterceptorModules() } : {}),
    logger: bundlerLogger,
  });
  fs.mkdirSync(CACHE, { recursive: true });
  // Written aside and renamed: a reader never sees half a bundle. Older versions go.
  for (const old of fs.readdirSync(CACHE)) if (old.startsWith(kind)) fs.rmSync(path.join(CACHE, old), { force: true });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(bundle));
  fs.renameSync(temp, file);
  return bundle;
}

/** A hash of every file the bundle is made from (paths and contents). */
function sourceHash(): string {
  const hash = crypto.createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) hash.update(path.relative(ROOT, full)).update('\0').update(fs.readFileSync(full)).update('\0');
    }
  };
  walk(path.join(ROOT, 'workflows'));
  walk(path.join(ROOT, 'common'));
  hash.update(fs.readFileSync(path.join(ROOT, 'package-lock.json')));
  return hash.digest('hex').slice(0, 16);
}
