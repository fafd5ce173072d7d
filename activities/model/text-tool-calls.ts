/**
 * Tool calls a model wrote into its text. Models of the Hermes and Qwen families call tools by
 * writing `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`; a server that does not parse
 * them (no tool-call parser, or a template it does not recognise) hands them over as content, and
 * the agent would stall on a "reply" that is really a call. All or nothing: when any block does not
 * name a tool offered in the request or is not JSON, the text is left as it was.
 */
import { randomUUID } from 'node:crypto';
import type { ToolCall } from '../../common/messages';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

/** Calls found in `content`, and what is left of the text; null when there are none to take. */
export interface TextToolCalls {
  calls: ToolCall[];
  /** The text outside the blocks, trimmed; null when nothing is left. */
  content: string | null;
}

/** The tool calls written in `content`, when every block is a call of one of `toolNames`; else null. */
export function parseTextToolCalls(content: string | null, toolNames: ReadonlySet<string>): TextToolCalls | null {
  if (content === null || toolNames.size === 0 || !content.includes(OPEN)) return null;
  const calls: ToolCall[] = [];
  const rest: string[] = [];
  let position = 0;
  while (position < content.length) {
    const start = content.indexOf(OPEN, position);
    if (start < 0) {
      rest.push(content.slice(position));
      break;
    }
    rest.push(content.slice(position, start));
    const bodyStart = start + OPEN.length;
    const end = content.indexOf(CLOSE, bodyStart);
    // A missing closing tag is tolerated only at the very end (a reply cut off, or a sloppy model).
    const body = end < 0 ? content.slice(bodyStart) : content.slice(bodyStart, end);
    const call = toolCallOf(body, toolNames);
    if (!call) return null;
    calls.push(call);
    position = end < 0 ? content.length : end + CLOSE.length;
  }
  if (calls.length === 0) return null;
  const left = rest.join('').trim();
  return { calls, content: left === '' ? null : left };
}

function toolCallOf(body: string, toolNames: ReadonlySet<string>): ToolCall | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.trim());
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const { name, arguments: args, parameters } = parsed as { name?: unknown; arguments?: unknown; parameters?: unknown };
  if (typeof name !== 'string' || !toolNames.has(name)) return null;
  const argumentsText = argumentsOf(args !== undefined ? args : parameters);
  if (argumentsText === null) return null;
  return { id: `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`, type: 'function', function: { name, arguments: argumentsText } };
}

/** An object as JSON, or a string that holds a JSON object as it is; anything else is not a call. */
function argumentsOf(value: unknown): string | null {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return JSON.stringify(value);
  if (typeof value === 'string') {
    try {
      const parsed: unknown = JSON.parse(value);
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? value : null;
    } catch {
      return null;
    }
  }
  return null;
}
