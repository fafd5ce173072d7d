/**
 * Records a replay fixture: runs a scripted session (tool calls in parallel, a bad tool call, an
 * interrupt, a second turn, end) on a fresh dev server and writes its history as JSON to
 * test/fixtures/histories/<name>.json. Fixtures are never edited afterwards: when workflow code
 * changes, old fixtures must still replay (use `patched`), and a new fixture is recorded beside them.
 *
 *   npx ts-node --transpile-only scripts/record-history.ts <name> [--continue-as-new]
 *
 * With --continue-as-new the session continues as new after a few events (mid-turn and between
 * turns), and every run of the chain is written as <name>-run<k>.json.
 *
 * With --context the session is one of context management instead: a server with a 4,096-token
 * window and a 64-token output limit, turns that read a 6 KB file (compactions with summaries), a
 * reply cut off and continued, a compaction on demand, a budget raised.
 *
 * With --tools: a custom tool and two real MCP servers (see record-tools-session.ts).
 *
 * With --verify: documents checked against their workflow's checklist (see record-verify-session.ts).
 *
 * With --skills: an agent skill that activates a skill and reads its files by bare paths (see
 * record-skills-session.ts).
 *
 * With --providers: a session on Anthropic's Messages API with its prompt cache, a fallback to a
 * Chat Completions model and back (see record-providers-session.ts).
 *
 * With --responses: a session on OpenAI's Responses API with reasoning items and its prompt cache,
 * a fallback to an Anthropic model and back (see record-responses-session.ts).
 *
 * With --cache-compaction[=<window>]: an Anthropic session whose view is compacted while the
 * provider holds its prompt in the cache (see record-cache-compaction-session.ts).
 *
 * With --cache-cold: an Anthropic session whose turn, started after the prompt cache expired (a
 * real five-minute wait), compacts early at no cached tokens (see record-cache-cold-session.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { findTemporalCli } from '../client/server/find-temporal';
import type { ChatMessage } from '../common/messages';
import { hang, isSummaryRequest, type RecordedRequest, type Step, text, toolCalls } from '../fake-model/server';
import type { SessionHandle } from '../client/session-client';
import { copyExampleBundle, startSessionHarness } from '../test/support/session-harness';
import { recordingTools, recordToolsSession } from './record-tools-session';
import { recordSkillsSession } from './record-skills-session';
import { recordVerifySession } from './record-verify-session';
import { recordCommandsSession } from './record-commands-session';
import { recordProvidersSession } from './record-providers-session';
import { recordResponsesSession } from './record-responses-session';
import { recordCacheCompactionSession } from './record-cache-compaction-session';
import { recordCacheColdSession } from './record-cache-cold-session';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from '../test/support/fake-anthropic';
import { FAKE_RESPONSES_KEY, startFakeResponses } from '../test/support/fake-responses';

async function main(): Promise<void> {
  const name = process.argv[2];
  const chain = process.argv.includes('--continue-as-new');
  const context = process.argv.includes('--context');
  const tools = process.argv.includes('--tools');
  const verify = process.argv.includes('--verify');
  const skills = process.argv.includes('--skills');
  const commands = process.argv.includes('--commands');
  const providers = process.argv.includes('--providers');
  const responsesApi = process.argv.includes('--responses');
  const cacheCompaction = process.argv.find((a) => a.startsWith('--cache-compaction'));
  const cacheCold = process.argv.includes('--cache-cold');
  if (!name || !/^[a-z0-9-]+$/.test(name)) throw new Error('usage: record-history.ts <name> [--continue-as-new] (lower-case letters, digits, dashes)');
  const dir = path.resolve(__dirname, '../test/fixtures/histories');
  const existing = fs.readdirSync(dir).filter((f) => f === `${name}.json` || f.startsWith(`${name}-run`));
  if (existing.length > 0) throw new Error(`${existing.join(', ')} exist(s); fixtures are never overwritten`);

  const h = await startSessionHarness();
  const bundle = copyExampleBundle();
  const anthropic = providers || responsesApi || cacheCompaction || cacheCold ? await startFakeAnthropic() : undefined;
  const responses = responsesApi ? await startFakeResponses() : undefined;
  try {
    // With --responses the OpenAI base URL is the Responses fake's (both OpenAI APIs share it).
    const openai = responses ? { baseURL: responses.baseURL, apiKey: FAKE_RESPONSES_KEY } : { baseURL: h.fake.baseURL, apiKey: 'test-key' };
    const model = anthropic ? { model: { ...openai, anthropicBaseURL: anthropic.baseURL, anthropicApiKey: FAKE_ANTHROPIC_KEY } } : {};
    const { loopwright } = await h.startWorker(tools ? { activities: { tools: recordingTools() } } : { activities: model });
    if (cacheCold && anthropic) await recordCacheColdSession(loopwright, anthropic, bundle.bundle, name);
    else if (cacheCompaction && anthropic) await recordCacheCompactionSession(loopwright, anthropic, bundle.bundle, name, Number(cacheCompaction.split('=')[1] ?? 8192));
    else if (responses && anthropic) await recordResponsesSession(loopwright, responses, anthropic, bundle.bundle, name);
    else if (anthropic) await recordProvidersSession(loopwright, h.fake, anthropic, bundle.bundle, name);
    if (tools) await recordToolsSession(loopwright, h.fake, bundle.bundle, name);
    if (verify) await recordVerifySession(loopwright, h.fake, name, chain);
    if (skills) await recordSkillsSession(loopwright, h.fake, name, chain);
    if (commands) await recordCommandsSession(loopwright, h.fake, bundle.bundle, name);
    const session = context ? await recordContextSession(loopwright, h.fake, bundle.bundle, name, chain) : undefined;
    if (!session && !tools && !verify && !skills && !commands && !providers && !responsesApi && !cacheCompaction && !cacheCold)
      h.fake.enqueue(
        toolCalls([
          { id: 'call_1', name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/intake/workflow.yaml' } },
          { id: 'call_2', name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' } },
          { id: 'call_3', name: 'no_such_tool', arguments: {} },
        ]),
        toolCalls([{ id: 'call_4', name: 'save_output', arguments: { file_path: '{output_folder}/fixture.md', content: '# Fixture\n' } }]),
        text('Saved.'),
        hang(),
        text('Resumed.'),
      );
    if (!session && !tools && !verify && !skills && !commands && !providers && !responsesApi && !cacheCompaction && !cacheCold)
      await recordBasicSession(loopwright, h.fake, bundle.bundle, name, chain);
    const workflowId = `fixture-${name}`;
    // The Temporal CLI writes the standard JSON history format that every SDK's replayer reads.
    const cli = findTemporalCli();
    const runs: string[] = [];
    for await (const execution of h.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(execution.runId);
    // Oldest first: run ids are time-ordered UUIDv7s.
    runs.sort();
    if (chain && runs.length < 2) throw new Error('the session did not continue as new');
    for (const [i, runId] of runs.entries()) {
      const json = execFileSync(cli.path, ['workflow', 'show', '--address', h.server.address, '--workflow-id', workflowId, '--run-id', runId, '--output', 'json'], { encoding: 'utf8' });
      const file = path.join(dir, runs.length === 1 ? `${name}.json` : `${name}-run${i + 1}.json`);
      fs.writeFileSync(file, json.endsWith('\n') ? json : `${json}\n`);
      console.log(`wrote ${file} (${(JSON.parse(json) as { events: unknown[] }).events.length} events)`);
    }
  } finally {
    await h.close();
    await anthropic?.close();
    await responses?.close();
    bundle.cleanup();
  }
}

type Loopwright = Awaited<ReturnType<Awaited<ReturnType<typeof startSessionHarness>>['startWorker']>>['loopwright'];
type Fake = Awaited<ReturnType<typeof startSessionHarness>>['fake'];

/** Parallel tool calls, a bad call, an interrupt, a second turn, end. */
async function recordBasicSession(loopwright: Loopwright, fake: Fake, bundle: string, name: string, chain: boolean): Promise<void> {
  const session = await loopwright.start({
    bundlePath: bundle,
    agentId: 'facilitator',
    workflowId: `fixture-${name}`,
    ...(chain ? { continueAsNew: { maxHistoryEvents: 20 } } : {}),
  });
  const first = await session.send('*intake');
  if (!first.success) throw new Error(`first turn failed: ${first.error}`);
  const second = session.send('take your time');
  await fake.waitForRequests(4, 20_000);
  await session.interrupt('recording an interrupt');
  if ((await second).status !== 'interrupted') throw new Error('the second turn was not interrupted');
  const third = await session.send('go on');
  if (!third.success) throw new Error(`third turn failed: ${third.error}`);
  await session.end();
  await session.result();
}

