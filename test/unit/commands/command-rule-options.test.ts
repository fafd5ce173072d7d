/**
 * The command-rule options through the whole command line: `--allow-command` and `--deny-command`
 * on the commands that start sessions (repeatable, one rule each, commas kept) reach the session
 * input as `commands.allow` and `commands.deny`; a rule that is not one simple command is a usage
 * mistake naming it, and nothing starts; `worker` takes the same options. How chat and `status`
 * word a command waiting for approval. No server: the Temporal connection is replaced by one whose
 * `start` records its options and stops.
 */
import { EXIT } from '../../../cli/exit-codes';
import { cli } from './cli-capture';
import { approvalLines } from '../../../cli/commands/approval-text';
import type { StartSessionOptions } from '../../../client/session-client';

const started: StartSessionOptions[] = [];
const STOP = 'recorded the session options; no session started';

jest.mock('../../../cli/temporal-session', () => ({
  openTemporal: jest.fn(async () => ({
    namespace: 'default',
    taskQueue: 'loopwright',
    loopwright: {
      start: async (options: StartSessionOptions) => {
        started.push(options);
        throw new Error(STOP);
      },
    },
    close: async () => undefined,
  })),
}));

beforeEach(() => {
  started.length = 0;
});

async function starts(command: 'run' | 'chat', ...options: string[]): Promise<StartSessionOptions> {
  const args = command === 'run' ? ['run', 'bundles/requirements-facilitator', 'facilitator', 'hello', '--no-check'] : ['chat', 'bundles/requirements-facilitator', 'facilitator'];
  const { code, stderr } = await cli([...args, ...options]);
  expect(stderr).toContain(STOP);
  expect(code).toBe(EXIT.FAILED);
  expect(started).toHaveLength(1);
  return started[0]!;
}

test('run: --allow-command and --deny-command (repeatable, one rule each) reach commands.allow and commands.deny', async () => {
  const options = await starts(
    'run',
    '--commands',
    '--allow-command',
    'git status',
    '--allow-command',
    '  uv run {project-root}/_bmad/scripts/*  ',
    '--allow-command',
    "jq -r '.a, .b'",
    '--deny-command',
    'git push',
  );
  expect(options.commands).toEqual({ enabled: true, allow: ['git status', 'uv run {project-root}/_bmad/scripts/*', "jq -r '.a, .b'"], deny: ['git push'] });
});

test('chat: the rules reach the session input too; without them the input has none', async () => {
  expect((await starts('chat', '--deny-command', 'rm')).commands).toEqual({ deny: ['rm'] });
  started.length = 0;
  expect((await starts('chat')).commands).toBeUndefined();
});

test('a rule that is not one simple command is a usage mistake naming it; nothing starts', async () => {
  for (const bad of ['git status; rm -rf x', 'echo $(id)', '  ']) {
    const result = await cli(['run', 'b', 'a', 'hi', '--no-check', '--allow-command', bad]);
    expect(result.code).toBe(EXIT.USAGE);
    expect(result.stderr).toMatch(/--allow-command <pattern>' argument .* is invalid\. A command rule/);
  }
  const deny = await cli(['chat', 'b', 'a', '--deny-command', 'a | b']);
  expect(deny.code).toBe(EXIT.USAGE);
  expect(started).toEqual([]);
});

test('run, chat and worker --help list the options', async () => {
  for (const command of ['run', 'chat', 'worker']) {
    const { stdout } = await cli([command, '--help']);
    expect(stdout).toContain('--allow-command <pattern>');
    expect(stdout).toContain('--deny-command <pattern>');
  }
  const worker = await cli(['worker', '--deny-command', 'a && b']);
  expect(worker.code).toBe(EXIT.USAGE);
  expect(worker.stderr).toContain('A command rule is one simple command');
});

test('approvalLines: a command shows its exact line, folder, sandbox and requests; another call its target and preview', () => {
  expect(
    approvalLines({
      callId: 'call_1',
      tool: 'run_command',
      path: 'uv run /p/_bmad/scripts/x.py',
      preview: '{"command":"uv run {project-root}/_bmad/scripts/x.py"}',
      since: 0,
      command: {
        line: 'uv run /p/_bmad/scripts/x.py',
        cwd: '/p',
        sandbox: 'bubblewrap: project read-only, writable /p/docs; network off; ends after 120 s',
        requestedBy: [`"uv" (skill bmad-init's allowed-tools)`],
      },
    }),
  ).toEqual({
    head: 'run_command uv run /p/_bmad/scripts/x.py',
    details: ['in /p · bubblewrap: project read-only, writable /p/docs; network off; ends after 120 s', `requested by "uv" (skill bmad-init's allowed-tools) (a request, not a grant)`],
  });
  expect(approvalLines({ callId: 'c', tool: 'save_output', path: '/p/docs/a.md', preview: '12 bytes: hello', since: 0 })).toEqual({ head: 'save_output /p/docs/a.md — 12 bytes: hello', details: [] });
});
