/**
 * The model, context and budget settings of a new session (run and chat), from the command line's
 * options and, for the options not given, the LOOPWRIGHT_* environment variables. Only settings
 * that were given are set, so the session's own defaults apply to the rest.
 */
import { InvalidArgumentError } from 'commander';
import type { ModelSettings } from '../../common/model-call';
import type { BudgetSettings, ContextSettings, ModelPrice, SessionInput } from '../../common/session-types';
import { UsageError } from '../output';
import type { VerifySettings } from '../../common/verify-types';
import { modelList, onOff, positiveInt, reasoningEffort, temperature, verifyAttempts } from './option-values';

/** The model, context and budget flags (run and chat), as the command line parses them. */
export interface ModelSettingOptions {
  maxOutputTokens?: number;
  temperature?: number;
  reasoningEffort?: ModelSettings['reasoningEffort'];
  toolChoice?: ModelSettings['toolChoice'];
  extraBody?: Record<string, unknown>;
  sendReasoning?: boolean;
  /** `--stream` / `--no-stream`: ask for streamed replies (default: on a terminal, where they are shown as written). */
  stream?: boolean;
  /** `--fallback-model`, repeatable. */
  fallbackModel?: string[];
  maxContinuations?: number;
  contextWindow?: number;
  compactAt?: number;
  keepRecent?: number;
  /** False with `--no-summarize`. */
  summarize?: boolean;
  turnTokenBudget?: number;
  sessionTokenBudget?: number;
  costBudget?: number;
  /** `--price`, repeatable: price per million tokens by model. */
  price?: Record<string, ModelPrice>;
  /** `--verify` / `--no-verify`: check saved documents against their workflow's checklist (default on). */
  verify?: boolean;
  verifyAttempts?: number;
}

/** The session settings these flags give. */
export type ModelSessionSettings = Pick<SessionInput, 'modelSettings' | 'fallbackModels' | 'maxContinuations' | 'context' | 'budget' | 'verify'>;

/** The options with an environment default: the variable, and how its value is read. */
const ENV_DEFAULTS = {
  maxOutputTokens: ['LOOPWRIGHT_MAX_OUTPUT_TOKENS', positiveInt],
  temperature: ['LOOPWRIGHT_TEMPERATURE', temperature],
  reasoningEffort: ['LOOPWRIGHT_REASONING_EFFORT', reasoningEffort],
  contextWindow: ['LOOPWRIGHT_CONTEXT_WINDOW', positiveInt],
  fallbackModel: ['LOOPWRIGHT_FALLBACK_MODELS', modelList],
  turnTokenBudget: ['LOOPWRIGHT_TURN_TOKEN_BUDGET', positiveInt],
  sessionTokenBudget: ['LOOPWRIGHT_SESSION_TOKEN_BUDGET', positiveInt],
  stream: ['LOOPWRIGHT_STREAM', onOff],
  verify: ['LOOPWRIGHT_VERIFY', onOff],
  verifyAttempts: ['LOOPWRIGHT_VERIFY_ATTEMPTS', verifyAttempts],
} as const satisfies { [K in keyof ModelSettingOptions]?: readonly [string, (raw: string) => ModelSettingOptions[K]] };

/** The environment variables that give defaults to the model, context and budget flags. */
export const SESSION_SETTINGS_ENV_NAMES: readonly string[] = Object.values(ENV_DEFAULTS).map(([name]) => name);

/**
 * The options, each one not given taken from its environment variable when that is set (an empty
 * value counts as unset). A bad value is a usage mistake naming the variable.
 */
export function withEnvironmentDefaults(options: ModelSettingOptions, env: NodeJS.ProcessEnv = process.env): ModelSettingOptions {
  return applyEnvironmentDefaults(options, ENV_DEFAULTS, env);
}

/** Options with an environment default: for an option, its variable and how a value of it is read. */
export type EnvironmentDefaults<T> = { [K in keyof T]?: readonly [string, (raw: string) => T[K]] };

/** `withEnvironmentDefaults` for any option group (see tool-settings.ts). */
export function applyEnvironmentDefaults<T extends object>(options: T, defaults: EnvironmentDefaults<T>, env: NodeJS.ProcessEnv): T {
  const resolved: T = { ...options };
  for (const [key, [name, parse]] of Object.entries(defaults) as [keyof T & string, readonly [string, (raw: string) => unknown]][]) {
    const raw = env[name];
    if (options[key] !== undefined || raw === undefined || raw.trim() === '') continue;
    try {
      (resolved as Record<string, unknown>)[key] = parse(raw);
    } catch (err) {
      if (!(err instanceof InvalidArgumentError)) throw err;
      throw new UsageError(`environment variable ${name} value '${raw}' is invalid. ${err.message}`);
    }
  }
  return resolved;
}

/** The session settings of the options and the environment; only what was given is set. */
export function modelSessionSettings(options: ModelSettingOptions, env: NodeJS.ProcessEnv = process.env, where: { terminal?: boolean } = {}): ModelSessionSettings {
  const o = withEnvironmentDefaults(options, env);
  const modelSettings: ModelSettings = defined({
    maxOutputTokens: o.maxOutputTokens,
    temperature: o.temperature,
    reasoningEffort: o.reasoningEffort,
    toolChoice: o.toolChoice,
    extraBody: o.extraBody,
    sendReasoning: o.sendReasoning ? true : undefined,
    // Streamed replies are shown as they are written on a terminal; elsewhere only when asked.
    stream: o.stream ?? (where.terminal ? true : undefined),
  });
  const context: ContextSettings = defined({
    window: o.contextWindow,
    compactAt: o.compactAt,
    keepRecent: o.keepRecent,
    summarize: o.summarize === false ? false : undefined,
  });
  const budget: BudgetSettings = defined({
    turnTokens: o.turnTokenBudget,
    sessionTokens: o.sessionTokenBudget,
    sessionCost: o.costBudget,
    prices: o.price && Object.keys(o.price).length ? o.price : undefined,
  });
  const verify: VerifySettings = defined({ enabled: o.verify === false ? false : undefined, maxAttempts: o.verifyAttempts });
  if (budget.sessionCost !== undefined && budget.prices === undefined) {
    throw new UsageError('--cost-budget needs the price of the models used: --price <model=input,output> (per million tokens; * for any model)');
  }
  return {
    ...(Object.keys(modelSettings).length ? { modelSettings } : {}),
    ...(o.fallbackModel?.length ? { fallbackModels: o.fallbackModel } : {}),
    ...(o.maxContinuations !== undefined ? { maxContinuations: o.maxContinuations } : {}),
    ...(Object.keys(context).length ? { context } : {}),
    ...(Object.keys(budget).length ? { budget } : {}),
    ...(Object.keys(verify).length ? { verify } : {}),
  };
}

/** `record` without its undefined fields. */
function defined<T extends object>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as T;
}
