/**
 * Turning a model server's reply into our AssistantMessage. The reply is checked with zod because
 * OpenAI-compatible servers differ in small ways (missing tool-call ids or types, object arguments,
 * content parts); a reply we cannot use at all (no choices, no message) is a retryable
 * `ModelBadResponse`, since the next sample may well be fine. What can be mended is mended and said
 * in warnings: odd `usage` numbers (sanitize-usage.ts) and tool calls written into the text
 * (text-tool-calls.ts). A reasoning model's thinking (`reasoning_content`, or `reasoning`) is kept.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type { AssistantMessage, ChatMessage, TokenUsage, ToolCall, ToolDefinition } from '../../common/messages';
import { MODEL_BAD_RESPONSE, MODEL_REPLY_TOO_LARGE, type ModelFailureDetails } from '../../common/model-call';
import { estimatePromptTokens, estimateTextTokens } from '../../common/token-estimate';
import { sanitizeUsage } from './sanitize-usage';
import { parseTextToolCalls } from './text-tool-calls';

const toolCallSchema = z.object({
  id: z.string().min(1).optional(),
  type: z.string().optional(),
  function: z
    .object({
      name: z.string(),
      arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
    })
    .optional(),
});

const contentPartSchema = z.object({ type: z.string(), text: z.string().optional() });

const replySchema = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.union([z.string(), z.array(contentPartSchema)]).nullish(),
          // Anything: a refusal or reasoning of an odd shape is ignored, never a reason to retry.
          refusal: z.unknown().optional(),
          reasoning_content: z.unknown().optional(),
          reasoning: z.unknown().optional(),
          tool_calls: z.array(toolCallSchema).nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1, 'the reply has no choices'),
  // Any JSON: a bad usage is mended (sanitize-usage.ts), never a reason to retry a paid call.
  usage: z.unknown().optional(),
});

/** The normalised parts of a reply. */
export interface NormalizedReply {
  message: AssistantMessage;
  usage: TokenUsage | null;
  model: string | undefined;
  finishReason: string | null;
  /** Set when the message carried a `refusal`. */
  refusal?: boolean;
  /** What was mended, when anything was. */
  warnings?: string[];
  /** Usage fields replaced, when any were. */
  usageFixed?: number;
}

/** The request a reply answers: for the usage estimates and the tools a text tool call may name. */
export interface ReplyContext {
  messages?: readonly ChatMessage[];
  tools?: readonly ToolDefinition[];
}

/**
 * A provider's reply checked against its `schema`; a reply that does not fit is a retryable
 * `ModelBadResponse` naming the first field at fault (the next sample may well be fine).
 */
export function parseReply<T>(schema: z.ZodType<T>, reply: unknown): T {
  const parsed = schema.safeParse(reply);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length > 0 ? issue.path.join('.') : 'reply';
  const details: ModelFailureDetails = { status: 200, providerType: null, providerCode: null, requestId: null, retryAfterMs: null };
  throw ApplicationFailure.create({
    type: MODEL_BAD_RESPONSE,
    message: `The model server sent an unusable reply (${where}: ${issue.message}); it will be retried.`,
    nonRetryable: false,
    details: [details],
  });
}

/** Normalise a chat-completion reply; throws a retryable ApplicationFailure when it is unusable. */
export function normalizeReply(reply: unknown, request: ReplyContext = {}): NormalizedReply {
  const { choices, usage: rawUsage, model } = parseReply(replySchema, reply);
  const choice = choices[0]!;
  const warnings: string[] = [];
  const refusal = typeof choice.message.refusal === 'string' && choice.message.refusal !== '' ? choice.message.refusal : undefined;
  let toolCalls = (choice.message.tool_calls ?? []).flatMap(normalizeToolCall);
  // A refusal is the model's answer to the user; it must not disappear as an empty reply.
  let content = contentText(choice.message.content) ?? refusal ?? null;
  if (toolCalls.length === 0) {
    const written = parseTextToolCalls(content, new Set((request.tools ?? []).map((t) => t.function.name)));
    if (written) {
      toolCalls = written.calls;
      content = written.content;
      const names = written.calls.map((c) => c.function.name).join(', ');
      warnings.push(`The model wrote ${written.calls.length} tool call(s) (${names}) as <tool_call> text, which the server did not parse; they were taken as tool calls`);
    }
  }
  const message: AssistantMessage = { role: 'assistant', content };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const reasoning = nonEmptyString(choice.message.reasoning_content) ?? nonEmptyString(choice.message.reasoning);
  if (reasoning !== undefined) message.reasoning_content = reasoning;

  const sanitized = sanitizeUsage(rawUsage, {
    promptTokens: () => estimatePromptTokens(request.messages ?? [], request.tools ?? []),
    completionTokens: () => estimateTextTokens([message.content ?? '', ...toolCalls.map((c) => c.function.arguments)].join('')),
  });
  warnings.push(...sanitized.warnings);
  return {
    message,
    usage: sanitized.usage,
    model,
    finishReason: choice.finish_reason ?? null,
    ...(refusal !== undefined ? { refusal: true } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(sanitized.fixed > 0 ? { usageFixed: sanitized.fixed } : {}),
  };
}

/**
 * Throw a non-retryable `ModelReplyTooLarge` when `message`, as JSON in UTF-8, is over `limitBytes`.
 * The reply is stored in workflow history and sent back with every later request, so an oversized
 * one would fail the workflow task or every following call. Non-retryable because the call has
 * already been paid for: a repeat costs the same again and is likely just as large.
 */
export function checkReplySize(message: AssistantMessage, limitBytes: number): void {
  // Bytes, not string length: history limits are on encoded payloads, and non-ASCII text counts more.
  const bytes = Buffer.byteLength(JSON.stringify(message), 'utf8');
  if (bytes <= limitBytes) return;
  const details: ModelFailureDetails = { status: null, providerType: null, providerCode: null, requestId: null, retryAfterMs: null, limitBytes, receivedBytes: bytes };
  throw ApplicationFailure.create({
    type: MODEL_REPLY_TOO_LARGE,
    message:
      `The model reply is ${bytes} bytes, over the limit of ${limitBytes} bytes; it is not retried, since the call ` +
      'was paid for and a repeat would likely be as large. Set a lower maxTokens, or ask the agent for shorter replies.',
    nonRetryable: true,
    details: [details],
  });
}

/** Only function calls are kept (other kinds, such as custom tools, are not ours). */
function normalizeToolCall(call: z.infer<typeof toolCallSchema>): ToolCall[] {
  if (!call.function || (call.type !== undefined && call.type !== 'function')) return [];
  const args = call.function.arguments;
  return [
    {
      // Some compatible servers omit ids; the tool messages must still point at their call.
      id: call.id ?? `call_${randomUUID()}`,
      type: 'function',
      function: {
        name: call.function.name,
        // Strings go through untouched, even when they are not valid JSON: the workflow tells the model.
        arguments: typeof args === 'string' ? args : args ? JSON.stringify(args) : '{}',
      },
    },
  ];
}

function contentText(content: string | z.infer<typeof contentPartSchema>[] | null | undefined): string | null {
  if (content === null || content === undefined) return null;
  if (typeof content === 'string') return content;
  const texts = content.filter((p) => p.type === 'text' && p.text !== undefined).map((p) => p.text);
  return texts.length > 0 ? texts.join('') : null;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
