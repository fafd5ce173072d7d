/**
 * Canonical JSON: one text per value whatever the order of its object keys, so a tool call's
 * arguments written `{"b":1,"a":2}` in a recording and `{"a":2,"b":1}` by a candidate compare equal.
 * Plain code with no library: the workflow sandbox runs it to match calls against a recording.
 */

/** `value` as JSON with every object's keys sorted (arrays keep their order; `undefined` fields are left out, as JSON.stringify does). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
}

/**
 * The key a tool call's arguments are compared by: the canonical JSON of the parsed text (an empty
 * text is `{}`, as the engine reads it), or the trimmed text itself when it is not JSON.
 */
export function argumentsKey(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '{}';
  try {
    return canonicalJson(JSON.parse(trimmed));
  } catch {
    return trimmed;
  }
}

/**
 * `text` with each folder of `paths` (a scratch copy's folder: the recorded folder it stands for)
 * written as recorded, longest first, so a candidate that names files in its scratch copy is
 * compared with a recording that named them in the project.
 */
export function asRecorded(text: string, paths: Readonly<Record<string, string>> | undefined): string {
  if (!paths) return text;
  let out = text;
  for (const scratch of Object.keys(paths).sort((a, b) => b.length - a.length)) {
    if (scratch !== '' && out.includes(scratch)) out = out.split(scratch).join(paths[scratch]!);
  }
  return out;
}

/**
 * The other way: `value` (a recorded tool result) with each recorded folder written as its
 * scratch copy, so a result answered from the recording names the files the candidate works on
 * (a workflow's output file, which the verifier then finds where the candidate saved it).
 */
export function inScratch<T>(value: T, paths: Readonly<Record<string, string>> | undefined): T {
  if (!paths) return value;
  const text = JSON.stringify(value);
  let out = text;
  const byRecorded = Object.entries(paths).sort((a, b) => b[1].length - a[1].length);
  for (const [scratch, recorded] of byRecorded) {
    const from = JSON.stringify(recorded).slice(1, -1);
    if (from !== '' && out.includes(from)) out = out.split(from).join(JSON.stringify(scratch).slice(1, -1));
  }
  return out === text ? value : (JSON.parse(out) as T);
}
