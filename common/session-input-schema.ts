/**
 * The session workflow's input, checked when a run starts: a missing or mistyped field ends the
 * session at once with a `LoopwrightBadInput` failure naming the field, instead of failing somewhere
 * later with a JavaScript error. The rules are the settings table's (common/settings/
 * session-settings.ts): each setting's kind, then the rules between settings. Hand-written kinds
 * rather than zod: the workflow sandbox gives every session its own instance of each module it
 * imports, and zod's cost about 2 MB per cached session (measured: 10,000 idle sessions took a
 * worker from 1.3 GB to 2.9 GB).
 */
import { describe, problemText } from './settings/kinds';
import { eachSetting } from './settings/setting';
import { SESSION_INPUT, SESSION_INPUT_RULES, SESSION_SETTINGS, type SessionInput } from './settings/session-settings';

/** The first problem with `input`, as `field: what is wrong`, or undefined when it is a valid SessionInput. */
export function sessionInputProblem(input: unknown): string | undefined {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return `the session input must be an object, got ${describe(input)}`;
  const found = SESSION_INPUT.check(input);
  if (found) return problemText('', found);
  for (const rule of SESSION_INPUT_RULES) {
    const problem = rule(input as SessionInput);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** Type guard over {@link sessionInputProblem}. */
export function isSessionInput(input: unknown): input is SessionInput {
  return sessionInputProblem(input) === undefined;
}

/**
 * The problem with `value` as the setting at `path` (`mcpServers`, `modelSettings.temperature`),
 * named as `sessionInputProblem` names it; undefined when it fits.
 */
export function settingProblem(path: string, value: unknown): string | undefined {
  for (const { path: at, setting } of eachSetting(SESSION_SETTINGS)) {
    if (at.join('.') !== path) continue;
    const found = setting.kind.check(value);
    return found ? problemText(path, found) : undefined;
  }
  throw new Error(`no session setting ${path}`);
}
