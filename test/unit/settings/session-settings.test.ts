/**
 * The settings table (common/settings/session-settings.ts) and what is derived from it: the
 * inferred types, the kinds' checks and their words, the table's own consistency (defaults that
 * pass their checks, unique flags and variables), the command line's flags and parsers, and the
 * worker's check of the model settings agreeing with the workflow's.
 */
import type { Command } from 'commander';
import { checkInput, inputSchema } from '../../../activities/model/input-check';
import { buildProgram } from '../../../cli/cli';
import { envParser, FLAGGED_SETTINGS, flagParser, settingOfOption } from '../../../cli/setting-flags';
import { settingsFromOptions } from '../../../cli/commands/settings-from-options';
import { sessionInputProblem, settingProblem } from '../../../common/session-input-schema';
import type { ModelSettings } from '../../../common/model-call';
import type { SessionInput } from '../../../common/session-types';
import { boolean, nonEmptyString, oneOf, positiveWholeNumber, problemText, stringList } from '../../../common/settings/kinds';
import { eachSetting, group, type GroupValue, setting } from '../../../common/settings/setting';
import { REASONING_EFFORTS, SESSION_SETTINGS, type TOOL_CHOICES } from '../../../common/settings/session-settings';

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

describe('the typed builder', () => {
  const TABLE = {
    name: setting({ kind: nonEmptyString, required: true, doc: 'a name' }),
    count: setting({ kind: positiveWholeNumber, default: 1, doc: 'a count' }),
    level: setting({ kind: oneOf(['low', 'high']), doc: 'a level' }),
    nested: setting({ kind: group({ on: setting({ kind: boolean, doc: 'on' }), tags: setting({ kind: stringList, required: true, doc: 'tags' }) }, { strict: true }), doc: 'nested' }),
  };

  test('setting: a group infers its required and optional fields, typed by their kinds', () => {
    const exact: Equals<GroupValue<typeof TABLE>, { name: string; count?: number; level?: 'low' | 'high'; nested?: { on?: boolean; tags: string[] } }> = true;
    expect(exact).toBe(true);
  });

  test('setting: a group checks its settings in order, naming the field, and refuses unknown ones when strict', () => {
    const kind = group(TABLE, { strict: false });
    expect(kind.check({ name: 'n' })).toBeUndefined();
    expect(problemText('', kind.check({})!)).toBe('name: expected a string, got undefined');
    expect(problemText('', kind.check({ name: 'n', level: 'mid' })!)).toBe('level: expected one of low, high, got "mid"');
    expect(problemText('', kind.check({ name: 'n', nested: { tags: ['a', ''] } })!)).toBe('nested.tags.1: must not be empty');
    expect(problemText('', kind.check({ name: 'n', nested: { tags: [], of: 1 } })!)).toBe('nested.of: unknown setting (known: on, tags)');
    expect(kind.check({ name: 'n', other: 1 })).toBeUndefined();
  });
});

