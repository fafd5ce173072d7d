/**
 * The kinds of value a session setting takes. Each kind checks a value (naming what is wrong, in the
 * words the session's input check has always used), carries the value's TypeScript type for
 * inference, and names its type for the generated docs. Plain objects and closures, no library and
 * no classes: the workflow sandbox evaluates this module once per cached session (zod cost about
 * 2 MB a session, see common/session-input-schema.ts; a class costs about 1 KB a session here).
 */
// The parser Temporal reads duration strings with (`msToNumber`), without loading the SDK (`--help` stays light).
import ms from 'ms';

/** What is wrong with a value: where, relative to the value checked (`''` for the value itself, `a.0`), and why. */
export interface Problem {
  readonly at: string;
  readonly reason: string;
}

/** A kind of value: its check, the name the docs give its type, and (type only) its TypeScript type. */
export interface Kind<T> {
  /** As the docs name it: `whole number >= 1`, `one of none, writes, all`. */
  readonly type: string;
  /** Undefined when `value` fits. */
  readonly check: (value: unknown) => Problem | undefined;
  /** The values of a kind with a fixed set (the command line derives parsers and help from them). */
  readonly values?: readonly string[];
  /** Type only, never set: the TypeScript type of a value of this kind. */
  readonly __type?: () => T;
}

/** The TypeScript type of a kind's values. */
export type KindValue<K> = K extends Kind<infer T> ? T : never;

/** A problem with the value itself. */
export function problem(reason: string): Problem {
  return { at: '', reason };
}

/** `found`, met at `key` of the value checked. */
export function under(key: string | number, found: Problem): Problem {
  return { at: found.at === '' ? String(key) : `${key}.${found.at}`, reason: found.reason };
}

/** `field: reason`, the form the session's checks report a problem in (`field` may be empty). */
export function problemText(field: string, found: Problem): string {
  const at = field === '' ? found.at : found.at === '' ? field : `${field}.${found.at}`;
  return `${at}: ${found.reason}`;
}

/** A value as a problem names it: a short JSON string, a number, `a list`, `null`, `object`. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value;
}

/** `a, b or c`. */
export function orList(values: readonly string[]): string {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
}

/** `expected <what>, got <value>`. */
function expected(what: string, value: unknown): Problem {
  return problem(`expected ${what}, got ${describe(value)}`);
}

/** A kind of type `type`: values that pass `test` fit, others are `expected a <type>`. */
function simple<T>(type: string, test: (value: unknown) => boolean): Kind<T> {
  return { type, check: (value) => (test(value) ? undefined : expected(`a ${type}`, value)) };
}

export const string: Kind<string> = simple('string', (value) => typeof value === 'string');

/** A string with more than white space. */
export const nonEmptyString: Kind<string> = {
  type: 'non-empty string',
  check: (value) => string.check(value) ?? ((value as string).trim() === '' ? problem('must not be empty') : undefined),
};

export const boolean: Kind<boolean> = { type: 'true or false', check: (value) => (typeof value === 'boolean' ? undefined : expected('true or false', value)) };

/** A share, 0 to 1 (not checked for being finite, as sessions have always been checked). */
export const fraction: Kind<number> = simple('number from 0 to 1', (value) => typeof value === 'number' && value >= 0 && value <= 1);

/**
 * A Temporal duration: a string such as '30 seconds' that Temporal can read (milliseconds, a number,
 * are accepted too). Checked here, at the start: a duration the workflow could not read later
 * would fail its workflow task again and again instead of the session's start.
 */
export const duration: Kind<string> = simple("duration such as '30 seconds'", (value) => (typeof value === 'string' && readableDuration(value)) || (typeof value === 'number' && value > 0));

function readableDuration(text: string): boolean {
  if (text.trim() === '') return false;
  try {
    const millis: unknown = ms(text as `${number}s`);
    return typeof millis === 'number' && Number.isFinite(millis) && millis >= 0;
  } catch {
    return false;
  }
}

/** A JSON object with any fields. */
export const jsonObject: Kind<Record<string, unknown>> = { type: 'object', check: (value) => (isObject(value) ? undefined : expected('an object', value)) };

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A whole number >= min. */
export function wholeNumber(min: number): Kind<number> {
  return simple(`whole number >= ${min}`, (value) => typeof value === 'number' && Number.isInteger(value) && value >= min);
}

