/**
 * The typed builder of the settings table (session-settings.ts): a setting is its kind of value,
 * its doc text, its default, and, when the command line has one, its flag. A group of settings is
 * itself a kind, so groups nest (`modelSettings.temperature`). The TypeScript type of a group's
 * value is inferred from its settings (`GroupValue`), so the table is the only declaration of a
 * setting's type. Plain data and small functions: the workflow sandbox loads it once per session.
 */
import { type Field, type Kind, type KindValue, type ObjectKind, objectOf } from './kinds';
import type { McpServerConfig } from '../offered-tools';
import type { ModelPrice } from '../budget-types';
import type { ApprovalPolicy } from './session-settings';

/**
 * The parsers of flag values, by name, and the type each returns (cli/commands/option-values.ts
 * implements them; a repeatable one adds to what earlier uses gave). A flag names its parser
 * here, so the table stays plain data and commander stays out of the workflow sandbox.
 */
export interface FlagParsers {
  positiveInt: number;
  wholeNumber: number;
  positiveNumber: number;
  temperature: number;
  openFraction: number;
  verifyAttempts: number;
  jsonObject: Record<string, unknown>;
  /** Repeatable; each use adds a value. */
  collect: string[];
  /** Repeatable; each use adds models, comma-separated. */
  models: string[];
  /** Repeatable; each use adds a model's price. */
  price: Record<string, ModelPrice>;
  toolPatternList: string[];
  /** Repeatable; each use adds tool names or patterns, comma-separated. */
  toolPatterns: string[];
  agentPatternList: string[];
  /** Repeatable; each use adds one command rule (commas belong to commands). */
  commandPatterns: string[];
  approvalPolicy: ApprovalPolicy;
}

/**
 * What the command line does with a flag's value besides parsing it, by name, and the type of the
 * setting it gives (cli/commands/setting-converters.ts implements them). A setting with a
 * converter is set by the command line even when its flag is not given (`projectRoot`: this folder).
 */
export interface FlagConverters {
  /** An absolute, symlink-free folder; the command's folder when not given. */
  projectRoot: string;
  /** Folders relative to the project root, made absolute. */
  projectPaths: string[];
  /** Folders relative to the command's folder, made absolute. */
  absolutePaths: string[];
  /** A host id, `any` (none), or this machine when not given. */
  filesHost: string | undefined;
  /** Files in `.mcp.json` format, read: their servers, a later file's winning. */
  mcpConfigFiles: Record<string, McpServerConfig>;
}

/** The flags that start sessions come in groups, each added to a command as a whole (run, chat, batch, schedule create). */
export type FlagGroup = 'sandbox' | 'model' | 'tools';

/** The names of the parsers whose value fits a setting of type T. */
type ParserFor<T> = { [P in keyof FlagParsers]: FlagParsers[P] extends T ? P : never }[keyof FlagParsers];
type ConverterFor<T> = { [C in keyof FlagConverters]: FlagConverters[C] extends T | undefined ? C : never }[keyof FlagConverters];

interface FlagBase {
  /** As commander takes it: `--max-output-tokens <n>`, `--strict`, `--no-summarize`. */
  readonly flags: string;
  readonly help: string;
  /** A `--no-` form beside the flag (`--stream` and `--no-stream`): its help. */
  readonly negation?: string;
  /** The environment variable that gives the flag a default, and what the help says of it. */
  readonly env?: { readonly name: string; readonly help: string };
  /** The group the flag is added with; none: commands add it one by one (`--model`). */
  readonly group?: FlagGroup;
}

/**
 * A setting's command-line flag: its value parsed (no parser: the string, or for a kind of fixed
 * values one of them) and, with a converter, made into the setting's value. A boolean setting's
 * flag sets only the value that is not the setting's default.
 */
export type Flag<T = unknown> = FlagBase & ({ readonly parse?: ParserFor<T>; readonly convert?: undefined } | { readonly convert: ConverterFor<T>; readonly parse?: keyof FlagParsers });

/** One setting of the table. */
export interface Setting<T = unknown, R extends boolean = boolean> extends Field<T> {
  readonly kind: Kind<T>;
  /** What it does, for the docs (a sentence or two; the default goes in `default`). */
  readonly doc: string;
  /** Every input has it (`bundlePath`). */
  readonly required?: R;
  /** The value used when the setting is not given. */
  readonly default?: T;
  /** The default in words, when it is not one value (`the server's`); shown after `default` if both are set. */
  readonly defaultText?: string;
  /** Set by Loopwright itself (a client, or the session when it continues), not by the user. */
  readonly internal?: true;
  readonly flag?: Flag<T>;
}

/** Any setting, as code that walks the table sees it. */
export interface AnySetting extends Field<unknown> {
  readonly doc: string;
  readonly default?: unknown;
  readonly defaultText?: string;
  readonly internal?: true;
  readonly flag?: FlagBase & { readonly parse?: keyof FlagParsers; readonly convert?: keyof FlagConverters };
}

/** A setting's value type. */
export type SettingValue<S> = S extends { kind: infer K } ? KindValue<K> : never;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The value of a group of settings: required settings required, the others optional. */
export type GroupValue<F> = Simplify<
  { -readonly [K in keyof F as F[K] extends { readonly required?: true } ? K : never]: SettingValue<F[K]> } & {
    -readonly [K in keyof F as F[K] extends { readonly required?: true } ? never : K]?: SettingValue<F[K]>;
  }
>;

/** A group of settings as a kind: its settings (`fields`), and whether it refuses one it does not know. */
export interface Group<F extends Readonly<Record<string, AnySetting>>> extends ObjectKind<GroupValue<F>> {
  readonly fields: F;
}

/**
 * One setting; returns `spec` itself (the function only types it: the default and the flag's
 * parser must fit the kind).
 */
export function setting<T, const R extends boolean = false>(spec: Setting<NoInfer<T>, R> & { readonly kind: Kind<T> }): Setting<T, R> {
  return spec as Setting<T, R>;
}

/** A group of settings, checked in order; `strict` refuses a field it does not know. */
export function group<const F extends Readonly<Record<string, AnySetting>>>(settings: F, { strict }: { strict: boolean }): Group<F> {
  return objectOf<GroupValue<F>>('object', settings, strict, true) as Group<F>;
}

/** True for a kind that is a group of settings. */
export function isGroup(kind: Kind<unknown>): kind is Group<Readonly<Record<string, AnySetting>>> {
  return (kind as Partial<Group<Readonly<Record<string, AnySetting>>>>).settings === true;
}

/** Every setting of a group and of the groups within it, depth first, with its path (`modelSettings.temperature`). */
export function* eachSetting(settings: Readonly<Record<string, AnySetting>>, prefix: readonly string[] = []): Generator<{ path: readonly string[]; setting: AnySetting }> {
  for (const [name, entry] of Object.entries(settings)) {
    const path = [...prefix, name];
    yield { path, setting: entry };
    if (isGroup(entry.kind)) yield* eachSetting(entry.kind.fields, path);
  }
}
