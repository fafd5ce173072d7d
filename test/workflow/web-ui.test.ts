/**
 * What the Temporal Web UI shows of a session: a static summary, live current details, a summary on
 * every activity and timer, and descriptions on every signal, query and update, read from the
 * history, the describe response and the workflow metadata query on the real dev server.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { AGENT_ATTRIBUTE, BUNDLE_ATTRIBUTE, STATUS_ATTRIBUTE, TOKENS_ATTRIBUTE, TURNS_ATTRIBUTE } from '../../common/search-attributes';
import { text, toolCalls } from '../../fake-model/server';
import { useSessionHarness } from '../support/session-harness';

jest.setTimeout(60_000);

const shared = useSessionHarness();

function summaryOf(metadata: temporal.api.sdk.v1.IUserMetadata | null | undefined): string | undefined {
  return metadata?.summary ? (defaultPayloadConverter.fromPayload(metadata.summary) as string) : undefined;
}

test('web ui: summaries on the session, its activities and its timer; live details; described handlers', async () => {
  shared.h.fake.enqueue(
    toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' }, id: 'call_read' }]),
    toolCalls([{ name: 'save_output', arguments: { file_path: '{output_folder}/ui.md', content: 'x'.repeat(4300) }, id: 'call_save' }]),
    text('Saved it.'),
  );
  const session = await shared.loopwright.start({ bundlePath: shared.bundle, agentId: 'facilitator', model: 'ui-model' });
  await session.send('*intake');

  const description = await session.workflow.describe();
  expect(await description.staticSummary()).toBe('facilitator · requirements-facilitator');
  expect(await description.staticDetails()).toContain('facilitator');

  const metadata = (await session.workflow.query('__temporal_workflow_metadata')) as {
    currentDetails: string;
    definition: {
      queryDefinitions: { name: string; description?: string }[];
      signalDefinitions: { name: string; description?: string }[];
      updateDefinitions: { name: string; description?: string }[];
    };
  };
  expect(metadata.currentDetails).toMatch(/\*\*waiting for user\*\* · turn 1 · iteration 3\/50/);
  expect(metadata.currentDetails).toContain('last reply: Saved it.');
  const defs = [...metadata.definition.queryDefinitions, ...metadata.definition.signalDefinitions, ...metadata.definition.updateDefinitions];
  for (const name of ['state', 'messages', 'transcriptPage', 'interrupt', 'end', 'send', 'awaitTurn', 'approve', 'deny', 'extend']) {
    expect(defs.find((d) => d.name === name)?.description).toMatch(/\w{3,}/);
  }

  const history = await session.workflow.fetchHistory();
  const summaries = (history.events ?? []).flatMap((e) => {
    const summary = summaryOf(e.userMetadata);
    return summary ? [summary] : [];
  });
  // In order: the session (on its start event), the agent's initialisation, the listing of its
  // tools, the question for the model's window, each model call (the read ran inline in the first:
  // the next call says so), the write with its size but never its content, and the idle timer.
  expect(summaries.slice(0, 8)).toEqual([
    'facilitator · requirements-facilitator',
    'initializeAgent facilitator · requirements-facilitator',
    'listTools facilitator',
    'describeModel ui-model · context window',
    'turn 1 · iteration 1 · callModel ui-model',
    'turn 1 · iteration 2 · callModel ui-model · after inline read_file {bundle-root}/config.yaml',
    'save_output {output_folder}/ui.md (4.2 KB)',
    'turn 1 · iteration 3 · callModel ui-model',
  ]);
  expect(summaries.join('\n')).not.toContain('xxxx');
  // Every activity the session scheduled is named in the event list (describeModel included).
  const unnamed = (history.events ?? [])
    .filter((e) => e.activityTaskScheduledEventAttributes && summaryOf(e.userMetadata) === undefined)
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name);
  expect(unnamed).toEqual([]);
  expect(summaries).toContain('describeModel ui-model · context window');
  await session.end();
  const ended = await session.workflow.fetchHistory();
  const timers = (ended.events ?? []).filter((e) => e.timerStartedEventAttributes).map((e) => summaryOf(e.userMetadata));
  expect(timers).toContain('idle timeout: the session ends after 24 hours without a message');
});

test('search attributes: registered on the embedded server, upserted as a session moves, and found by list', async () => {
  expect(await shared.loopwright.hasSearchAttributes()).toBe(true);
  shared.h.fake.enqueue(text('Hello.'));
  const session = await shared.loopwright.start({ bundlePath: shared.bundle, agentId: 'facilitator', workflowId: `ui-search-${process.pid}` });
  await session.send('hi');
  const attributes = async () => (await session.workflow.describe()).typedSearchAttributes;
  let found = await attributes();
  for (let i = 0; i < 50 && found.get(TURNS_ATTRIBUTE) !== 1; i++) {
    await new Promise((r) => setTimeout(r, 100));
    found = await attributes();
  }
  expect(found.get(AGENT_ATTRIBUTE)).toBe('facilitator');
  expect(found.get(BUNDLE_ATTRIBUTE)).toBe('requirements-facilitator');
  expect(found.get(STATUS_ATTRIBUTE)).toBe('waiting_for_user');
  expect(found.get(TURNS_ATTRIBUTE)).toBe(1);
  expect(found.get(TOKENS_ATTRIBUTE)).toBeGreaterThan(0);
  // Visibility catches up asynchronously.
  let listed: Awaited<ReturnType<typeof shared.loopwright.list>> = [];
  for (let i = 0; i < 50 && !listed.some((s) => s.workflowId === session.workflowId); i++) {
    listed = await shared.loopwright.list({ agent: 'facilitator', status: 'waiting_for_user' });
    if (!listed.some((s) => s.workflowId === session.workflowId)) await new Promise((r) => setTimeout(r, 200));
  }
  expect(listed.find((s) => s.workflowId === session.workflowId)).toMatchObject({ agent: 'facilitator', status: 'waiting_for_user', turns: 1 });
  expect(await shared.loopwright.list({ agent: 'nobody-at-all' })).toEqual([]);
  await session.end();
  await session.result();
});
