/**
 * The interface behind which the model activities call a model: one provider per wire format
 * (Chat Completions, Anthropic Messages). A provider turns the model's view of the transcript (chat
 * messages in the project's shape) into its own request, makes it inside the current activity
 * (heartbeats, cancellation, the bounded fetch), and hands back the reply normalised, redacted and
 * size-checked, or the classified failure: the same typed failures, usage shape and live-output
 * progress whichever format went over the wire. The workflow never sees a wire format.
 */
import type { ChatMessage, ToolDefinition } from '../../common/messages';
import type { ModelSettings } from '../../common/model-call';
import type { ProviderName } from '../../common/providers';
import type { ResponseFormat } from './build-request';
import type { Completion } from './completion';

/** One model call, as every provider takes it. */
export interface ProviderCall {
  /** The model's own name (without a provider prefix). */
  model: string;
  /** The messages the model sees, as the transcript holds them (each provider shapes them for its wire). */
  messages: readonly ChatMessage[];
  tools: readonly ToolDefinition[];
  settings?: ModelSettings;
  /** The first-version inputs, used when `settings` leaves them out. */
  temperature?: number;
  maxTokens?: number;
  /** A structured reply (JSON schema) when the provider can ask for one; null or absent: none. */
  responseFormat?: ResponseFormat | null;
  /** Names the call in logs (`Model call`, `Compaction summary`, `Verification`). */
  label: string;
  /** Stream the reply and show it in the heartbeats while it is written. */
  stream?: boolean;
  /**
   * Mark the stable prefix for the provider's prompt cache (a session's model calls, which re-send
   * a growing transcript; not one-off calls such as summaries). Providers without explicit
   * breakpoints ignore it.
   */
  cache?: boolean;
}

/** A call made ready to send: what it will send, for spans, logs and estimates. */
export interface PreparedCall {
  /** The request body as it goes on the wire (logged only with LOOPWRIGHT_LOG_PAYLOADS). */
  body: unknown;
  /** The messages as sent, in chat form: counted in spans and logs, and the base of the prompt estimate. */
  messages: ChatMessage[];
  /** Send it; throws the classified failure. */
  send(): Promise<Completion>;
}

/** A wire format the model activities can speak. */
export interface ModelProvider {
  readonly name: ProviderName;
  /** Throw a non-retryable MODEL_AUTH_ERROR when no call can succeed for want of a key. */
  checkReady(): void;
  /** Build the request of `call` (pure), to send once the caller has logged it. */
  prepare(call: ProviderCall): PreparedCall;
}
