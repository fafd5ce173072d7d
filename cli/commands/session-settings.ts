/**
 * The model, context, budget and verify settings of a new session (run, chat, batch, schedule
 * create), from the command line's options and, for the options not given, the LOOPWRIGHT_*
 * environment variables: the settings table's `model` flags (common/settings/session-settings.ts).
 * Only settings that were given are set, so the session's own defaults apply to the rest.
 */
import type { SessionInput } from '../../common/session-types';
import { UsageError } from '../output';
import { settingsEnvHelp } from '../setting-flags';
import { settingsFromOptions } from './settings-from-options';

/** The model, context and budget flags (run and chat), as commander parsed them (see the settings table's `model` flags). */
export type ModelSettingOptions = object;

/** The session settings these flags give. */
export type ModelSessionSettings = Pick<SessionInput, 'modelSettings' | 'fallbackModels' | 'maxContinuations' | 'context' | 'budget' | 'verify'>;

/** The environment variables that give defaults to the model, context and budget flags. */
export const SESSION_SETTINGS_ENV_NAMES: readonly string[] = settingsEnvHelp('model').map(([name]) => name);

/** The session settings of the options and the environment; only what was given is set. */
export function modelSessionSettings(options: ModelSettingOptions, env: NodeJS.ProcessEnv = process.env, where: { terminal?: boolean } = {}): ModelSessionSettings {
  const settings = settingsFromOptions(options, 'model', { env }) as ModelSessionSettings;
  // Streamed replies are shown as they are written on a terminal; elsewhere only when asked.
  if (where.terminal && settings.modelSettings?.stream === undefined) settings.modelSettings = { ...settings.modelSettings, stream: true };
  if (settings.budget?.sessionCost !== undefined && settings.budget.prices === undefined) {
    throw new UsageError('--cost-budget needs the price of the models used: --price <model=input,output> (per million tokens; * for any model)');
  }
  return settings;
}
