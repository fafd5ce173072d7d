/**
 * Crash recovery of a skills session: the worker (a real `loopwright worker` process) is killed
 * with SIGKILL during the model call that follows a skill's activation; its replacement has none
 * of the first worker's memory (no transcript copy, no runtime context), yet the retried call's
 * bare path still resolves from the active skill, and the session ends as one without a crash does.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { LoopwrightClient } from '../../client/session-client';
import type { ChatMessage, ToolMessage } from '../../common/messages';
import { delay, type FakeOpenAI, type Step, startFakeOpenAI, text, toolCalls } from '../../fake-model/server';
import { writeSkillsProject } from '../support/skills-project';
import { startTestTemporal, type TestTemporal } from '../support/temporal-server';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(90_000);

let stateDir: string;
let server: TestTemporal;
let fake: FakeOpenAI;
let connection: Connection;
let project: ReturnType<typeof writeSkillsProject>;
const workers: WorkerProcess[] = [];
let slowMs = 0;
/** The script follows the request alone (assistant messages since the last user message), so a retried call gets the same answer. */
function scripted(req: { body: { messages?: ChatMessage[] } | null }): Step {
  const messages = req.body?.messages ?? [];
  const step = messages.slice(messages.map((m) => m.role).lastIndexOf('user')).filter((m) => m.role === 'assistant').length;
  if (step === 0) return toolCalls([{ id: 'call_activate', name: 'activate_skill', arguments: { name: 'lw-notes' } }]);
  if (step === 1) {
    const read = toolCalls([{ id: 'call_asset', name: 'read_file', arguments: { file_path: 'assets/notes-template.md' } }]);
    return slowMs > 0 ? delay(slowMs, read) : read;
  }
  return text('⚓ Done.');
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-skills-crash-'));
  [server, fake] = await Promise.all([startTestTemporal({ dbFile: path.join(stateDir, 'temporal.db') }), startFakeOpenAI({ responder: scripted })]);
  connection = await Connection.connect({ address: server.address });
  project = writeSkillsProject();
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await connection?.close();
  await fake?.close();
  await server?.stop();
  project?.cleanup();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

test('crash: a worker killed after a skill was activated is replaced; the bare path of the retried call resolves from the skill', async () => {
  const taskQueue = 'skills-crash';
  // The killed worker holds the session's next steps (and the query that reads its transcript for the retried call) for its
  // sticky timeout before the replacement may take them: a short one, as the 1 s of startWorkerProcess would be a good part of the wait.
  const env = { TEMPORAL_ADDRESS: server.address, LOOPWRIGHT_TASK_QUEUE: taskQueue, OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'test-key', LOOPWRIGHT_STICKY_TIMEOUT: '200ms' };
  const lw = new LoopwrightClient(new Client({ connection }), taskQueue);
  const first = await startWorkerProcess(env);
  workers.push(first);

  slowMs = 5_000;
  // A heartbeat timeout of 1 s (a beat every 500 ms): the killed call is given up a second after it started.
  const session = await lw.start({ bundlePath: project.root, agentId: 'lw-agent-guide', timeouts: { modelHeartbeat: '1 second' } });
  const turn = session.send('TP');
  // The second model call (after the activation) is under way: kill its worker.
  await fake.waitForRequests(2, 60_000);
  await first.kill('SIGKILL');
  slowMs = 0;
  const second = await startWorkerProcess(env);
  workers.push(second);

  const result = await turn;
  expect(result).toMatchObject({ success: true, response: '⚓ Done.' });
  const tools = (await session.turnMessages(result)).filter((m): m is ToolMessage => m.role === 'tool');
  const byId = Object.fromEntries(tools.map((m) => [m.tool_call_id, JSON.parse(m.content) as Record<string, unknown>]));
  expect(byId.call_activate).toMatchObject({ success: true, skill: { name: 'lw-notes' } });
  expect(byId.call_asset).toMatchObject({ success: true, path: path.join(project.root, '.claude/skills/lw-notes/assets/notes-template.md') });
  await session.end();
  await session.result();
});