describe('the session settings table', () => {
  const settings = [...eachSetting(SESSION_SETTINGS)].map(({ path, setting: entry }) => ({ path: path.join('.'), setting: entry }));

  test('SessionInput: its fields are those of the table, typed by it', () => {
    const model: Equals<ModelSettings['reasoningEffort'], (typeof REASONING_EFFORTS)[number] | undefined> = true;
    const choice: Equals<NonNullable<SessionInput['modelSettings']>['toolChoice'], (typeof TOOL_CHOICES)[number] | undefined> = true;
    const required: Equals<Pick<SessionInput, 'bundlePath' | 'agentId'>, { bundlePath: string; agentId: string }> = true;
    expect([model, choice, required]).toEqual([true, true, true]);
    expect(Object.keys(SESSION_SETTINGS)).toEqual(expect.arrayContaining(['bundlePath', 'agentId', 'modelSettings', 'delegation', 'continued']));
  });

  test.each(settings.filter(({ setting: entry }) => entry.default !== undefined).map(({ path, setting: entry }) => [path, entry.default]))('%s: its default %j passes its own check', (path, value) => {
    expect(settingProblem(path as string, value)).toBeUndefined();
  });

  test('every setting has doc text; no flag, --no- form or environment variable is declared twice', () => {
    for (const { path, setting: entry } of settings) expect([path, entry.doc.length > 10]).toEqual([path, true]);
    const names = FLAGGED_SETTINGS.flatMap(({ setting: entry }) => [entry.flag.flags.split(' ')[0], ...(entry.flag.negation ? [entry.flag.flags.replace(/^--/, '--no-')] : [])]);
    expect(new Set(names).size).toBe(names.length);
    const env = FLAGGED_SETTINGS.flatMap(({ setting: entry }) => (entry.flag.env ? [entry.flag.env.name] : []));
    expect(new Set(env).size).toBe(env.length);
    for (const name of env) expect(name).toMatch(/^LOOPWRIGHT_[A-Z_]+$/);
  });

  test('every flag of the table is on a command; every flag group on run, chat, batch and schedule create', () => {
    const program = buildProgram({ out: { log: () => undefined, error: () => undefined } });
    const onCommands = new Map<string, Set<string>>();
    const walk = (command: Command, name: string): void => {
      for (const option of command.options) {
        const path = settingOfOption(option);
        if (path !== undefined) onCommands.set(path, (onCommands.get(path) ?? new Set()).add(name));
      }
      for (const sub of command.commands) walk(sub, `${name} ${sub.name()}`.trim());
    };
    walk(program, '');
    for (const { path, setting: entry } of FLAGGED_SETTINGS) {
      expect([path, onCommands.has(path)]).toEqual([path, true]);
      // `eval` takes the model flags for its candidate; its sessions keep each recording's tools.
      if (entry.flag.group === 'model') expect([path, [...onCommands.get(path)!].sort()]).toEqual([path, ['batch', 'chat', 'eval', 'run', 'schedule create']]);
      if (entry.flag.group === 'tools') expect([path, [...onCommands.get(path)!].sort()]).toEqual([path, ['batch', 'chat', 'run', 'schedule create']]);
    }
  });

  test('a flag of a kind of fixed values parses those values and names them when refused', () => {
    const effort = FLAGGED_SETTINGS.find(({ path }) => path === 'modelSettings.reasoningEffort')!.setting;
    for (const value of REASONING_EFFORTS) expect(flagParser(effort)!(value, undefined)).toBe(value);
    expect(() => flagParser(effort)!('max', undefined)).toThrow('Expected minimal, low, medium or high.');
    const choice = FLAGGED_SETTINGS.find(({ path }) => path === 'modelSettings.toolChoice')!.setting;
    expect(() => envParser(choice)!('always')).toThrow('Expected auto, required or none.');
    const stream = FLAGGED_SETTINGS.find(({ path }) => path === 'modelSettings.stream')!.setting;
    expect(envParser(stream)!('off')).toBe(false);
  });

  test('settingsFromOptions: flags set their settings at their paths; defaults and empty lists set nothing', () => {
    expect(settingsFromOptions({ temperature: 0.5, summarize: true, verify: false, fallbackModel: [] }, 'model', { env: {} })).toEqual({
      modelSettings: { temperature: 0.5 },
      verify: { enabled: false },
    });
    expect(settingsFromOptions({ delegation: false, delegateTo: ['pm'], projectMcp: true }, 'tools', { env: { LOOPWRIGHT_TOOLS: 'read_file' } })).toEqual({
      tools: ['read_file'],
      delegation: { enabled: false, agents: ['pm'] },
    });
  });

  test('settingProblem: names the setting at its path, as the session input check does', () => {
    expect(settingProblem('modelSettings.temperature', 3)).toBe('modelSettings.temperature: expected a number from 0 to 2, got 3');
    expect(sessionInputProblem({ bundlePath: '/b', agentId: 'a', modelSettings: { temperature: 3 } })).toBe('modelSettings.temperature: expected a number from 0 to 2, got 3');
    expect(() => settingProblem('modelSettings.nope', 1)).toThrow('no session setting modelSettings.nope');
  });
});

describe('the worker check of the model settings', () => {
  const base = { messages: [{ role: 'user', content: 'hi' }], tools: [] };
  const workerProblem = (settings: unknown): string | undefined => {
    try {
      checkInput(inputSchema, { ...base, settings });
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  };

  test.each([
    [{ maxOutputTokens: 0 }, 'modelSettings.maxOutputTokens: expected a whole number >= 1, got 0'],
    [{ reasoningEffort: 'max' }, 'modelSettings.reasoningEffort: expected one of minimal, low, medium, high, got "max"'],
    [{ toolChoice: 'always' }, 'modelSettings.toolChoice: expected one of auto, required, none, got "always"'],
    [{ tokenParameter: 'max' }, 'modelSettings.tokenParameter: expected one of max_tokens, max_completion_tokens, got "max"'],
    [{ extraBody: [1] }, 'modelSettings.extraBody: expected an object, got a list'],
    [{ temperature: 0.2, stream: true }, undefined],
  ])('model settings %j: the worker refuses what the workflow refuses, in the same words', (settings, workflow) => {
    expect(sessionInputProblem({ bundlePath: '/b', agentId: 'a', modelSettings: settings })).toBe(workflow);
    expect(workerProblem(settings)).toBe(workflow === undefined ? undefined : `Invalid model call input: ${workflow.replace(/^modelSettings/, 'settings')}`);
  });

  test('a field the workflow of a newer version may send passes the worker', () => {
    expect(workerProblem({ temperature: 1, newerSetting: true })).toBeUndefined();
  });
});
