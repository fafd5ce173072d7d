/**
 * What the fake model server remembers of each chat-completion request, so tests can assert what
 * reached the model.
 */
import type { ChatMessage, ToolDefinition } from '../common/messages';

/** The JSON body of a chat-completion request, as far as tests look into it. */
export interface ChatCompletionRequestBody {
  model?: string;
  messages?: ChatMessage[];
  tools?: ToolDefinition[];
  tool_choice?: unknown;
  temperature?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  /** `true` asks for a streamed reply (stream.ts). */
  stream?: boolean;
  /** `include_usage: true` adds a last chunk with the usage to a streamed reply. */
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

/** One request received on `POST /v1/chat/completions`. */
export interface RecordedRequest {
  /** 0-based position among chat-completion requests. */
  index: number;
  method: string;
  path: string;
  /** Parsed JSON body; null when the body was not JSON (the server then answered 400). */
  body: ChatCompletionRequestBody | null;
  /** Request headers, lower-case names, without `authorization`. */
  headers: Record<string, string>;
  /** Whether an `Authorization` header came (its value is never kept). */
  hasAuthorization: boolean;
  /** When the request arrived (ms since the epoch). */
  receivedAt: number;
  /** The client disconnected before the response was complete. */
  aborted: boolean;
  /** Status code sent, once a response was sent; null while pending, or after a drop/abort. */
  status: number | null;
  /** Prompt tokens by the project's estimate (`estimatePromptTokens` of the messages and tools); 0 for a body that is not JSON. */
  promptTokens: number;
  /** Decoded bytes of a `bomb` or `endless` reply the server produced (for an endless one, until the client hung up). */
  bodyBytes?: number;
  /** Chunks of a streamed reply sent so far (`[DONE]` not counted); absent when the reply was not streamed. */
  streamedChunks?: number;
  /**
   * When the first chunk carrying content or a tool call (not the opening role chunk, nor reasoning)
   * was written (ms since the epoch); absent until then, and for a reply that was not streamed.
   */
  firstChunkAt?: number;
}
