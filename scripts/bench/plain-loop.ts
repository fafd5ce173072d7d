/**
 * The engine benchmark's baseline: the same agentic loop without Temporal. Same `openai` client and
 * request body as the `callModel` activity, the same reply normalisation, `readFileTool` called
 * directly, and the same message appends as workflows/turn/turn.ts.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ChatMessage, SystemMessage, ToolDefinition, ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { normalizeReply } from '../../activities/model/normalize-response';
import { readFileTool } from '../../activities/tools/read-file';

/** What a plain turn needs; everything is prepared once, outside the timed part. */
export interface PlainTurnInput {
  client: OpenAI;
  model: string;
  systemMessages: SystemMessage[];
  tools: ToolDefinition[];
  context: RuntimeContext;
  maxIterations: number;
}

/** Outcome of a plain turn. */
export interface PlainTurnResult {
  iterations: number;
  response: string | null;
  transcript: ChatMessage[];
  /** Each model step: the request, the reply's normalisation and the reads it asked for (ms): what the callModelV2 activity does with inline reads. */
  callMs: number[];
}

/** Run one turn for `userMessage` in this process; throws on a tool name other than read_file. */
export async function runPlainTurn(input: PlainTurnInput, userMessage: string): Promise<PlainTurnResult> {
  const transcript: ChatMessage[] = [...input.systemMessages, { role: 'user', content: userMessage }];
  const callMs: number[] = [];
  for (let iterations = 1; iterations <= input.maxIterations; iterations++) {
    const started = performance.now();
    const reply = await input.client.chat.completions.create({
      model: input.model,
      // Our ChatMessage is the wire shape the activity sends as is.
      messages: transcript as ChatCompletionMessageParam[],
      tools: input.tools,
      tool_choice: 'auto',
    });
    const { message } = normalizeReply(reply);
    transcript.push(message);
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) {
      callMs.push(performance.now() - started);
      return { iterations, response: message.content, transcript, callMs };
    }
    const results = await Promise.all(
      calls.map((call): Promise<ToolResult> => {
        if (call.function.name !== 'read_file') throw new Error(`plain loop: unexpected tool ${call.function.name}`);
        return readFileTool(input.context, JSON.parse(call.function.arguments));
      }),
    );
    callMs.push(performance.now() - started);
    calls.forEach((call, i) => transcript.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(results[i]) }));
  }
  return { iterations: input.maxIterations, response: null, transcript, callMs };
}
