/**
 * Chat Completions as a provider: the request built by build-request.ts from the template-safe
 * messages, sent through the official `openai` client by completion.ts (streamed when asked; a
 * structured reply asked again without its format from a server that refuses one). This is the
 * model call as it was before providers, behind the provider interface.
 */
import type { ChatCompletionsClient } from './completion';
import { checkApiKey, requestCompletion } from './completion';
import { buildRequest } from './build-request';
import type { ResolvedModelConfig } from './model-config';
import type { ModelProvider, PreparedCall, ProviderCall } from './provider';
import { withResponseFormatFallback } from './response-format';
import { templateSafeMessages } from './template-safety';

/** The Chat Completions provider over `client` (the openai client, or a test's). */
export function chatCompletionsProvider(client: ChatCompletionsClient, config: ResolvedModelConfig): ModelProvider {
  return {
    name: 'openai',
    checkReady: () => checkApiKey(config),
    prepare(call: ProviderCall): PreparedCall {
      const messages = templateSafeMessages(call.messages, { sendReasoning: call.settings?.sendReasoning });
      const body = buildRequest({
        model: call.model,
        messages,
        tools: call.tools,
        settings: call.settings,
        temperature: call.temperature,
        maxTokens: call.maxTokens,
        baseURL: config.baseURL,
        ...(call.responseFormat !== undefined ? { responseFormat: call.responseFormat } : {}),
      });
      const via = call.responseFormat ? withResponseFormatFallback(client, config.baseURL) : client;
      return {
        body,
        messages,
        send: () => requestCompletion(via, config, { body, model: call.model, messages, tools: call.tools, label: call.label, stream: call.stream === true }),
      };
    },
  };
}
