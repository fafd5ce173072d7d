/**
 * The versioned worker's settings and build id (worker/deployment.ts, `loopwright worker`'s flags),
 * and the reader of the carried state a session hands its next run, possibly on a newer build
 * (common/continued-contract.ts). Pure units: no server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildIdOf, deploymentFromEnv, DeploymentSettingError, deploymentVersion, versionedWorkerOptions } from '../../../worker/deployment';
import { WORKFLOWS_PATH } from '../../../worker/workflow-bundle';
import { LoopwrightPlugin } from '../../../worker/plugin';
import { workerDeployment } from '../../../cli/commands/worker-command';
import { BadCarriedStateError, NewerCarriedStateError, readContinuedSession } from '../../../common/continued-contract';
import { CONTINUED_SESSION_VERSION, type ContinuedSession } from '../../../common/continued-types';

/** What a run of layout 1 handed over (the fields every layout has; no `version`). */
const LAYOUT_1: ContinuedSession = {
  fromRunId: 'run-1',
  run: 2,
  init: { agent: { id: 'a', name: 'A', title: 'A', icon: '' }, tools: [], context: { variables: {} } } as unknown as ContinuedSession['init'],
  transcript: { count: 0, hash: 'h', bytes: 0, messages: [] },
  turn: 3,
  usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 },
  endRequested: false,
  recentTurns: [],
};

