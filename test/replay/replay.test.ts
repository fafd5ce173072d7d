/**
 * Every recorded session history replays against today's workflow code. Fixtures under
 * test/fixtures/histories are written by scripts/record-history.ts and never edited.
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { testWorkflowBundle } from '../support/workflow-bundle';
import { DeterminismViolationError } from '@temporalio/workflow';
import { bundlerLogger } from '../../worker/create-worker';
import { quietRuntime } from '../support/session-harness';

const FIXTURES = path.resolve(__dirname, '../fixtures/histories');
const fixtures = fs
  .readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.json'))
  .sort();

let current: WorkflowBundleWithSourceMap;

beforeAll(async () => {
  quietRuntime();
  current = await testWorkflowBundle();
}, 60_000);

test('replay: there is at least one recorded history', () => {
  expect(fixtures.length).toBeGreaterThan(0);
});

test.each(fixtures)('replay: %s replays against the current workflow code', async (file) => {
  const history = JSON.parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8'));
  await expect(Worker.runReplayHistory({ workflowBundle: current }, history, `fixture-${file}`)).resolves.toBeUndefined();
});

test('replay: an incompatible change to the workflow is caught', async () => {
  const changed = await bundleWorkflowCode({ workflowsPath: require.resolve('./changed-workflow'), logger: bundlerLogger });
  const history = JSON.parse(fs.readFileSync(path.join(FIXTURES, fixtures[0]), 'utf8'));
  await expect(Worker.runReplayHistory({ workflowBundle: changed }, history, 'changed')).rejects.toBeInstanceOf(DeterminismViolationError);
});
