/**
 * Writes docs/reference/configuration.md from the settings table (common/settings/session-settings.ts):
 * every session setting with its type, default, command-line flag (and the commands that take it,
 * read from the command line itself) and environment variable; then every other environment
 * variable of the worker, the command line and the servers (scripts/docs/environment.ts).
 *
 *   npx ts-node --transpile-only scripts/gen-settings-doc.ts           # (re)write the file
 *   npx ts-node --transpile-only scripts/gen-settings-doc.ts --check   # exit 1 when it is out of date
 *
 * test/unit/settings/settings-doc.test.ts fails while the committed file differs from what this writes
 * (scripts/gen-docs.ts writes it with the other generated pages).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command, Option } from 'commander';
import { eachSetting, type AnySetting, isGroup } from '../common/settings/setting';
import { SESSION_SETTINGS } from '../common/settings/session-settings';
import { buildProgram } from '../cli/cli';
import { settingOfOption } from '../cli/setting-flags';
import { ENVIRONMENT } from './docs/environment';

/** The file this script writes. */
export const SETTINGS_DOC_PATH = path.join(__dirname, '..', 'docs', 'reference', 'configuration.md');

/** The command that writes the file, as the docs and the test name it. */
export const SETTINGS_DOC_COMMAND = 'npx ts-node --transpile-only scripts/gen-settings-doc.ts';

/** The whole of docs/configuration.md. */
export function renderSettingsDoc(): string {
  const flags = flagsBySetting();
  const rows = [...eachSetting(SESSION_SETTINGS)].map(({ path: at, setting }) => ({ path: at.join('.'), setting }));
  const internal = new Set(rows.filter(({ setting }) => setting.internal).map(({ path: at }) => at));
  const isInternal = (at: string): boolean => [...internal].some((root) => at === root || at.startsWith(`${root}.`));
  const lines = [
    '# Configuration',
    '',
    `<!-- Generated from common/settings/session-settings.ts by \`${SETTINGS_DOC_COMMAND}\`; do not edit by hand. -->`,
    '',
    'Every setting of a session, then every environment variable of the worker, the command line and the servers.',
    '',
    '## Session settings {#session-settings}',
    '',
    "A session's settings are the fields of its input, `SessionInput`: what `LoopwrightClient.start` (and batches and",
    'schedules) take. The commands that start sessions set many of them with flags; some flags take their default from',
    'an environment variable (a flag given wins; an empty variable counts as unset). A setting left out gets its default.',
    'A setting inside a group is written with its group: `modelSettings.temperature` is `{ modelSettings: { temperature } }`.',
    '',
    '| Setting | Type | Default | Flag | Environment | What it does |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows
      .filter(({ path: at }) => !isInternal(at))
      .map(({ path: at, setting }) => row([code(at), typeText(setting), defaultText(setting), flags.get(at) ?? '', setting.flag?.env ? code(setting.flag.env.name) : '', setting.doc])),
    '',
    '## Set by Loopwright itself',
    '',
    'A client or the session sets these; they are checked like the others.',
    '',
    '| Setting | Type | What it is |',
    '| --- | --- | --- |',
    ...rows.filter(({ path: at }) => isInternal(at)).map(({ path: at, setting }) => row([code(at), typeText(setting), setting.doc])),
    '',
    ...environmentSection(rows),
  ];
  return lines.join('\n');
}

/** Every environment variable: those that default a session setting's flag (from the table), then the others. */
function environmentSection(rows: readonly { path: string; setting: AnySetting }[]): string[] {
  const settingVariables = rows.filter(({ setting }) => setting.flag?.env).map(({ path: at, setting }) => ({ name: setting.flag!.env!.name, at }));
  return [
    '## Environment variables {#environment-variables}',
    '',
    'Every variable Loopwright reads. Set the model and worker variables where the worker runs: `loopwright run` and',
    '`chat` start a worker in their own process when none polls the task queue, so for one-off use your shell is enough.',
    '',
    '| Variable | Default | What it does |',
    '| --- | --- | --- |',
    ...Object.entries(ENVIRONMENT).flatMap(([group, variables]) => [row([`**${group}**`, '', '']), ...variables.map((variable) => row([code(variable.name), variable.default, variable.meaning]))]),
    row(['**Defaults of session settings**', '', '']),
    ...settingVariables.map(({ name, at }) =>
      row([code(name), "the setting's", `the default of the flag of ${code(at)}, on the commands that take it (a flag given wins): see [Session settings](#session-settings)`]),
    ),
    '',
  ];
}

/** For each setting with a flag, where it is: `` `--output <dir>` (run, chat, schedule create); `--output-root <dir>` (batch) ``. */
function flagsBySetting(): Map<string, string> {
  const program = buildProgram({ out: { log: () => undefined, error: () => undefined } });
  const found = new Map<string, Map<string, string[]>>();
  for (const command of commands(program)) {
    for (const option of command.options as readonly Option[]) {
      const at = settingOfOption(option);
      if (at === undefined) continue;
      const byFlags = found.get(at) ?? new Map<string, string[]>();
      byFlags.set(option.flags, [...(byFlags.get(option.flags) ?? []), commandPath(command)]);
      found.set(at, byFlags);
    }
  }
  return new Map(
    [...found].map(([at, byFlags]) => {
      const groups = new Map<string, string[]>();
      // A flag and its --no- form on the same commands are listed together.
      for (const [flags, names] of byFlags) groups.set(names.join(', '), [...(groups.get(names.join(', ')) ?? []), code(flags)]);
      return [at, [...groups].map(([names, list]) => `${list.join(', ')} (${names})`).join('; ')];
    }),
  );
}

function* commands(command: Command): Generator<Command> {
  for (const sub of command.commands) {
    yield sub;
    yield* commands(sub);
  }
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current?.parent; current = current.parent) names.unshift(current.name());
  return names.join(' ');
}

function typeText(setting: AnySetting): string {
  const { type, values } = setting.kind;
  if (isGroup(setting.kind)) return 'object: the settings below';
  if (values === undefined) return type;
  // `one of a, b, c` with each value as code; the rest of the type (`, or a list of strings`) as it is.
  const plain = `one of ${values.join(', ')}`;
  return `one of ${values.map(code).join(', ')}${type.startsWith(plain) ? type.slice(plain.length) : ''}`;
}

function defaultText(setting: AnySetting): string {
  const parts = [setting.default !== undefined ? code(String(setting.default)) : undefined, setting.defaultText].filter((part) => part !== undefined);
  return parts.join(': ');
}

function code(text: string): string {
  return `\`${text}\``;
}

function row(cells: readonly string[]): string {
  return `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
}

if (require.main === module) {
  const text = renderSettingsDoc();
  const current = fs.existsSync(SETTINGS_DOC_PATH) ? fs.readFileSync(SETTINGS_DOC_PATH, 'utf8') : undefined;
  if (process.argv.includes('--check')) {
    if (current !== text) {
      process.stderr.write(`${path.relative(process.cwd(), SETTINGS_DOC_PATH)} is out of date with the settings table; run ${SETTINGS_DOC_COMMAND}\n`);
      process.exit(1);
    }
  } else if (current !== text) {
    fs.mkdirSync(path.dirname(SETTINGS_DOC_PATH), { recursive: true });
    fs.writeFileSync(SETTINGS_DOC_PATH, text);
    process.stdout.write(`wrote ${path.relative(process.cwd(), SETTINGS_DOC_PATH)}\n`);
  }
}
