/**
 * The model, context and budget options of `run` and `chat`, through the whole command line down to
 * the StartSessionOptions the command hands the client: each option's good and bad values (a bad one
 * named with its value, exit 2), the LOOPWRIGHT_* environment defaults, options winning over them,
 * and a bad variable named. No server: the Temporal connection is replaced by one whose `start`
 * records its options and stops the command there.
 */
import { modelSessionSettings, SESSION_SETTINGS_ENV_NAMES } from '../../../cli/commands/session-settings';
import { EXIT } from '../../../cli/exit-codes';
import { cli } from './cli-capture';
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

const ENV_NAMES = [
  'LOOPWRIGHT_MAX_OUTPUT_TOKENS',
  'LOOPWRIGHT_TEMPERATURE',
  'LOOPWRIGHT_REASONING_EFFORT',
  'LOOPWRIGHT_CONTEXT_WINDOW',
  'LOOPWRIGHT_FALLBACK_MODELS',
  'LOOPWRIGHT_TURN_TOKEN_BUDGET',
  'LOOPWRIGHT_SESSION_TOKEN_BUDGET',
  'LOOPWRIGHT_STREAM',
  'LOOPWRIGHT_VERIFY',
  'LOOPWRIGHT_VERIFY_ATTEMPTS',
];

const saved: Record<string, string | undefined> = {};
beforeEach(() => {
  started.length = 0;
  for (const name of [...ENV_NAMES, ...Object.keys(process.env).filter((n) => n.startsWith('OTEL_'))]) {
    saved[name] = process.env[name];
    delete process.env[name];
  }
});
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
    delete saved[name];
  }
});

/** The options `run` starts its session with (the fake connection stops the command right after). */
async function runStarts(...options: string[]): Promise<StartSessionOptions> {
  const { code, stderr } = await cli(['run', 'bundles/requirements-facilitator', 'facilitator', 'hello', '--no-check', ...options]);
  expect(stderr).toContain(STOP);
  expect(code).toBe(EXIT.FAILED);
  expect(started).toHaveLength(1);
  return started[0]!;
}

async function chatStarts(...options: string[]): Promise<StartSessionOptions> {
  const { code, stderr } = await cli(['chat', 'bundles/requirements-facilitator', 'facilitator', ...options]);
  expect(stderr).toContain(STOP);
  expect(code).toBe(EXIT.FAILED);
  expect(started).toHaveLength(1);
  return started[0]!;
}

const NEW_FIELDS = ['modelSettings', 'fallbackModels', 'maxContinuations', 'context', 'budget'] as const;

test('run: without the new options or variables, the session input has none of their fields', async () => {
  const options = await runStarts();
  expect(options).toMatchObject({ agentId: 'facilitator', bundlePath: 'bundles/requirements-facilitator' });
  for (const field of NEW_FIELDS) expect(options).not.toHaveProperty(field);
});

test('run: every option reaches the session input, in its field', async () => {
  const options = await runStarts(
    '--max-output-tokens',
    '2048',
    '--temperature',
    '0.2',
    '--reasoning-effort',
    'low',
    '--tool-choice',
    'required',
    '--extra-body',
    '{"top_k": 40, "min_p": 0.05}',
    '--send-reasoning',
    '--fallback-model',
    'gpt-4o',
    '--fallback-model',
    'qwen2.5:7b',
    '--max-continuations',
    '0',
    '--context-window',
    '32768',
    '--compact-at',
    '0.7',
    '--keep-recent',
    '2',
    '--no-summarize',
    '--turn-token-budget',
    '20000',
    '--session-token-budget',
    '500000',
    '--cost-budget',
    '2.5',
    '--price',
    'gpt-4o-mini=0.15,0.6',
    '--price',
    '*=1,2',
  );
  expect(options.modelSettings).toEqual({ maxOutputTokens: 2048, temperature: 0.2, reasoningEffort: 'low', toolChoice: 'required', extraBody: { top_k: 40, min_p: 0.05 }, sendReasoning: true });
  expect(options.fallbackModels).toEqual(['gpt-4o', 'qwen2.5:7b']);
  expect(options.maxContinuations).toBe(0);
  expect(options.context).toEqual({ window: 32768, compactAt: 0.7, keepRecent: 2, summarize: false });
  expect(options.budget).toEqual({ turnTokens: 20000, sessionTokens: 500000, sessionCost: 2.5, prices: { 'gpt-4o-mini': { input: 0.15, output: 0.6 }, '*': { input: 1, output: 2 } } });
});