export const positiveWholeNumber = wholeNumber(1);

/** A whole number from min to max. */
export function wholeNumberIn(min: number, max: number): Kind<number> {
  return simple(`whole number from ${min} to ${max}`, (value) => typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max);
}

/** A finite number within [min, max] (`openMin`: above min). */
export function numberIn(min: number, max: number, openMin = false): Kind<number> {
  return simple(
    `number ${openMin ? 'above' : 'from'} ${min} ${openMin ? 'up to' : 'to'} ${max}`,
    (value) => typeof value === 'number' && Number.isFinite(value) && (openMin ? value > min : value >= min) && value <= max,
  );
}

/** One of a fixed set of strings. */
export function oneOf<const V extends readonly string[]>(values: V): Kind<V[number]> {
  const type = `one of ${values.join(', ')}`;
  return { type, values, check: (value) => (typeof value === 'string' && values.includes(value) ? undefined : expected(type, value)) };
}

/** One of a fixed set of strings, or a list of non-empty strings. */
export function oneOfOrList<const V extends readonly string[]>(values: V): Kind<V[number] | string[]> {
  const single = oneOf(values);
  return { type: `${single.type}, or a list of strings`, values, check: (value) => (Array.isArray(value) ? stringList.check(value) : single.check(value)) };
}

/** A list of strings, each of the kind `item`. */
function stringsOf(type: string, item: Kind<string>): Kind<string[]> {
  return {
    type,
    check: (value) => {
      if (!Array.isArray(value)) return expected('a list of strings', value);
      for (const [i, entry] of value.entries()) {
        const found = item.check(entry);
        if (found) return under(i, found);
      }
      return undefined;
    },
  };
}

/** A list of non-empty strings. */
export const stringList: Kind<string[]> = stringsOf('list of non-empty strings', nonEmptyString);

/** Lines of a file as a list: any strings, empty ones and comments included. */
export const lineList: Kind<string[]> = stringsOf('list of strings', string);

/** An object of names to values of one kind; `name` may refuse a name (the reason is reported at the name). */
export function recordOf<T>(item: Kind<T>, type: string, name?: (key: string) => string | undefined): Kind<Record<string, T>> {
  return {
    type,
    check: (value) => {
      if (!isObject(value)) return expected('an object', value);
      for (const [key, entry] of Object.entries(value)) {
        const bad = name?.(key);
        if (bad !== undefined) return under(key, problem(bad));
        const found = item.check(entry);
        if (found) return under(key, found);
      }
      return undefined;
    },
  };
}

/** A map of strings to strings (an MCP server's `env` or `headers`). */
export const stringMap: Kind<Record<string, string>> = recordOf(string, 'object of strings');

/** A field of an object kind: its kind, and whether it must be there. */
export interface Field<T = unknown> {
  readonly kind: Kind<T>;
  readonly required?: boolean;
}

/** A kind of object with fields, each of a kind; see `objectOf`. */
export interface ObjectKind<T> extends Kind<T> {
  readonly fields: Readonly<Record<string, Field>>;
  readonly strict: boolean;
  /** Its fields are settings of the table (setting.ts, `group`). */
  readonly settings: boolean;
}

/**
 * An object with these fields, checked in order; `strict` refuses a field it does not know (a typo
 * would be ignored otherwise), naming the known ones.
 */
export function objectOf<T>(type: string, fields: Readonly<Record<string, Field>>, strict: boolean, settings = false): ObjectKind<T> {
  return {
    type,
    fields,
    strict,
    settings,
    check: (value) => {
      if (!isObject(value)) return expected('an object', value);
      for (const name in fields) {
        const field = fields[name]!;
        const entry = value[name];
        if (entry === undefined && !field.required) continue;
        const found = field.kind.check(entry);
        if (found) return under(name, found);
      }
      if (strict) {
        const unknown = Object.keys(value).find((name) => !(name in fields));
        if (unknown !== undefined) return under(unknown, problem(`unknown setting (known: ${Object.keys(fields).join(', ')})`));
      }
      return undefined;
    },
  };
}
