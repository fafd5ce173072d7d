/**
 * Session histories in Temporal's JSON form (the form `historyToJSON` and `temporal workflow show
 * --output json` write, and `Worker.runReplayHistory` reads): fetched from the server across the
 * runs a session continued through, read from a file (a history, or the export wrapper), and their
 * payloads decoded with the caller's codecs (the encryption codec) or turned into values.
 */
import fs from 'node:fs';
import { type Client } from '@temporalio/client';
import { type PayloadCodec, ValueError } from '@temporalio/common';
import { historyToJSON, JSONToPayload, payloadToJSON } from '@temporalio/common/lib/proto-utils';
import { extractRecording, type HistoryEvent, type HistoryRun, type JsonPayload, RecordingError } from '../../common/eval/extract-recording';
import type { EvalSource } from '../../common/eval/eval-types';
import type { Recording } from '../../common/eval/recording';

/** Format name of the export wrapper (`loopwright export`). */
export const SESSION_HISTORY_FORMAT = 'loopwright-session-history/1';

/**
 * What `loopwright export` writes: the session's runs, first to last, each a Temporal JSON history,
 * with its payloads as the server holds them (`encoded`: encrypted when a codec key was set) or
 * decoded (`decoded`), secrets redacted either way.
 */
export interface SessionHistoryFile {
  format: typeof SESSION_HISTORY_FORMAT;
  workflowId: string;
  exportedAt: string;
  payloads: 'encoded' | 'decoded';
  runs: { runId: string; history: { events: HistoryEvent[] } }[];
}

/** The session's runs, first to last, in JSON form, following each run back to the one it continued from. */
export async function fetchSessionHistory(client: Client, workflowId: string, runId?: string): Promise<HistoryRun[]> {
  let next: string | undefined = runId ?? (await client.workflow.getHandle(workflowId).describe()).runId;
  const runs: HistoryRun[] = [];
  const seen = new Set<string>();
  while (next && !seen.has(next)) {
    seen.add(next);
    const history = await client.workflow.getHandle(workflowId, next).fetchHistory();
    const json = JSON.parse(historyToJSON(history)) as { events?: HistoryEvent[] };
    const events = json.events ?? [];
    runs.unshift({ runId: next, events });
    const started = events[0]?.workflowExecutionStartedEventAttributes as { continuedExecutionRunId?: string } | undefined;
    next = started?.continuedExecutionRunId || undefined;
  }
  return runs;
}

/**
 * A session's recording, from the server (every run it continued through) or from a history file,
 * its payloads decoded with `client`'s codecs: what an eval compares, read the same way by the
 * eval's activities and by `loopwright serve`'s eval page. `client` is asked for only when the
 * source is a workflow id.
 */
export async function readRecording(source: EvalSource, client: () => Client, codecs: readonly PayloadCodec[]): Promise<Recording> {
  let runs: HistoryRun[];
  let workflowId: string | undefined;
  if ('file' in source) {
    ({ runs, workflowId } = readHistoryFile(source.file));
  } else {
    workflowId = source.workflowId;
    runs = await fetchSessionHistory(client(), workflowId);
  }
  await decodePayloadsInPlace(runs, codecs);
  return extractRecording(runs, decodeJsonPayload, workflowId);
}

/** A history file's runs: the export wrapper, or one Temporal JSON history (`{events: [...]}`), with its workflow id when it says. */
export function readHistoryFile(file: string): { workflowId?: string; runs: HistoryRun[] } {
  const value = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
  return historyRunsOf(value, file);
}

/** The runs of a parsed history file (see `readHistoryFile`). */
export function historyRunsOf(value: unknown, name = 'the history'): { workflowId?: string; runs: HistoryRun[] } {
  if (value === null || typeof value !== 'object') throw new RecordingError(`${name} is not a JSON object`);
  const record = value as Partial<SessionHistoryFile> & { events?: HistoryEvent[] };
  if (record.format !== undefined) {
    if (record.format !== SESSION_HISTORY_FORMAT) throw new RecordingError(`${name} has format ${String(record.format)}; this version reads ${SESSION_HISTORY_FORMAT}`);
    const runs = (record.runs ?? []).map((r) => ({ runId: r.runId, events: r.history?.events ?? [] }));
    return { ...(record.workflowId ? { workflowId: record.workflowId } : {}), runs };
  }
  if (!Array.isArray(record.events)) throw new RecordingError(`${name} is neither a Temporal JSON history ({"events": [...]}) nor a ${SESSION_HISTORY_FORMAT} file`);
  const started = record.events[0]?.workflowExecutionStartedEventAttributes as { workflowId?: string } | undefined;
  return { ...(started?.workflowId ? { workflowId: started.workflowId } : {}), runs: [{ events: record.events }] };
}

/** A payload object in JSON form: `metadata` with an `encoding`. */
function isJsonPayload(value: unknown): value is JsonPayload {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const metadata = (value as { metadata?: unknown }).metadata;
  return metadata !== null && typeof metadata === 'object' && typeof (metadata as { encoding?: unknown }).encoding === 'string';
}

/** Every payload object in `tree` (a history in JSON form), with the place that holds it. */
export function payloadsIn(tree: unknown): { holder: Record<string, unknown> | unknown[]; key: string | number; payload: JsonPayload }[] {
  const found: { holder: Record<string, unknown> | unknown[]; key: string | number; payload: JsonPayload }[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach((child, i) => (isJsonPayload(child) ? found.push({ holder: node, key: i, payload: child }) : walk(child)));
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        if (isJsonPayload(child)) found.push({ holder: node as Record<string, unknown>, key, payload: child });
        else walk(child);
      }
    }
  };
  walk(tree);
  return found;
}

/** Decode every payload of `tree` in place with `codecs` (the last codec decodes first, as the SDK does). Payloads no codec knows pass unchanged. */
export async function decodePayloadsInPlace(tree: unknown, codecs: readonly PayloadCodec[]): Promise<void> {
  if (codecs.length === 0) return;
  const places = payloadsIn(tree);
  if (places.length === 0) return;
  let payloads = places.map((p) => JSONToPayload(p.payload as never));
  for (const codec of [...codecs].reverse()) payloads = await codec.decode(payloads);
  places.forEach((place, i) => {
    (place.holder as Record<string | number, unknown>)[place.key] = payloadToJSON(payloads[i]!);
  });
}

/** The encoding a JSON payload names. */
export function encodingOf(payload: JsonPayload): string {
  return Buffer.from(payload.metadata?.encoding ?? '', 'base64').toString('utf8');
}

/**
 * The value of a (decoded) payload in JSON form, as the default data converter reads it: JSON for
 * `json/plain`, undefined for `binary/null`, the bytes for `binary/plain`. An encrypted payload
 * (its codec key not set here) is an error that says so.
 */
export function decodeJsonPayload(payload: JsonPayload): unknown {
  const encoding = encodingOf(payload);
  const data = Buffer.from(payload.data ?? '', 'base64');
  switch (encoding) {
    case 'json/plain':
      return JSON.parse(data.toString('utf8'));
    case 'binary/null':
      return undefined;
    case 'binary/plain':
      return new Uint8Array(data);
    case 'binary/encrypted':
      throw new ValueError('the history holds encrypted payloads: set LOOPWRIGHT_CODEC_KEY (or LOOPWRIGHT_CODEC_KEY_FILE) to the key they were written with');
    default:
      throw new ValueError(`a payload has the encoding ${encoding || '(none)'}, which this reader does not know`);
  }
}
