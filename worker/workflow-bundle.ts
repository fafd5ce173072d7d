/**
 * Where a worker gets its workflow code: the bundles `npm run build` prebuilt into dist/, or, when
 * running from the TypeScript sources, a bundle made from workflows/ at start-up.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tracingWorkflowInterceptorModules } from './tracing';

/** A bundle the build makes, and the workflow interceptor modules it includes. */
export interface PrebuiltBundle {
  file: string;
  workflowInterceptorModules: string[];
}

/** The bundle workers load when tracing is off. */
export const WORKFLOW_BUNDLE_FILE = 'workflow-bundle.js';
/** The bundle with the OpenTelemetry workflow interceptors, loaded when tracing is on. */
export const TRACED_WORKFLOW_BUNDLE_FILE = 'workflow-bundle-traced.js';

/** The bundles `npm run build` writes into dist/ (read by scripts/build.js). */
export const PREBUILT_BUNDLES: PrebuiltBundle[] = [
  { file: WORKFLOW_BUNDLE_FILE, workflowInterceptorModules: [] },
  { file: TRACED_WORKFLOW_BUNDLE_FILE, workflowInterceptorModules: tracingWorkflowInterceptorModules() },
];

/** Path of the workflow entry point, for bundling from source. */
export const WORKFLOWS_PATH = require.resolve('../workflows');

/**
 * The prebuilt bundle next to this compiled module (dist/workflow-bundle.js), or undefined when
 * running from the sources (worker/../workflow-bundle.js never exists).
 */
export function prebuiltWorkflowBundle(options: { traced?: boolean } = {}): { codePath: string } | undefined {
  const file = options.traced ? TRACED_WORKFLOW_BUNDLE_FILE : WORKFLOW_BUNDLE_FILE;
  const codePath = path.join(__dirname, '..', file);
  return fs.existsSync(codePath) ? { codePath } : undefined;
}
