/**
 * `loopwright export` and `loopwright eval` end to end through `node bin/loopwright.js`, against a
 * dev server, the fake model and a worker of the test's own: a recorded session exported to a file
 * (decoded, with a secret-looking variable's value redacted), then replayed from that file and from
 * its workflow id. A candidate that behaves as recorded passes every rule (exit 0); one that spends
 * more tokens and reads another file breaks `tokens>+20%` and `trajectory-changed` (exit 1), in the
 * table, the JSON report and the JUnit XML. With `--rubric` a grader model grades the answers (a
 * grade the candidate fails breaks `grade-failed`); with a suite budget the recordings past it are
 * skipped, and the exit status says so.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChatMessage } from '../../common/messages';
import type { LoopwrightClient } from '../../client/session-client';
import type { EvalCaseReport } from '../../common/eval/eval-types';
import { type RecordedRequest, type Step, text, toolCalls } from '../../fake-model/server';
import { copyExampleBundle, startSessionHarness, type SessionHarness } from '../support/session-harness';
import { type CliResult, cliEnvironment, describeRun, runCli } from './cli-runner';

jest.setTimeout(120_000);

let h: SessionHarness;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let stateDir: string;
let env: NodeJS.ProcessEnv;
let loopwright: LoopwrightClient;
const SECRET = 'tok-5f3a9c1e77d2b8e4';

async function cli(args: string[], code: number, extra: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const result = await runCli(args, { ...env, ...extra }, { cwd: bundleCopy.root, timeoutMs: 90_000 });
  if (result.code !== code) throw new Error(`expected exit ${code}\n${describeRun(args, result)}`);
  return result;
}

/** The recorded behaviour; a model named `greedy` reads another file and spends more tokens. */
function responder(request: RecordedRequest): Step {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  // The grader: the greedy candidate's answers fail the rubric.
  if (String(messages[0]?.content ?? '').startsWith('You are a strict grader')) {
    const greedy = String(messages[1]?.content ?? '').includes('[greedy]');
    return text(JSON.stringify({ score: greedy ? 2 : 8, passed: !greedy, reason: greedy ? 'boasts' : 'plain' }));
  }
  const last = messages.map((m) => m.role).lastIndexOf('user');
  const step = messages.slice(last).filter((m) => m.role === 'assistant').length;
  const greedy = request.body?.model === 'greedy';
  if (step === 0) return toolCalls([{ name: 'read_file', arguments: { file_path: `{bundle-root}/workflows/intake/${greedy ? 'instructions' : 'template'}.md` } }]);
  return text(`Read it. The word is ${SECRET}.${greedy ? ' [greedy]' : ''}`, greedy ? { usage: { prompt_tokens: 30_000, completion_tokens: 100 } } : {});
}

beforeAll(async () => {
  h = await startSessionHarness();
  bundleCopy = copyExampleBundle();
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-cli-eval-'));
  const worker = await h.startWorker();
  loopwright = worker.loopwright;
  env = cliEnvironment({ TEMPORAL_ADDRESS: h.server.address, OPENAI_BASE_URL: h.fake.baseURL, LOOPWRIGHT_TASK_QUEUE: worker.taskQueue, LOOPWRIGHT_STATE_DIR: stateDir });
  h.fake.setResponder(responder);
}, 120_000);

