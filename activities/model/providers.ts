/**
 * Which provider a model call goes to, and under which model name: a model string's prefix
 * (`anthropic:claude-…`, `openai:gpt-…`, `responses:gpt-…`) first, then the session's `provider` setting, then the
 * worker's default (LOOPWRIGHT_PROVIDER, else the kind of its base URL). Per call, so a session's
 * fallback model may be on another provider than its model. Providers are made when first needed.
 */
import type { ModelSettings } from '../../common/model-call';
import { splitProviderModel, type ProviderName } from '../../common/providers';
import { anthropicProvider, type MessagesClient } from './anthropic/anthropic-provider';
import { chatCompletionsProvider } from './chat-completions-provider';
import type { ChatCompletionsClient } from './completion';
import type { ResolvedModelConfig } from './model-config';
import type { ModelProvider } from './provider';
import { responsesProvider, type ResponsesClient } from './responses/responses-provider';

/** A call's provider and the model name it sends. */
export interface ResolvedProvider {
  provider: ModelProvider;
  model: string;
}

/** The worker's providers. */
export class ModelProviders {
  private readonly made = new Map<ProviderName, ModelProvider>();

  constructor(
    private readonly config: ResolvedModelConfig,
    private readonly chatClient: ChatCompletionsClient,
    /** Replaces Anthropic's official client (tests). */
    private readonly messagesClient?: MessagesClient,
    /** Replaces the official client of the Responses API (tests). */
    private readonly responsesClient?: ResponsesClient,
  ) {}

  /** The provider and model name of a call for `model` (else the worker's default model) under `settings`. */
  resolve(model: string | undefined, settings?: ModelSettings): ResolvedProvider {
    const split = splitProviderModel(model ?? this.config.defaultModel);
    const name = split.provider ?? settings?.provider ?? this.config.defaultProvider;
    return { provider: this.get(name), model: split.model };
  }

  /** The provider named `name`. */
  get(name: ProviderName): ModelProvider {
    let provider = this.made.get(name);
    if (!provider) {
      provider =
        name === 'anthropic'
          ? anthropicProvider(this.config, this.messagesClient)
          : name === 'responses'
            ? responsesProvider(this.config, this.responsesClient)
            : chatCompletionsProvider(this.chatClient, this.config);
      this.made.set(name, provider);
    }
    return provider;
  }
}