describe('deployment settings', () => {
  test('deploymentFromEnv: unversioned without either variable; either one turns versioning on', () => {
    expect(deploymentFromEnv({})).toBeUndefined();
    expect(deploymentFromEnv({ LOOPWRIGHT_DEPLOYMENT: ' ' })).toBeUndefined();
    expect(deploymentFromEnv({ LOOPWRIGHT_BUILD_ID: '7' })).toEqual({ buildId: '7' });
    expect(deploymentFromEnv({ LOOPWRIGHT_DEPLOYMENT: 'agents', LOOPWRIGHT_BUILD_ID: '1.2.3-abc' })).toEqual({ deploymentName: 'agents', buildId: '1.2.3-abc' });
  });

  test('a name with a dot or a space, or a build id with a space, is refused naming its flag or variable', () => {
    expect(() => deploymentFromEnv({ LOOPWRIGHT_DEPLOYMENT: 'a.b' })).toThrow(
      new DeploymentSettingError('LOOPWRIGHT_DEPLOYMENT', 'expected a name of 1 to 255 characters without spaces or dots, got "a.b"'),
    );
    expect(() => workerDeployment({ buildId: 'has space' }, {})).toThrow(/^--build-id: expected an id/);
    expect(() => workerDeployment({ deployment: 'x'.repeat(256) }, {})).toThrow(/^--deployment: /);
    expect(() => workerDeployment({ makeCurrent: true }, {})).toThrow(/^--make-current: only a versioned worker/);
  });

  test('workerDeployment: flags win over the variables, and the missing half stays for the worker to default', () => {
    const env = { LOOPWRIGHT_DEPLOYMENT: 'from-env', LOOPWRIGHT_BUILD_ID: 'env-build' };
    expect(workerDeployment({ deployment: 'flag' }, env)).toEqual({ deploymentName: 'flag', buildId: 'env-build' });
    expect(workerDeployment({ buildId: 'b2' }, {})).toEqual({ buildId: 'b2' });
    expect(workerDeployment({}, {})).toBeUndefined();
    expect(deploymentVersion({ buildId: 'b2' }, () => 'unused')).toEqual({ deploymentName: 'loopwright', buildId: 'b2' });
    expect(versionedWorkerOptions({ deploymentName: 'd', buildId: 'b' })).toEqual({
      workerDeploymentOptions: { useWorkerVersioning: true, version: { deploymentName: 'd', buildId: 'b' }, defaultVersioningBehavior: 'PINNED' },
    });
  });

  test('buildIdOf: the package version and the bundle hash; another bundle, another id; a file and its text agree', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-build-id-'));
    try {
      const file = path.join(dir, 'bundle.js');
      fs.writeFileSync(file, 'workflow code A');
      const fromText = buildIdOf({ workflowBundle: { code: 'workflow code A' } }, WORKFLOWS_PATH, { version: '1.2.3' });
      expect(fromText).toMatch(/^1\.2\.3-[0-9a-f]{12}$/);
      expect(buildIdOf({ workflowBundle: { codePath: file } }, WORKFLOWS_PATH, { version: '1.2.3' })).toBe(fromText);
      expect(buildIdOf({ workflowBundle: { code: 'workflow code B' } }, WORKFLOWS_PATH, { version: '1.2.3' })).not.toBe(fromText);
      // Loopwright's own sources, bundled at start-up: hashed by their files; traced apart.
      const sources = buildIdOf({ workflowsPath: WORKFLOWS_PATH }, WORKFLOWS_PATH);
      expect(sources).toMatch(/^\d+\.\d+\.\d+.*-[0-9a-f]{12}$/);
      expect(buildIdOf({ workflowsPath: WORKFLOWS_PATH }, WORKFLOWS_PATH, { traced: true })).not.toBe(sources);
      expect(() => buildIdOf({ workflowsPath: path.join(dir, 'workflows.ts') }, WORKFLOWS_PATH)).toThrow(/^deployment\.buildId: the worker bundles its own workflows/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('LoopwrightPlugin: deployment makes the worker versioned, its build id derived from the bundle it loads; options of its own win', () => {
  // The plugin builds a client on the connection but calls nothing on it here.
  const base = { taskQueue: 'q', connection: {} as never, workflowBundle: { code: 'plugin bundle' } };
  const derived = buildIdOf({ workflowBundle: { code: 'plugin bundle' } }, WORKFLOWS_PATH);
  expect(new LoopwrightPlugin({ deployment: {} }).configureWorker(base).workerDeploymentOptions).toEqual({
    useWorkerVersioning: true,
    version: { deploymentName: 'loopwright', buildId: derived },
    defaultVersioningBehavior: 'PINNED',
  });
  expect(new LoopwrightPlugin().configureWorker(base).workerDeploymentOptions).toBeUndefined();
  const own = { useWorkerVersioning: true as const, version: { deploymentName: 'mine', buildId: '9' }, defaultVersioningBehavior: 'AUTO_UPGRADE' as const };
  expect(new LoopwrightPlugin({ deployment: { buildId: '1' } }).configureWorker({ ...base, workerDeploymentOptions: own }).workerDeploymentOptions).toEqual(own);
  expect(() => new LoopwrightPlugin({ deployment: { deploymentName: 'a.b' } }).configureWorker(base)).toThrow(DeploymentSettingError);
});

describe('carried state contract', () => {
  test('readContinuedSession: layout 1 (no version) and this layout are read, and come out in this layout', () => {
    expect(readContinuedSession(LAYOUT_1)).toEqual({ ...LAYOUT_1, version: CONTINUED_SESSION_VERSION });
    const current = { ...LAYOUT_1, version: CONTINUED_SESSION_VERSION, upgradedFrom: '0.1.0-abc' };
    expect(readContinuedSession(current)).toEqual(current);
  });

  test('readContinuedSession: a newer layout is refused as newer (the step is retried), a non-layout as bad', () => {
    expect(() => readContinuedSession({ ...LAYOUT_1, version: CONTINUED_SESSION_VERSION + 1 })).toThrow(NewerCarriedStateError);
    expect(() => readContinuedSession({ ...LAYOUT_1, version: CONTINUED_SESSION_VERSION + 1 })).toThrow(`layout ${CONTINUED_SESSION_VERSION + 1}, newer than this build reads`);
    expect(() => readContinuedSession({ ...LAYOUT_1, version: 0 })).toThrow(BadCarriedStateError);
    expect(() => readContinuedSession({ ...LAYOUT_1, version: 1.5 })).toThrow('continued.version: expected a positive whole number, got 1.5');
  });
});