/** Context management: compactions with summaries, a continued reply, compact on demand, a raised budget. */
async function recordContextSession(loopwright: Loopwright, fake: Fake, bundle: string, name: string, chain: boolean): Promise<SessionHandle> {
  fs.writeFileSync(path.join(bundle, 'notes.md'), 'Every answer is written down and read back to the user.\n'.repeat(110));
  fake.setLimits({ contextWindow: 4096, maxOutputTokens: 64 });
  fake.setResponder((request: RecordedRequest): Step => {
    if (isSummaryRequest(request)) return text('Summary: the user had the notes read several times.');
    const messages = (request.body?.messages ?? []) as ChatMessage[];
    const last = messages[messages.length - 1]!;
    const user = String([...messages].reverse().find((m) => m.role === 'user')?.content ?? '');
    if (user.includes('cut off at the output limit')) return text(' and that is the end.');
    if (user.startsWith('write long')) return text('A long answer. '.repeat(30));
    if (user.startsWith('read') && last.role === 'user') return toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/notes.md' } }]);
    return text('Noted.');
  });
  const session = await loopwright.start({
    bundlePath: bundle,
    agentId: 'facilitator',
    workflowId: `fixture-${name}`,
    context: { window: 4096, keepRecent: 1 },
    budget: { turnTokens: 50_000, sessionTokens: 1_000_000 },
    maxContinuations: 1,
    ...(chain ? { continueAsNew: { maxHistoryEvents: 60 } } : {}),
  });
  for (let turn = 1; turn <= 4; turn++) {
    const result = await session.send(`read the notes (${turn})`);
    if (result.status !== 'completed') throw new Error(`turn ${turn}: ${result.status} ${result.error ?? ''}`);
  }
  const long = await session.send('write long');
  if (!long.continuations) throw new Error('the long reply was not continued');
  await session.compact();
  await session.budget({ sessionTokens: 1000 });
  await session.send('read the notes (last)');
  await session.end();
  await session.result();
  return session;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
