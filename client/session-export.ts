/**
 * Exporting a session's history to a file a team can keep (an eval suite in git) and replay
 * (`loopwright eval <file>`): every run of the session, first to last, in Temporal's JSON history
 * form inside a small wrapper (activities/eval/history-json.ts, `SessionHistoryFile`). Payloads stay
 * as the server holds them (encrypted, when the payload codec is on) or are decoded with the
 * client's codecs. Secrets never land in the file: the worker's model key is never in history, and
 * on top of that every text the file holds in the clear (decoded payloads, failure messages, stack
 * traces) goes through the same redaction as model failures, with the values of this process's
 * secret-looking environment variables (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`) as known secrets.
 */
import type { Client } from '@temporalio/client';
import { decodePayloadsInPlace, encodingOf, fetchSessionHistory, payloadsIn, SESSION_HISTORY_FORMAT, type SessionHistoryFile } from '../activities/eval/history-json';
import { MIN_SECRET_LENGTH, redactSecrets } from '../activities/redaction/redact';
import type { HistoryEvent } from '../common/eval/extract-recording';

/** How `exportSession` writes payloads. */
export interface ExportOptions {
  /** `encoded`: as the server holds them (encrypted when a codec key is set; default); `decoded`: decoded with the client's codecs. */
  payloads?: 'encoded' | 'decoded';
  /** Values to redact besides the environment's secrets. */
  secrets?: readonly string[];
  /** The environment whose secret-looking variables are redacted (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

/** The session `workflowId` (every run, first to last) as a history file. */
export async function exportSession(client: Client, workflowId: string, options: ExportOptions = {}): Promise<SessionHistoryFile> {
  const runs = await fetchSessionHistory(client, workflowId);
  const payloads = options.payloads ?? 'encoded';
  if (payloads === 'decoded') await decodePayloadsInPlace(runs, client.options.loadedDataConverter.payloadCodecs);
  const secrets = [...secretValues(options.env ?? process.env), ...(options.secrets ?? [])];
  for (const run of runs) redactInPlace(run.events, secrets);
  return {
    format: SESSION_HISTORY_FORMAT,
    workflowId,
    exportedAt: new Date().toISOString(),
    payloads,
    runs: runs.map((run) => ({ runId: run.runId ?? '', history: { events: run.events as HistoryEvent[] } })),
  };
}

/** Names of environment variables whose values are secrets wherever they appear. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH/i;

/** The values of `env`'s secret-looking variables (long enough to be told apart from ordinary text). */
export function secretValues(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .filter(([name, value]) => SECRET_NAME.test(name) && typeof value === 'string' && value.length >= Math.max(MIN_SECRET_LENGTH, 8))
    .map(([, value]) => value!);
}

/**
 * Redact, in place, every text of `tree` readable in the file: `json/plain` payloads (decoded,
 * redacted, encoded again) and every other string outside payloads; encrypted payloads stay as
 * they are (their plaintext is not in the file).
 */
export function redactInPlace(tree: unknown, secrets: readonly string[]): void {
  const payloadObjects = new Set<object>();
  for (const { payload } of payloadsIn(tree)) {
    payloadObjects.add(payload);
    if (encodingOf(payload) !== 'json/plain' || payload.data === undefined) continue;
    const text = Buffer.from(payload.data, 'base64').toString('utf8');
    const redacted = redactSecrets(text, secrets);
    if (redacted !== text) payload.data = Buffer.from(redacted, 'utf8').toString('base64');
  }
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== 'object' || payloadObjects.has(node)) return;
    const entries: [string | number, unknown][] = Array.isArray(node) ? node.map((v, i) => [i, v]) : Object.entries(node);
    for (const [key, value] of entries) {
      if (typeof value === 'string') {
        const redacted = redactSecrets(value, secrets);
        if (redacted !== value) (node as Record<string | number, unknown>)[key] = redacted;
      } else walk(value);
    }
  };
  walk(tree);
}