test('run: one option of a group sets that group only, with that field only', async () => {
  const options = await runStarts('--temperature', '0', '--keep-recent', '1');
  expect(options.modelSettings).toEqual({ temperature: 0 });
  expect(options.context).toEqual({ keepRecent: 1 });
  expect(options).not.toHaveProperty('budget');
  expect(options).not.toHaveProperty('fallbackModels');
  expect(options).not.toHaveProperty('maxContinuations');
});

test('run: the LOOPWRIGHT_* variables are the defaults of their options', async () => {
  process.env.LOOPWRIGHT_MAX_OUTPUT_TOKENS = '4096';
  process.env.LOOPWRIGHT_TEMPERATURE = '0.7';
  process.env.LOOPWRIGHT_REASONING_EFFORT = 'high';
  process.env.LOOPWRIGHT_CONTEXT_WINDOW = '8192';
  process.env.LOOPWRIGHT_FALLBACK_MODELS = 'gpt-4o, llama3.1:8b,';
  process.env.LOOPWRIGHT_TURN_TOKEN_BUDGET = '1000';
  process.env.LOOPWRIGHT_SESSION_TOKEN_BUDGET = '90000';
  const options = await runStarts();
  expect(options.modelSettings).toEqual({ maxOutputTokens: 4096, temperature: 0.7, reasoningEffort: 'high' });
  expect(options.context).toEqual({ window: 8192 });
  expect(options.fallbackModels).toEqual(['gpt-4o', 'llama3.1:8b']);
  expect(options.budget).toEqual({ turnTokens: 1000, sessionTokens: 90000 });
});

test('run: an option given wins over its variable; the other variables still apply', async () => {
  process.env.LOOPWRIGHT_MAX_OUTPUT_TOKENS = '4096';
  process.env.LOOPWRIGHT_TEMPERATURE = '0.7';
  process.env.LOOPWRIGHT_FALLBACK_MODELS = 'from-env';
  process.env.LOOPWRIGHT_SESSION_TOKEN_BUDGET = '90000';
  const options = await runStarts('--temperature', '1.5', '--fallback-model', 'from-option', '--session-token-budget', '100');
  expect(options.modelSettings).toEqual({ maxOutputTokens: 4096, temperature: 1.5 });
  expect(options.fallbackModels).toEqual(['from-option']);
  expect(options.budget).toEqual({ sessionTokens: 100 });
});

test('run: an empty variable counts as unset', async () => {
  process.env.LOOPWRIGHT_TEMPERATURE = '';
  process.env.LOOPWRIGHT_CONTEXT_WINDOW = '  ';
  const options = await runStarts();
  expect(options).not.toHaveProperty('modelSettings');
  expect(options).not.toHaveProperty('context');
});

test.each([
  ['--max-output-tokens', '0', /Expected a positive whole number/],
  ['--max-output-tokens', '1.5', /Expected a positive whole number/],
  ['--temperature', '2.5', /Expected a number from 0 to 2/],
  ['--temperature', '-0.1', /Expected a number from 0 to 2/],
  ['--temperature', 'hot', /Expected a number from 0 to 2/],
  ['--reasoning-effort', 'extreme', /Expected minimal, low, medium or high/],
  ['--tool-choice', 'always', /Expected auto, required or none/],
  ['--extra-body', '[1,2]', /Expected a JSON object.*not a list/],
  ['--extra-body', '{top_k: 40}', /Expected a JSON object/],
  ['--extra-body', '42', /Expected a JSON object/],
  ['--fallback-model', ' , ', /Expected a comma-separated list of models/],
  ['--max-continuations', '-1', /Expected a whole number >= 0/],
  ['--context-window', '0', /Expected a positive whole number/],
  ['--compact-at', '1', /Expected a number between 0 and 1/],
  ['--compact-at', '0', /Expected a number between 0 and 1/],
  ['--compact-at', '80%', /Expected a number between 0 and 1/],
  ['--keep-recent', 'three', /Expected a positive whole number/],
  ['--keep-recent', '0', /Expected a positive whole number/],
  ['--turn-token-budget', '0', /Expected a positive whole number/],
  ['--session-token-budget', '1e', /Expected a positive whole number/],
  ['--cost-budget', '0', /Expected a number > 0/],
  ['--cost-budget', 'cheap', /Expected a number > 0/],
  ['--price', 'gpt-4o=2.5', /Expected model=input,output/],
  ['--price', '=1,2', /Expected model=input,output/],
  ['--price', 'gpt-4o=a,b', /Expected model=input,output/],
  ['--price', 'gpt-4o=-1,2', /Expected model=input,output/],
])('run %s %s: the option and the value are named; exit 2, nothing started', async (option, value, expected) => {
  const { code, stderr } = await cli(['run', 'b', 'a', 'hi', '--no-check', option, value]);
  expect(code).toBe(EXIT.USAGE);
  const first = stderr.split('\n')[0]!;
  expect(first).toMatch(new RegExp(`^error: option '${option.replace(/[-]/g, '\\-')} <[^>]+>' argument '${value.replace(/[[\]{}*.+]/g, '\\$&')}' is invalid\\. `));
  expect(first).toMatch(expected);
  expect(started).toEqual([]);
});

