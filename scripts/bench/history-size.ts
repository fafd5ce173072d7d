/**
 * Size of a workflow history, three ways: the JSON the CLI and Web UI export, the protobuf encoding
 * the server stores and limits (50 MB a run), and the payload bytes inside it (what our code puts
 * there). Also how the size grows iteration by iteration, the baseline for the history-growth fix.
 */
import { historyToJSON, type History } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';

/** Bytes of history once iteration `iteration` of the turn was over. */
export interface GrowthPoint {
  iteration: number;
  /** Encoded bytes of every event up to the start of the next model call (or the end). */
  bytes: number;
}

/** The figures of one history. */
export interface HistoryFigures {
  events: number;
  /** `historyToJSON` output, in UTF-8 bytes. */
  jsonBytes: number;
  /** Protobuf encoding of the whole history. */
  protoBytes: number;
  /** Sum of the `data` of every payload in it. */
  payloadBytes: number;
  /** One point per model call (iteration) of the history's turns. */
  growth: GrowthPoint[];
}

/** Activity types whose scheduling starts an iteration: the model call (`callModel`, `callModelV2`, ...). */
export function isModelActivity(name: string | null | undefined): boolean {
  return typeof name === 'string' && name.startsWith('callModel');
}

/** Measure `history`. */
export function measureHistory(history: History): HistoryFigures {
  const events = history.events ?? [];
  const growth: GrowthPoint[] = [];
  let bytes = 0;
  for (const event of events) {
    if (isModelActivity(event.activityTaskScheduledEventAttributes?.activityType?.name)) {
      // An iteration is over when the next one schedules its model call.
      if (growth.length > 0) growth[growth.length - 1]!.bytes = bytes;
      growth.push({ iteration: growth.length + 1, bytes: 0 });
    }
    bytes += temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
  }
  if (growth.length > 0) growth[growth.length - 1]!.bytes = bytes;
  return {
    events: events.length,
    jsonBytes: Buffer.byteLength(historyToJSON(history), 'utf8'),
    protoBytes: temporal.api.history.v1.History.encode(history).finish().length,
    payloadBytes: payloadDataBytes(history),
    growth,
  };
}

/** Sum of every `data` byte array in the tree: payload data is the only such field in history events. */
function payloadDataBytes(value: unknown, seen = new Set<unknown>()): number {
  if (value === null || typeof value !== 'object' || seen.has(value)) return 0;
  seen.add(value);
  if (value instanceof Uint8Array) return 0;
  let total = 0;
  for (const [key, child] of Object.entries(value)) {
    if (key === 'data' && child instanceof Uint8Array) total += child.length;
    else total += payloadDataBytes(child, seen);
  }
  return total;
}
