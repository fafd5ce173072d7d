/**
 * A streamed Responses reply joined into the `Response` an unstreamed request returns, following the
 * documented event sequence: `response.created` and `response.in_progress` (the response so far),
 * per output item `response.output_item.added`, its deltas (`response.output_text.delta`,
 * `response.refusal.delta`, `response.function_call_arguments.delta`,
 * `response.reasoning_summary_text.delta`, each with its `.done`) and `response.output_item.done`
 * (the item whole), then `response.completed` or `response.incomplete` (the whole response, usage
 * included). A `response.failed` or `error` event is thrown as the API error it stands for, so it is
 * classified like an HTTP error (a rate limit retried after its delay, a server error retried).
 * While it is joined it shows the reply so far to the live output (StreamSoFar). Events are read
 * as any JSON: what is not understood is skipped, and normalizeResponsesReply judges the result.
 */
import { APIError } from 'openai';
import { PREVIEW_CHARS, type StreamSoFar } from '../stream-progress';

/** The HTTP status a streamed error's code stands for (an event has no status of its own). */
const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  rate_limit_exceeded: 429,
  server_error: 500,
  server_is_overloaded: 503,
  slow_down: 503,
  invalid_prompt: 400,
  invalid_request_error: 400,
  context_length_exceeded: 400,
};

/** One output item as its events arrive. */
interface ItemParts {
  item: Record<string, unknown>;
  text: string[];
  refusal: string[];
  args: string[];
  done: boolean;
}

/** Joins the events of one streamed reply. */
export class ResponsesStreamJoiner implements StreamSoFar {
  private response: Record<string, unknown> = {};
  private final: Record<string, unknown> | undefined;
  private readonly items = new Map<number, ItemParts>();
  private preview = '';
  private textChars = 0;
  private reasoningTotal = 0;

  /** Take one event; throws the API error a failed response or an `error` event stands for. */
  add(event: unknown): void {
    if (!isRecord(event)) return;
    const index = typeof event.output_index === 'number' ? event.output_index : undefined;
    switch (event.type) {
      case 'response.created':
      case 'response.in_progress':
        if (isRecord(event.response)) this.response = { ...event.response };
        break;
      case 'response.output_item.added':
      case 'response.output_item.done':
        if (index !== undefined && isRecord(event.item)) {
          const parts = this.items.get(index) ?? { item: {}, text: [], refusal: [], args: [], done: false };
          parts.item = { ...event.item };
          parts.done = event.type === 'response.output_item.done';
          this.items.set(index, parts);
        }
        break;
      case 'response.output_text.delta':
        if (typeof event.delta === 'string') {
          this.parts(index)?.text.push(event.delta);
          const room = PREVIEW_CHARS - this.preview.length;
          if (room > 0) this.preview += event.delta.slice(0, room);
          this.textChars += event.delta.length;
        }
        break;
      case 'response.refusal.delta':
        if (typeof event.delta === 'string') this.parts(index)?.refusal.push(event.delta);
        break;
      case 'response.function_call_arguments.delta':
        if (typeof event.delta === 'string') this.parts(index)?.args.push(event.delta);
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (typeof event.delta === 'string') this.reasoningTotal += event.delta.length;
        break;
      case 'response.completed':
      case 'response.incomplete':
        if (isRecord(event.response)) this.final = { ...event.response };
        break;
      case 'response.failed': {
        const error = isRecord(event.response) && isRecord(event.response.error) ? event.response.error : {};
        throw streamedError(error);
      }
      case 'error':
        throw streamedError(isRecord(event.error) ? event.error : event);
      default:
        break;
    }
  }

  private parts(index: number | undefined): ItemParts | undefined {
    return index === undefined ? undefined : this.items.get(index);
  }

  text(): { preview: string; total: number } {
    return { preview: this.preview, total: this.textChars };
  }

  reasoningChars(): number {
    return this.reasoningTotal;
  }

  toolCallNames(): string[] {
    return [...this.items.values()].filter((p) => p.item.type === 'function_call' && typeof p.item.name === 'string').map((p) => p.item.name as string);
  }

  /** The joined response, as an unstreamed request would have returned it (the final event's, when it came whole). */
  joined(): Record<string, unknown> {
    if (this.final && Array.isArray(this.final.output) && this.final.output.length > 0) return this.final;
    const output = [...this.items.entries()].sort(([a], [b]) => a - b).map(([, parts]) => joinedItem(parts));
    return { ...this.response, ...this.final, output };
  }
}

/** An item that never came whole (no `output_item.done`), built from its deltas. */
function joinedItem(parts: ItemParts): Record<string, unknown> {
  const item = { ...parts.item };
  if (parts.done) return item;
  if (item.type === 'message') {
    const content: Record<string, unknown>[] = [];
    if (parts.text.length > 0) content.push({ type: 'output_text', text: parts.text.join(''), annotations: [] });
    if (parts.refusal.length > 0) content.push({ type: 'refusal', refusal: parts.refusal.join('') });
    item.content = content;
  }
  if (item.type === 'function_call' && parts.args.length > 0) item.arguments = parts.args.join('');
  return item;
}

/** The API error a streamed failure stands for, with the status its code names (500 when unknown). */
function streamedError(error: Record<string, unknown>): APIError {
  const code = typeof error.code === 'string' ? error.code : typeof error.type === 'string' ? error.type : undefined;
  const status = (code !== undefined ? STATUS_OF_CODE[code] : undefined) ?? 500;
  const message = typeof error.message === 'string' ? error.message : 'The model server reported an error while the reply streamed';
  return new APIError(status, { message, code: code ?? null, type: code ?? null }, message, new Headers());
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
