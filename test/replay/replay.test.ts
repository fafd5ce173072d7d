/**
 * Every recorded session history replays against today's workflow code. Fixtures under
 * test/fixtures/histories are written by scripts/record-history.ts and never edited.
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, Worker, type WorkflowBundle } from '@temporalio/worker';
import { testWorkflowBundle } from '../support/workflow-bundle';
import { DeterminismViolationError } from '@temporalio/workflow';
import { bundlerLogger } from '../../worker/create-worker';
import { quietRuntime } from '../support/session-harness';

const FIXTURES = path.resolve(__dirname, '../fixtures/histories');
const fixtures = fs
  .readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.json'))
  .sort();

let current: WorkflowBundle;
/** Each fixture's replay error (undefined: it replayed), by file. */
const replayed = new Map<string, unknown>();

beforeAll(async () => {
  quietRuntime();
  current = await testWorkflowBundle();
  // One replay worker for every history, each replayed on its own (a worker per history costs a second each).
  const histories = fixtures.map((file) => ({ workflowId: `fixture-${file}`, history: JSON.parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8')) as unknown }));
  for await (const result of Worker.runReplayHistories({ workflowBundle: current }, histories)) replayed.set(result.workflowId.slice('fixture-'.length), result.error);
}, 120_000);

test('replay: there is at least one recorded history', () => {
  expect(fixtures.length).toBeGreaterThan(0);
});

test.each(fixtures)('replay: %s replays against the current workflow code', (file) => {
  expect(replayed.has(file)).toBe(true);
  expect(replayed.get(file)).toBeUndefined();
});

test('replay: an incompatible change to the workflow is caught', async () => {
  const changed = await bundleWorkflowCode({ workflowsPath: require.resolve('./changed-workflow'), logger: bundlerLogger });
  const history = JSON.parse(fs.readFileSync(path.join(FIXTURES, fixtures[0]), 'utf8'));
  await expect(Worker.runReplayHistory({ workflowBundle: changed }, history, 'changed')).rejects.toBeInstanceOf(DeterminismViolationError);
  // The shared replay worker of the fixtures' tests reports it too, per history.
  const results: unknown[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: changed }, [{ workflowId: 'changed-many', history }])) results.push(result.error);
  expect(results).toHaveLength(1);
  expect(results[0]).toBeInstanceOf(DeterminismViolationError);
});
