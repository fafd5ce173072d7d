/**
 * A new session's settings from the command line's options, as the settings table says
 * (common/settings/session-settings.ts): each flag's value, or when the flag was not given its
 * LOOPWRIGHT_* environment variable (an empty value counts as unset), made into the setting by the
 * flag's converter if it has one, and set at the setting's path (`modelSettings.temperature`).
 * Only what was given is set, so the session's own defaults apply to the rest: a yes/no flag
 * sets its value only when that is not the setting's default, and an empty list sets nothing.
 */
import { InvalidArgumentError } from 'commander';
import type { FlagGroup } from '../../common/settings/setting';
import type { SessionInput } from '../../common/session-types';
import { UsageError } from '../output';
import { envParser, type FlaggedSetting, flagAttribute, flagGroup, flaggedSetting } from '../setting-flags';
import { type ConvertContext, SETTING_CONVERTERS } from './setting-converters';

/** Where the settings are read from besides the options. */
export interface OptionsContext {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/**
 * The settings of a group's flags (or of the settings at these paths) from `options`, as commander
 * parsed them. A bad environment value is a usage mistake naming the variable.
 */
export function settingsFromOptions(options: object, which: FlagGroup | readonly string[], { env = process.env, cwd = process.cwd() }: OptionsContext = {}): Partial<SessionInput> {
  const flagged = typeof which === 'string' ? flagGroup(which) : which.map(flaggedSetting);
  const values = new Map<string, unknown>();
  const context: ConvertContext = {
    env,
    cwd,
    valueOf: (path) => {
      if (!values.has(path)) values.set(path, settingValue(flaggedSetting(path), options, context));
      return values.get(path);
    },
  };
  const settings: Record<string, unknown> = {};
  for (const entry of flagged) {
    const value = context.valueOf(entry.path);
    if (value !== undefined) setAt(settings, entry.path.split('.'), value);
  }
  return settings as Partial<SessionInput>;
}

/** The value a setting gets from the options (its flag, else its variable), or undefined to leave it out. */
function settingValue({ setting }: FlaggedSetting, options: object, context: ConvertContext): unknown {
  const { flag } = setting;
  let value = (options as Record<string, unknown>)[flagAttribute(setting)];
  if (value === undefined && flag.env) value = fromEnvironment(setting, flag.env.name, context.env);
  if (flag.convert !== undefined) value = SETTING_CONVERTERS[flag.convert](value, context);
  if (Array.isArray(value) && value.length === 0) return undefined;
  // `--strict` unset is commander's undefined, `--no-summarize` unset its true: neither is said.
  if (typeof value === 'boolean' && value === setting.default) return undefined;
  return value;
}

function fromEnvironment(setting: FlaggedSetting['setting'], name: string, env: NodeJS.ProcessEnv): unknown {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const parse = envParser(setting) ?? ((text: string) => text);
  try {
    return parse(raw);
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err;
    throw new UsageError(`environment variable ${name} value '${raw}' is invalid. ${err.message}`);
  }
}

function setAt(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  const [head, ...rest] = path;
  if (rest.length === 0) {
    target[head!] = value;
    return;
  }
  const inner = (target[head!] ??= {}) as Record<string, unknown>;
  setAt(inner, rest, value);
}
