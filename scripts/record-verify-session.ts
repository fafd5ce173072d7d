/**
 * The session `record-history.ts --verify` records: a workflow whose checklist checks the document
 * it saves; the first check fails an item, the agent fixes it and the second passes (the session
 * continues as new between iterations, so the pending check travels with the turn); a
 * `validate-workflow` menu item checked on demand; a turn that ends `failed_verification`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LoopwrightClient } from '../client/session-client';
import { type FakeOpenAI, text, toolCalls } from '../fake-model/server';
import { verdict, writeVerifyBundle } from '../test/support/verify-bundle';

export async function recordVerifySession(loopwright: LoopwrightClient, fake: FakeOpenAI, name: string, chain: boolean): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-record-verify-'));
  const save = (id: string, content: string) => toolCalls([{ id, name: 'save_output', arguments: { file_path: '{output_folder}/spec.md', content } }]);
  fake.enqueue(
    toolCalls([{ id: 'call_wf', name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/spec/workflow.yaml' } }]),
    save('call_s1', 'Goal: faster invoices.'),
    text('Saved.'),
    verdict({ 2: 'no users are named' }),
    save('call_s2', 'Goal: faster invoices.\nUsers: finance.'),
    text('Fixed.'),
    verdict(),
    verdict({ 3: 'a placeholder is left' }),
    toolCalls([{ id: 'call_wf2', name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/spec/workflow.yaml' } }]),
    save('call_s3', 'Goal: TBD'),
    text('Saved.'),
    verdict({ 3: 'TBD' }),
    text('I will leave it.'),
  );
  try {
    const bundle = writeVerifyBundle(root);
    const session = await loopwright.start({
      bundlePath: bundle,
      agentId: 'writer',
      workflowId: `fixture-${name}`,
      projectRoot: root,
      outputRoots: [path.join(root, 'docs')],
      verify: { maxAttempts: 2 },
      ...(chain ? { continueAsNew: { maxHistoryEvents: 25 } } : {}),
    });
    const first = await session.send('*spec');
    if (first.verification?.status !== 'verified' || first.verification.attempts !== 2) throw new Error(`first turn: ${JSON.stringify(first.verification)}`);
    const second = await session.send('*validate-spec');
    if (second.status !== 'failed_verification') throw new Error(`second turn: ${second.status}`);
    const third = await session.send('*spec');
    if (third.status !== 'failed_verification') throw new Error(`third turn: ${third.status}`);
    await session.end();
    await session.result();
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
