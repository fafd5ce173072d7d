/**
 * Worker Deployment Versioning for Loopwright workers: which deployment a worker belongs to, the
 * build id of the code it runs (the package version and a hash of its workflow bundle), and the
 * worker options that pin each session to the build that started it. A session moves to a newer
 * current build only at a turn boundary, through continue-as-new (workflows/session/upgrade.ts).
 * Off unless asked for: `loopwright worker --deployment`/`--build-id`, LOOPWRIGHT_DEPLOYMENT /
 * LOOPWRIGHT_BUILD_ID, or the `deployment` option of createWorker and LoopwrightPlugin.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { WorkerOptions } from '@temporalio/worker';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { projectRoot } from '../activities/project-paths';

/** The deployment name when only a build id is given. */
export const DEFAULT_DEPLOYMENT_NAME = 'loopwright';

/** Longest deployment name or build id the server takes. */
const MAX_LENGTH = 255;

/** What a caller asks for; anything left out is derived (the name `loopwright`, the build id from the code). */
export interface DeploymentOptions {
  /** The Worker Deployment (default `loopwright`). */
  deploymentName?: string;
  /** This build's id (default: `<package version>-<first 12 hex digits of the workflow bundle's SHA-256>`). */
  buildId?: string;
}

/** A deployment name or build id the server would refuse, or one that cannot be derived; names the setting at fault. */
export class DeploymentSettingError extends Error {
  override readonly name = 'DeploymentSettingError';
  constructor(
    /** The flag, variable or option at fault (`--build-id`, `LOOPWRIGHT_DEPLOYMENT`, `deployment.buildId`). */
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
  }
}

/** LOOPWRIGHT_DEPLOYMENT and LOOPWRIGHT_BUILD_ID; undefined when neither is set (the worker runs unversioned). */
export function deploymentFromEnv(env: NodeJS.ProcessEnv = process.env): DeploymentOptions | undefined {
  const deploymentName = env.LOOPWRIGHT_DEPLOYMENT?.trim() || undefined;
  const buildId = env.LOOPWRIGHT_BUILD_ID?.trim() || undefined;
  if (deploymentName === undefined && buildId === undefined) return undefined;
  if (deploymentName !== undefined) checkDeploymentName(deploymentName, 'LOOPWRIGHT_DEPLOYMENT');
  if (buildId !== undefined) checkBuildId(buildId, 'LOOPWRIGHT_BUILD_ID');
  return { ...(deploymentName !== undefined ? { deploymentName } : {}), ...(buildId !== undefined ? { buildId } : {}) };
}

/** Refuse a deployment name the server would not take (it joins name and build id with a dot). */
export function checkDeploymentName(name: string, setting: string): void {
  if (name.trim() === '' || name.length > MAX_LENGTH || /[\s.]/.test(name)) {
    throw new DeploymentSettingError(setting, `expected a name of 1 to ${MAX_LENGTH} characters without spaces or dots, got ${JSON.stringify(name)}`);
  }
}

/** Refuse a build id the server would not take. */
export function checkBuildId(buildId: string, setting: string): void {
  if (buildId.trim() === '' || buildId.length > MAX_LENGTH || /\s/.test(buildId) || buildId === '__unversioned__') {
    throw new DeploymentSettingError(setting, `expected an id of 1 to ${MAX_LENGTH} characters without spaces, got ${JSON.stringify(buildId)}`);
  }
}

/** The workflow code a worker loads, as WorkerOptions give it. */
export type WorkflowCode = Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'>;

/**
 * The build id of `code`: the package version and the first 12 hex digits of the SHA-256 of the
 * bundle (its text, or its file). Code bundled at start-up from `ownSources` (Loopwright's own
 * workflows/, when running from a checkout) is hashed by its source files instead, `traced` apart.
 * A worker with workflow sources of its own must name its build id: they are bundled after this.
 */
export function buildIdOf(code: WorkflowCode, ownSources: string, options: { traced?: boolean; version?: string } = {}): string {
  const version = options.version ?? packageVersion();
  const hash = crypto.createHash('sha256');
  const bundle = code.workflowBundle;
  if (bundle && 'code' in bundle) hash.update(bundle.code);
  else if (bundle) hash.update(fs.readFileSync(bundle.codePath));
  else if (code.workflowsPath === ownSources) hashSources(hash, path.dirname(path.dirname(ownSources)), options.traced === true);
  else throw new DeploymentSettingError('deployment.buildId', `the worker bundles its own workflows (${code.workflowsPath}) when it starts, so no build id can be derived: give one`);
  return `${version}-${hash.digest('hex').slice(0, 12)}`;
}

/** The version of the loopwright package this worker runs. */
export function packageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** Every source file the session bundle is made of (workflows/ and common/ under `root`), paths and contents, in order. */
function hashSources(hash: crypto.Hash, root: string, traced: boolean): void {
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) hash.update(path.relative(root, full)).update('\0').update(fs.readFileSync(full)).update('\0');
    }
  };
  for (const dir of ['workflows', 'common']) walk(path.join(root, dir));
  if (traced) hash.update('traced');
}

/** The version a worker reports: the given name and build id, else the defaults; both checked. */
export function deploymentVersion(options: DeploymentOptions, derivedBuildId: () => string): WorkerDeploymentVersion {
  const deploymentName = options.deploymentName ?? DEFAULT_DEPLOYMENT_NAME;
  checkDeploymentName(deploymentName, 'deployment.deploymentName');
  const buildId = options.buildId ?? derivedBuildId();
  checkBuildId(buildId, 'deployment.buildId');
  return { deploymentName, buildId };
}

/**
 * Worker options of a versioned worker: every workflow it starts is pinned to its build (a session
 * leaves it only by continuing as new onto the current build at a turn boundary).
 */
export function versionedWorkerOptions(version: WorkerDeploymentVersion): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  return { workerDeploymentOptions: { useWorkerVersioning: true, version, defaultVersioningBehavior: 'PINNED' } };
}
