/**
 * Which provider a model call goes to: a model string's prefix, then the session's `provider`
 * setting, then the worker's default (LOOPWRIGHT_PROVIDER, else the kind of its base URL); and the
 * worker's Anthropic settings (key and base URL) as read from its environment.
 */
import { createDescribeModel } from '../../../activities/model/describe-model';
import { ModelConfigError, resolveModelConfig } from '../../../activities/model/model-config';
import { ModelProviders } from '../../../activities/model/providers';
import { splitProviderModel, type ProviderName } from '../../../common/providers';
import { fakeClient } from './fake-client';

function providers(env: NodeJS.ProcessEnv): ModelProviders {
  return new ModelProviders(resolveModelConfig({}, env), fakeClient().client);
}

function resolved(p: ModelProviders, model: string | undefined, provider?: ProviderName): [string, string] {
  const { provider: chosen, model: name } = p.resolve(model, provider ? { provider } : undefined);
  return [chosen.name, name];
}

describe('providers', () => {
  it('splitProviderModel: only a known provider is a prefix (Ollama tags stay model names)', () => {
    expect(splitProviderModel('anthropic:claude-sonnet-4-5')).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-5' });
    expect(splitProviderModel('openai:gpt-4o')).toEqual({ provider: 'openai', model: 'gpt-4o' });
    expect(splitProviderModel('responses:gpt-5')).toEqual({ provider: 'responses', model: 'gpt-5' });
    expect(splitProviderModel('qwen2.5:7b')).toEqual({ provider: undefined, model: 'qwen2.5:7b' });
    expect(splitProviderModel('anthropic:')).toEqual({ provider: undefined, model: 'anthropic:' });
  });

  it('resolve: the prefix wins over the session setting, which wins over the worker default', () => {
    const p = providers({ LOOPWRIGHT_MODEL: 'local-model' });
    expect(resolved(p, undefined)).toEqual(['openai', 'local-model']);
    expect(resolved(p, 'claude-x', 'anthropic')).toEqual(['anthropic', 'claude-x']);
    expect(resolved(p, 'openai:gpt-4o', 'anthropic')).toEqual(['openai', 'gpt-4o']);
    expect(resolved(p, 'anthropic:claude-x', 'openai')).toEqual(['anthropic', 'claude-x']);
    expect(resolved(providers({ LOOPWRIGHT_PROVIDER: 'anthropic' }), 'claude-x')).toEqual(['anthropic', 'claude-x']);
    expect(resolved(p, 'responses:gpt-5', 'anthropic')).toEqual(['responses', 'gpt-5']);
    expect(resolved(p, 'gpt-5', 'responses')).toEqual(['responses', 'gpt-5']);
    expect(resolved(providers({ LOOPWRIGHT_PROVIDER: 'responses' }), 'gpt-5')).toEqual(['responses', 'gpt-5']);
  });

  it("resolve: a base URL on Anthropic's host makes Messages the default, with that URL's origin and key", () => {
    const env = { OPENAI_BASE_URL: 'https://api.anthropic.com/v1/', OPENAI_API_KEY: 'sk-ant-from-openai-var-0123' };
    expect(resolved(providers(env), 'claude-x')).toEqual(['anthropic', 'claude-x']);
    const config = resolveModelConfig({}, env);
    expect(config.anthropic).toEqual({ apiKey: 'sk-ant-from-openai-var-0123', baseURL: 'https://api.anthropic.com' });
    expect(resolveModelConfig({}, { ANTHROPIC_API_KEY: 'sk-ant-own-0123456789' }).secrets).toEqual(['sk-ant-own-0123456789']);
  });

  it("describeModel: a model on Anthropic's API is never looked up on the Chat Completions server", async () => {
    const describe = createDescribeModel(resolveModelConfig({}, { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }));
    expect(await describe({ model: 'anthropic:claude-x' })).toEqual({ model: 'anthropic:claude-x', contextWindow: null, source: "Anthropic's Messages API does not report it" });
    expect((await describe({ model: 'local' })).source).not.toMatch(/Anthropic/);
  });

  it('bad settings name the variable at fault', () => {
    expect(() => resolveModelConfig({}, { LOOPWRIGHT_PROVIDER: 'gemini' })).toThrow(ModelConfigError);
    expect(() => resolveModelConfig({}, { LOOPWRIGHT_PROVIDER: 'gemini' })).toThrow(/provider \(LOOPWRIGHT_PROVIDER\)/);
    expect(() => resolveModelConfig({}, { ANTHROPIC_BASE_URL: 'https://user:pw@example.com' })).toThrow(/anthropicBaseURL \(ANTHROPIC_BASE_URL\).*ANTHROPIC_API_KEY/);
  });
});