afterAll(async () => {
  await h?.close();
  bundleCopy?.cleanup();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

test('export and eval: the same behaviour passes, more tokens and another read fail their rules, in the table, JSON and JUnit', async () => {
  const session = await loopwright.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator', projectRoot: bundleCopy.root, workflowId: `cli-eval-rec-${process.pid}` });
  await session.send('read the template');
  await session.end();
  await session.result();

  const file = path.join(stateDir, 'evals', 'read.json');
  const exported = await cli(['export', session.workflowId, '--out', file, '--decoded'], 0, { MY_SERVICE_TOKEN: SECRET });
  expect(exported.stderr).toMatch(/Exported .*1 run\(s\), \d+ events, payloads decoded/);
  const text = fs.readFileSync(file, 'utf8');
  expect(JSON.parse(text)).toMatchObject({ format: 'loopwright-session-history/1', workflowId: session.workflowId, payloads: 'decoded' });
  // The secret-looking variable's value is redacted in every payload (decoded, it would read "The word is ...").
  const decodedPayloads = [...text.matchAll(/"data": "([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('utf8')).join('\n');
  expect(decodedPayloads).toContain('The word is [redacted]');
  expect(decodedPayloads).not.toContain(SECRET);

  // The same behaviour: every rule holds.
  const same = await cli(['eval', file, '--fail-on', 'status-changed,trajectory-changed,tokens>+20%', '--id', `cli-eval-same-${process.pid}`], 0);
  expect(same.stdout).toMatch(/^#\s+recording\s+turns\s+status/m);
  expect(same.stdout).toMatch(/1 recording\(s\): 1 passed, 0 failed/);

  // A candidate model that reads another file and spends more tokens, from the file and from the session itself.
  const json = path.join(stateDir, 'report.json');
  const junit = path.join(stateDir, 'eval.xml');
  const greedy = await cli(
    ['eval', file, session.workflowId, '--model', 'greedy', '--fail-on', 'trajectory-changed', '--fail-on', 'tokens>+20%', '--json', json, '--junit', junit, '--id', `cli-eval-greedy-${process.pid}`],
    1,
  );
  expect(greedy.stdout).toMatch(/FAIL trajectory-changed, tokens>\+20%/);
  expect(greedy.stdout).toMatch(/trajectory: turn 1, call 1: read_file .*instructions\.md.* instead of .*template\.md/);
  expect(greedy.stdout).toMatch(/2 recording\(s\): 0 passed, 2 failed/);
  const report = JSON.parse(fs.readFileSync(json, 'utf8')) as { failed: number; failOn: string[]; cases: (EvalCaseReport & { broken: { rule: string }[] })[] };
  expect(report.failOn).toEqual(['trajectory-changed', 'tokens>+20%']);
  expect(report.failed).toBe(2);
  expect(report.cases.map((c) => [c.name, c.broken.map((b) => b.rule)])).toEqual([
    ['read', ['trajectory-changed', 'tokens>+20%']],
    [session.workflowId, ['trajectory-changed', 'tokens>+20%']],
  ]);
  // The diverging read ran (in the scratch copy); the recorded one was never asked for.
  expect(report.cases[0]!.replay).toMatchObject({ answered: 0, diverged: 1 });
  const xml = fs.readFileSync(junit, 'utf8');
  expect(xml).toMatch(/<testsuites name="loopwright eval" tests="2" failures="2" errors="0"/);
  expect(xml.match(/<testcase /g)).toHaveLength(2);
  expect(xml.match(/<failure type="tokens&gt;\+20%"/g)).toHaveLength(2);

  // --json alone prints the report as one object; a bad rule is a usage error.
  const printed = await cli(['eval', file, '--json', '--id', `cli-eval-same-${process.pid}`], 0);
  expect(JSON.parse(printed.stdout)).toMatchObject({ evalId: `cli-eval-same-${process.pid}`, failed: 0, cases: [expect.objectContaining({ name: 'read' })] });
  const bad = await cli(['eval', file, '--fail-on', 'tokens>lots'], 2);
  expect(bad.stderr).toMatch(/--fail-on: "tokens>lots" is not a rule/);

  // A rubric from a file and a grader model: the answers graded on both sides, the candidate's failing it.
  const rubric = path.join(stateDir, 'rubric.md');
  fs.writeFileSync(rubric, 'A good answer says what the file says, plainly.\n');
  const graded = await cli(
    ['eval', file, '--model', 'greedy', '--rubric', rubric, '--grader-model', 'grader', '--fail-on', 'grade-failed', '--json', json, '--id', `cli-eval-graded-${process.pid}`],
    1,
  );
  const gradedReport = JSON.parse(fs.readFileSync(json, 'utf8')) as { grader: unknown; cases: (EvalCaseReport & { broken: { rule: string }[] })[] };
  expect(gradedReport.grader).toEqual({ rubricSource: rubric, model: 'grader' });
  expect(gradedReport.cases[0]!.grades).toMatchObject({ model: 'grader', baselineMean: 8, candidateMean: 2 });
  expect(gradedReport.cases[0]!.broken.map((b) => b.rule)).toEqual(['grade-failed']);
  expect(graded.stdout).toMatch(/\s8 → 2\s+FAIL grade-failed$/m);
  expect(graded.stdout).toContain('grade: turn 1 candidate 2/10 failed: boasts');
  const noRubric = await cli(['eval', file, '--grader-model', 'grader'], 2);
  expect(noRubric.stderr).toMatch(/--grader-model: needs --rubric/);

  // A suite budget of one token: the first recording runs, the second is skipped, and the exit status says so.
  const budget = await cli(['eval', file, file, '--suite-token-budget', '1', '--concurrency', '1', '--junit', junit, '--id', `cli-eval-budget-${process.pid}`], 1);
  expect(budget.stdout).toMatch(/^2\s+read\s.*SKIPPED \(budget\)$/m);
  expect(budget.stdout).toMatch(/2 recording\(s\): 1 passed, 0 failed, 1 skipped/);
  expect(budget.stdout).toMatch(/suite budget reached \([\d,]+ of 1 tokens\): 1 recording\(s\) not replayed, reported as skipped/);
  expect(budget.stderr).toContain('The suite budget was reached: 1 recording(s) not replayed (skipped); exit status 1');
  expect(fs.readFileSync(junit, 'utf8')).toMatch(/tests="2" failures="0" errors="0" skipped="1"/);
  const unpriced = await cli(['eval', file, '--suite-cost-budget', '0.5'], 2);
  expect(unpriced.stderr).toMatch(/--suite-cost-budget: give the price of the candidate model with --price/);
});
