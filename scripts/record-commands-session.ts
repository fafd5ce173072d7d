/**
 * The session `record-history.ts --commands` records: commands on; a command approved and run in
 * the sandbox (it writes into the output folder and prints a file of the project), a command denied,
 * and a command that exits with a failure status; then the model answers.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { LoopwrightClient } from '../client/session-client';
import { type FakeOpenAI, text, toolCalls } from '../fake-model/server';

export async function recordCommandsSession(loopwright: LoopwrightClient, fake: FakeOpenAI, bundle: string, name: string): Promise<void> {
  // The sandbox runs a command as the project's owner (nobody when root owns it): the project is nobody's, as a user's would be theirs.
  fs.chmodSync(path.dirname(bundle), 0o755);
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', '65534:65534', bundle]);
  fake.enqueue(
    toolCalls([{ id: 'call_run', name: 'run_command', arguments: { command: 'echo ran > {output_folder}/ran.txt && head -c 20 {project-root}/config.yaml' } }]),
    toolCalls([{ id: 'call_denied', name: 'run_command', arguments: { command: 'touch {output_folder}/denied.txt' } }]),
    toolCalls([{ id: 'call_fails', name: 'run_command', arguments: { command: 'exit 3' } }]),
    text('Ran one, one was declined, one failed.'),
  );
  const session = await loopwright.start({ bundlePath: bundle, agentId: 'facilitator', workflowId: `fixture-${name}`, commands: { enabled: true } });
  const turn = session.send('run the commands');
  const decide = async (callId: string, approve: boolean): Promise<void> => {
    for (let i = 0; i < 400; i++) {
      const state = await session.state();
      if (state.pendingApprovals.some((p) => p.callId === callId)) {
        await (approve ? session.approve(callId) : session.deny(callId, 'not this one'));
        return;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`${callId} never waited for approval`);
  };
  await decide('call_run', true);
  await decide('call_denied', false);
  await decide('call_fails', true);
  const result = await turn;
  if (!result.success || !fs.existsSync(path.join(bundle, 'docs', 'ran.txt'))) throw new Error(`the turn did not go as scripted: ${JSON.stringify(result)}`);
  await session.end();
  await session.result();
}