test.each([
  ['LOOPWRIGHT_MAX_OUTPUT_TOKENS', 'lots', /Expected a positive whole number/],
  ['LOOPWRIGHT_TEMPERATURE', '3', /Expected a number from 0 to 2/],
  ['LOOPWRIGHT_REASONING_EFFORT', 'max', /Expected minimal, low, medium or high/],
  ['LOOPWRIGHT_CONTEXT_WINDOW', '-5', /Expected a positive whole number/],
  ['LOOPWRIGHT_FALLBACK_MODELS', ',', /Expected a comma-separated list of models/],
  ['LOOPWRIGHT_TURN_TOKEN_BUDGET', '0', /Expected a positive whole number/],
  ['LOOPWRIGHT_SESSION_TOKEN_BUDGET', '1.5', /Expected a positive whole number/],
])('run with %s=%s: the variable and its value are named; exit 2, nothing started', async (name, value, expected) => {
  process.env[name] = value;
  const { code, stderr } = await cli(['run', 'b', 'a', 'hi', '--no-check']);
  expect(code).toBe(EXIT.USAGE);
  const first = stderr.split('\n')[0]!;
  expect(first).toContain(`error: environment variable ${name} value '${value}' is invalid.`);
  expect(first).toMatch(expected);
  expect(stderr).toContain('Usage: loopwright run ');
  expect(started).toEqual([]);
});

test('run --json: a bad variable is a UsageError object naming it', async () => {
  process.env.LOOPWRIGHT_TEMPERATURE = 'warm';
  const { code, stdout } = await cli(['run', 'b', 'a', 'hi', '--no-check', '--json']);
  expect(code).toBe(EXIT.USAGE);
  expect(JSON.parse(stdout)).toEqual({ error: "environment variable LOOPWRIGHT_TEMPERATURE value 'warm' is invalid. Expected a number from 0 to 2.", type: 'UsageError' });
});

test('run: a bad variable is not read when its option is given', async () => {
  process.env.LOOPWRIGHT_TEMPERATURE = 'warm';
  const options = await runStarts('--temperature', '0.3');
  expect(options.modelSettings).toEqual({ temperature: 0.3 });
});

test('chat: the same options and variables reach the session it starts', async () => {
  process.env.LOOPWRIGHT_CONTEXT_WINDOW = '16384';
  process.env.LOOPWRIGHT_TURN_TOKEN_BUDGET = '5000';
  const options = await chatStarts('--max-output-tokens', '512', '--compact-at', '0.5', '--price', 'local=0,0', '--cost-budget', '1', '--max-continuations', '3');
  expect(options.approval).toEqual({ policy: 'writes' });
  expect(options.modelSettings).toEqual({ maxOutputTokens: 512 });
  expect(options.context).toEqual({ window: 16384, compactAt: 0.5 });
  expect(options.budget).toEqual({ turnTokens: 5000, sessionCost: 1, prices: { local: { input: 0, output: 0 } } });
  expect(options.maxContinuations).toBe(3);
});

test("chat: a bad value is named like run's; a bad variable too", async () => {
  const bad = await cli(['chat', 'b', 'a', '--tool-choice', 'maybe']);
  expect(bad.code).toBe(EXIT.USAGE);
  expect(bad.stderr).toMatch(/^error: option '--tool-choice <choice>' argument 'maybe' is invalid\. Expected auto, required or none\./);
  process.env.LOOPWRIGHT_REASONING_EFFORT = 'max';
  const env = await cli(['chat', 'b', 'a']);
  expect(env.code).toBe(EXIT.USAGE);
  expect(env.stderr).toMatch(/^error: environment variable LOOPWRIGHT_REASONING_EFFORT value 'max' is invalid\./);
  expect(started).toEqual([]);
});

