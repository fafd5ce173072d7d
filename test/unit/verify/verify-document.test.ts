/**
 * The `verifyDocument` activity as the worker runs it (MockActivityEnvironment), against the fake
 * model server over real HTTP with the real openai client, on files in a temp project on disk.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { createModelActivities } from '../../../activities/model/call-model';
import { VERIFY_MIN_OUTPUT_TOKENS } from '../../../activities/verify/verify-document';
import { pathVariables } from '../../../bundle/variables';
import type { ChatMessage } from '../../../common/messages';
import { MODEL_BAD_REQUEST, MODEL_BAD_RESPONSE } from '../../../common/model-call';
import type { RuntimeContext } from '../../../common/runtime-context';
import type { VerifyInput, VerifyResult, VerifyTarget } from '../../../common/verify-types';
import { startFakeOpenAI, text, type FakeOpenAI } from '../../../fake-model/server';
import { mockEnv, rejectionOf, runIn } from '../model/fake-client';

const KEY = 'sk-test-fake-verify-0123456789';
const CHECKLIST = ['# PRD checklist', '', '## Goals', '- [ ] Goals are stated', '', '## Risks', '- [x] Risks are listed with mitigations', ''].join('\n');
const DOCUMENT = '# PRD\n\n## Goals\nShip the Falcon app.\n';

let fake: FakeOpenAI;
let dir: string;
let ctx: RuntimeContext;

async function write(rel: string, content: string): Promise<string> {
  const file = path.join(dir, rel);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, content);
  return file;
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'loopwright-verify-')));
  const bundle = path.join(dir, 'project', 'bundle');
  const project = path.join(dir, 'project');
  await write('project/bundle/checklists/prd.md', CHECKLIST);
  await write('project/bundle/checklists/empty.md', '# Nothing to check\n\nJust prose.\n');
  await write('project/out/PRD.md', DOCUMENT);
  await write('project/out/.env', 'API_KEY=secret\n');
  await write('project/out/image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]).toString('binary'));
  await write('outside/PRD.md', DOCUMENT);
  await write('project/bundle/workflows/prd/workflow.yaml', 'name: prd\nvalidation: "{installed_path}/checklist.md"\ndefault_output_file: "{output_folder}/PRD.md"\n');
  await write('project/bundle/workflows/prd/checklist.md', CHECKLIST);
  await write('project/bundle/workflows/brief/workflow.yaml', 'name: brief\nvalidation: "{installed_path}/checklist.md"\ndefault_output_file: "{output_folder}/brief-{{project_name}}-{date}.md"\n');
  await write('project/bundle/workflows/brief/checklist.md', CHECKLIST);
  await write('project/bundle/workflows/bare/workflow.yaml', 'name: bare\ndefault_output_file: ""\n');
  ctx = {
    bundleRoot: bundle,
    coreRoot: bundle,
    projectRoot: project,
    variables: { ...pathVariables({ bundleRoot: bundle, coreRoot: bundle, projectRoot: project }), output_folder: path.join(project, 'out') },
    readRoots: [bundle, project],
    writeRoots: [path.join(project, 'out')],
    maxReadBytes: 1024 * 1024,
  };
});

afterAll(async () => {
  await fake.close();
  await fs.rm(dir, { recursive: true, force: true });
});

beforeEach(() => fake.reset());

function verify(target: Partial<VerifyTarget>, extra: Partial<VerifyInput> = {}, server: FakeOpenAI = fake): Promise<VerifyResult> {
  const { verifyDocument } = createModelActivities({ apiKey: KEY, baseURL: server.baseURL, env: {} });
  const input: VerifyInput = { target: { source: 'workflow', ...target }, context: ctx, attempt: 1, ...extra };
  return runIn(mockEnv(), verifyDocument, input);
}

const PRD = { checklist: '{bundle-root}/checklists/prd.md', document: '{output_folder}/PRD.md' };
const verdicts = (items: { n: number; passed: boolean; note: string }[]): string => JSON.stringify({ items });

describe('verifyDocument', () => {
  it('a passing document: paths with variables, one structured request without tools, the items with their sections', async () => {
    fake.enqueue(
      text(
        verdicts([
          { n: 1, passed: true, note: 'Section Goals states it.' },
          { n: 2, passed: true, note: 'Not applicable.' },
        ]),
      ),
    );
    const result = await verify(PRD, { settings: { stream: true, toolChoice: 'required', maxOutputTokens: 100, extraBody: { response_format: { type: 'text' } } } });
    expect(result).toMatchObject({
      checklist: path.join(ctx.bundleRoot, 'checklists', 'prd.md'),
      document: path.join(ctx.projectRoot, 'out', 'PRD.md'),
      passed: 2,
      failed: 0,
      items: [
        { item: 'Goals are stated', section: 'Goals', passed: true, note: 'Section Goals states it.' },
        { item: 'Risks are listed with mitigations', section: 'Risks', passed: true, note: 'Not applicable.' },
      ],
    });
    expect(result.problem).toBeUndefined();
    expect(result.usage!.promptTokens).toBeGreaterThan(0);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(fake.requests).toHaveLength(1);
    const body = fake.requests[0]!.body!;
    expect(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'checklist_result', strict: true } });
    expect(body.tools).toBeUndefined();
    expect(body.tool_choice).toBeUndefined();
    expect(body.stream).toBeUndefined();
    expect(body.max_tokens).toBe(VERIFY_MIN_OUTPUT_TOKENS);
    const [system, user] = body.messages as ChatMessage[];
    expect(system!.content).toContain('strict reviewer');
    expect(system!.content).toContain('"passed"');
    expect(user!.content).toContain('Section: Goals\n1. Goals are stated\nSection: Risks\n2. Risks are listed with mitigations');
    expect(user!.content).toContain(`----- BEGIN DOCUMENT -----\n${DOCUMENT}\n----- END DOCUMENT -----`);
  });

  it('a failing item keeps its note; a fenced reply is read; an unanswered item fails with a warning', async () => {
    fake.enqueue(text(`Review:\n\`\`\`json\n${verdicts([{ n: 2, passed: false, note: 'No risks section.' }])}\n\`\`\``));
    const result = await verify(PRD);
    expect(result.passed).toBe(0);
    expect(result.failed).toBe(2);
    expect(result.items[1]).toEqual({ item: 'Risks are listed with mitigations', section: 'Risks', passed: false, note: 'No risks section.' });
    expect(result.items[0]!.note).toBe('the verifier gave no answer for this item');
    expect(result.warnings).toEqual(['The verifier gave no answer for 1 item (1); they count as failed']);
  });

  it('response_format refused: asked again at once without it, and that server is not sent one again', async () => {
    const refusing = await startFakeOpenAI({ responseFormat: false });
    try {
      const reply = text(
        verdicts([
          { n: 1, passed: true, note: 'ok' },
          { n: 2, passed: false, note: 'missing' },
        ]),
      );
      refusing.enqueue(reply, reply);
      const result = await verify(PRD, {}, refusing);
      expect([result.passed, result.failed]).toEqual([1, 1]);
      expect(refusing.requests.map((r) => [r.status, r.body?.response_format !== undefined])).toEqual([
        [400, true],
        [200, false],
      ]);
      // The plain request still describes the JSON it wants.
      expect((refusing.requests[1]!.body!.messages as ChatMessage[])[0]!.content).toContain('{"items": [{"n": 1');
      await verify(PRD, {}, refusing);
      expect(refusing.requests.map((r) => r.body?.response_format !== undefined)).toEqual([true, false, false]);
    } finally {
      await refusing.close();
    }
  });

  it('a reply with no JSON is a retryable ModelBadResponse', async () => {
    fake.enqueue(text('Everything looks fine to me!'));
    const failure = await rejectionOf(verify(PRD));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe(MODEL_BAD_RESPONSE);
    expect((failure as ApplicationFailure).nonRetryable).toBe(false);
    expect((failure as ApplicationFailure).message).toContain('no JSON object');
  });

  it('a missing document is a problem, with no model call', async () => {
    const result = await verify({ ...PRD, document: '{output_folder}/missing.md' });
    expect(result).toMatchObject({ checklist: path.join(ctx.bundleRoot, 'checklists', 'prd.md'), items: [], passed: 0, failed: 0, usage: null });
    expect(result.problem).toBe('the document {output_folder}/missing.md cannot be read: no such file');
    expect(result.document).toBeUndefined();
    expect(fake.requests).toHaveLength(0);
  });

  it('a document outside the roots, a secret file, a binary file, an unknown variable: problems, with no model call', async () => {
    const outside = await verify({ ...PRD, document: path.join(dir, 'outside', 'PRD.md') });
    expect(outside.problem).toMatch(/^the document .*outside\/PRD\.md cannot be read: Security violation: Access denied$/);
    const secret = await verify({ ...PRD, document: '{output_folder}/.env' });
    expect(secret.problem).toMatch(/^the document \{output_folder\}\/\.env cannot be read: .*secret/i);
    const binary = await verify({ ...PRD, document: '{output_folder}/image.png' });
    expect(binary.problem).toContain('Binary file refused');
    const unknown = await verify({ ...PRD, checklist: '{nowhere}/checklist.md' });
    expect(unknown.problem).toMatch(/^the checklist \{nowhere\}\/checklist\.md cannot be read: .*nowhere/);
    expect([outside, secret, binary, unknown].every((r) => r.items.length === 0)).toBe(true);
    expect(fake.requests).toHaveLength(0);
  });

  it('a malformed input is a non-retryable bad request naming the field', async () => {
    const failure = (await rejectionOf(verify(PRD, { attempt: 0 }))) as ApplicationFailure;
    expect([failure.type, failure.nonRetryable]).toEqual([MODEL_BAD_REQUEST, true]);
    expect(failure.message).toContain('Invalid verifyDocument input: attempt');
  });

  it('a checklist without items, or no checklist at all, is a problem', async () => {
    const empty = await verify({ ...PRD, checklist: '{bundle-root}/checklists/empty.md' });
    expect(empty.problem).toBe(`checklist ${path.join(ctx.bundleRoot, 'checklists', 'empty.md')} has no items`);
    const none = await verify({ document: PRD.document });
    expect(none.problem).toBe('no checklist to check: give the checklist, or a workflow with a validation checklist');
    expect(fake.requests).toHaveLength(0);
  });

  it('from a workflow.yaml on disk: its validation checklist and default_output_file', async () => {
    fake.enqueue(
      text(
        verdicts([
          { n: 1, passed: true, note: 'ok' },
          { n: 2, passed: true, note: 'ok' },
        ]),
      ),
    );
    const result = await verify({ workflow: '{bundle-root}/workflows/prd/workflow.yaml', name: 'prd' });
    expect(result.problem).toBeUndefined();
    expect(result.checklist).toBe(path.join(ctx.bundleRoot, 'workflows', 'prd', 'checklist.md'));
    expect(result.document).toBe(path.join(ctx.projectRoot, 'out', 'PRD.md'));
    expect(result.passed).toBe(2);
  });

  it('a workflow whose default_output_file holds a placeholder, or names none, or is missing: problems', async () => {
    const brief = await verify({ workflow: '{bundle-root}/workflows/brief/workflow.yaml' });
    expect(brief.problem).toMatch(/^the workflow's default_output_file .*\/out\/brief-\{\{project_name\}\}-\d{4}-\d\d-\d\d\.md names no single file; give the document$/);
    const bare = await verify({ workflow: '{bundle-root}/workflows/bare/workflow.yaml', document: PRD.document });
    expect(bare.problem).toMatch(/^the workflow .*bare\/workflow\.yaml names no checklist \(validation or checklist\); give the checklist$/);
    const missing = await verify({ workflow: '{bundle-root}/workflows/nope/workflow.yaml' });
    expect(missing.problem).toMatch(/^the workflow \{bundle-root\}\/workflows\/nope\/workflow\.yaml cannot be loaded: /);
    // A document given beside the workflow is used; the checklist still comes from the workflow.
    fake.enqueue(
      text(
        verdicts([
          { n: 1, passed: false, note: 'no' },
          { n: 2, passed: true, note: 'ok' },
        ]),
      ),
    );
    const given = await verify({ workflow: '{bundle-root}/workflows/brief/workflow.yaml', document: '{output_folder}/PRD.md' });
    expect([given.passed, given.failed]).toEqual([1, 1]);
    expect(fake.requests).toHaveLength(1);
  });
});
