/**
 * The command line's flags for session settings, read from the settings table
 * (common/settings/session-settings.ts): a flag's name, help, parser and environment variable are
 * declared there, and a command adds a whole group (`addSettingOptions(command, 'model')`) or one
 * setting's flag (`settingOptions('maxIterations')`). How the parsed options become the session's
 * settings is cli/commands/settings-from-options.ts.
 *
 * Loaded with the command line itself (for `--help` too): it imports no command module.
 */
import { type Command, Option } from 'commander';
import { type AnySetting, eachSetting, type FlagGroup } from '../common/settings/setting';
import { SESSION_SETTINGS } from '../common/settings/session-settings';
import { boolean } from '../common/settings/kinds';
import { FLAG_PARSERS, oneOfValues, onOff } from './commands/option-values';

/** A setting with a flag, and its path in the table (`modelSettings.temperature`). */
export interface FlaggedSetting {
  path: string;
  setting: AnySetting & { flag: NonNullable<AnySetting['flag']> };
}

/** Every setting with a flag, in table order. */
export const FLAGGED_SETTINGS: readonly FlaggedSetting[] = [...eachSetting(SESSION_SETTINGS)]
  .filter(({ setting }) => setting.flag !== undefined)
  .map(({ path, setting }) => ({ path: path.join('.'), setting: setting as FlaggedSetting['setting'] }));

/** The setting with a flag at `path`; a path with none is a bug of the caller. */
export function flaggedSetting(path: string): FlaggedSetting {
  const found = FLAGGED_SETTINGS.find((entry) => entry.path === path);
  if (!found) throw new Error(`no session setting with a flag at ${path}`);
  return found;
}

/** The settings whose flags are in `group`, in table order. */
export function flagGroup(group: FlagGroup): readonly FlaggedSetting[] {
  return FLAGGED_SETTINGS.filter(({ setting }) => setting.flag.group === group);
}

/** What a command may change of a setting's flag: its name (same value, e.g. `--output-root <dir>`), help, or commander's default. */
export interface FlagOverrides {
  flags?: string;
  help?: string;
  default?: unknown;
}

/** The setting each option made here stands for (the docs list where each flag is). */
const SETTING_OF = new WeakMap<Option, string>();

/** The setting path an option stands for, when it was made from the table. */
export function settingOfOption(option: Option): string | undefined {
  return SETTING_OF.get(option);
}

/** The options of the setting at `path`: its flag, and the flag's `--no-` form when it has one. */
export function settingOptions(path: string, overrides: FlagOverrides = {}): Option[] {
  const { setting } = flaggedSetting(path);
  const flag = setting.flag;
  const option = new Option(overrides.flags ?? flag.flags, overrides.help ?? flag.help);
  const parse = flagParser(setting);
  if (parse) option.argParser(parse);
  if (overrides.default !== undefined) option.default(overrides.default);
  const options = [option];
  // A yes/no flag's `--no-` form: `--stream` and `--no-stream`.
  if (flag.negation !== undefined) options.push(new Option(option.flags.replace(/^--/, '--no-'), flag.negation));
  for (const made of options) SETTING_OF.set(made, path);
  return options;
}

/** The option of the setting at `path`, whose flag has no `--no-` form (for `.addOption` in a command's chain). */
export function settingOption(path: string, overrides: FlagOverrides = {}): Option {
  const options = settingOptions(path, overrides);
  if (options.length !== 1) throw new Error(`the flag of ${path} has a --no- form: add it with addSettingOption`);
  return options[0]!;
}

/** Add the options of the setting at `path` to `command`. */
export function addSettingOption(command: Command, path: string, overrides: FlagOverrides = {}): Command {
  for (const option of settingOptions(path, overrides)) command.addOption(option);
  return command;
}

/** Add the flags of a group to `command`, in table order. */
export function addSettingOptions(command: Command, group: FlagGroup): Command {
  for (const { path } of flagGroup(group)) addSettingOption(command, path);
  return command;
}

/** How a setting's flag value is parsed: its named parser, or for a kind of fixed values, one of them; none for a boolean or a plain string. */
export function flagParser(setting: AnySetting): ((raw: string, previous: unknown) => unknown) | undefined {
  const parse = setting.flag?.parse;
  if (parse !== undefined) return FLAG_PARSERS[parse].flag as (raw: string, previous: unknown) => unknown;
  const values = setting.kind.values;
  return values !== undefined ? oneOfValues(values) : undefined;
}

/** How a value of a setting's environment variable is read: as its flag's, a whole list for a repeatable flag, 1 or 0 for a yes/no flag. */
export function envParser(setting: AnySetting): ((raw: string) => unknown) | undefined {
  const named = setting.flag?.parse;
  const env = named !== undefined ? (FLAG_PARSERS[named] as { env?: (raw: string) => unknown }).env : undefined;
  if (env) return env;
  const parse = flagParser(setting);
  if (parse) return (raw) => parse(raw, undefined);
  return setting.kind === boolean ? onOff : undefined;
}

/** The attribute commander keeps a setting's flag value in (`--no-summarize`: `summarize`). */
export function flagAttribute(setting: FlaggedSetting['setting']): string {
  return new Option(setting.flag.flags).attributeName();
}

/** The environment variables that give a group's flags their defaults, with what each is, for a command's help. */
export function settingsEnvHelp(group: FlagGroup): readonly (readonly [string, string])[] {
  return flagGroup(group).flatMap(({ setting }) => (setting.flag.env ? [[setting.flag.env.name, setting.flag.env.help] as const] : []));
}