test('run and chat --help list the options and every variable that gives them a default', async () => {
  expect([...SESSION_SETTINGS_ENV_NAMES].sort()).toEqual([...ENV_NAMES].sort());
  for (const command of ['run', 'chat']) {
    const { stdout } = await cli([command, '--help']);
    for (const flag of [
      '--max-output-tokens <n>',
      '--temperature <x>',
      '--reasoning-effort <level>',
      '--tool-choice <choice>',
      '--extra-body <json>',
      '--send-reasoning',
      '--fallback-model <model>',
      '--max-continuations <n>',
      '--context-window <n>',
      '--compact-at <fraction>',
      '--keep-recent <n>',
      '--no-summarize',
      '--turn-token-budget <n>',
      '--session-token-budget <n>',
      '--cost-budget <x>',
      '--price <model=input,output>',
      '--stream',
      '--no-stream',
      '--verify',
      '--no-verify',
      '--verify-attempts <n>',
    ]) {
      expect(stdout).toContain(flag);
    }
    const environment = stdout.slice(stdout.indexOf('\nEnvironment:\n'));
    for (const name of ENV_NAMES) expect(environment).toMatch(new RegExp(`\\n  ${name}\\b`));
  }
});

test('run: a repeated --price for the same model keeps the last one', async () => {
  const options = await runStarts('--price', 'm=1,2', '--price', 'other=0.5,0.5', '--price', 'm=3,4');
  expect(options.budget).toEqual({ prices: { m: { input: 3, output: 4 }, other: { input: 0.5, output: 0.5 } } });
});

test('modelSessionSettings: the environment is read from the argument; false flags set nothing', () => {
  expect(modelSessionSettings({ costBudget: 3, price: { '*': { input: 1, output: 1 } } }, { LOOPWRIGHT_TURN_TOKEN_BUDGET: '7' })).toEqual({
    budget: { turnTokens: 7, sessionCost: 3, prices: { '*': { input: 1, output: 1 } } },
  });
  // A cost budget cannot be kept without prices: refused before anything starts.
  expect(() => modelSessionSettings({ costBudget: 3 }, {})).toThrow(/--cost-budget needs the price/);
  expect(modelSessionSettings({}, { LOOPWRIGHT_FALLBACK_MODELS: 'x,y' })).toEqual({ fallbackModels: ['x', 'y'] });
  expect(modelSessionSettings({ summarize: true, sendReasoning: false }, {})).toEqual({});
});

test('run: --secret-files lines (repeatable) reach the session input as secretFiles, in order', async () => {
  expect((await runStarts('--secret-files', '*.secret', '--secret-files', '!.npmrc')).secretFiles).toEqual(['*.secret', '!.npmrc']);
});

test('chat: --secret-files reaches the session input too', async () => {
  expect((await chatStarts('--secret-files', '/private/')).secretFiles).toEqual(['/private/']);
});

test('streamed replies: --stream and --no-stream, LOOPWRIGHT_STREAM, and the default (on a terminal only)', async () => {
  expect((await runStarts('--stream')).modelSettings).toEqual({ stream: true });
  started.length = 0;
  expect((await runStarts('--no-stream')).modelSettings).toEqual({ stream: false });
  started.length = 0;
  // Tests run without a terminal: nothing is set unless asked.
  expect((await runStarts()).modelSettings).toBeUndefined();
  expect(modelSessionSettings({}, {}, { terminal: true })).toEqual({ modelSettings: { stream: true } });
  expect(modelSessionSettings({ stream: false }, {}, { terminal: true })).toEqual({ modelSettings: { stream: false } });
  expect(modelSessionSettings({}, { LOOPWRIGHT_STREAM: '0' }, { terminal: true })).toEqual({ modelSettings: { stream: false } });
  expect(modelSessionSettings({}, { LOOPWRIGHT_STREAM: 'yes' })).toEqual({ modelSettings: { stream: true } });
  expect(() => modelSessionSettings({}, { LOOPWRIGHT_STREAM: 'maybe' })).toThrow(/LOOPWRIGHT_STREAM value 'maybe' is invalid/);
});
