import { DEFAULT_MAX_REPLY_BODY_BYTES, DEFAULT_MAX_REPLY_BYTES, DEFAULT_MODEL } from '../../../common/model-call';
import { DEFAULT_HEARTBEAT_INTERVAL_MS, ModelConfigError, PLACEHOLDER_API_KEY, resolveModelConfig } from '../../../activities/model/model-config';

describe('resolveModelConfig', () => {
  it('resolveModelConfig: reads OPENAI_API_KEY, OPENAI_BASE_URL, LOOPWRIGHT_MODEL and LOOPWRIGHT_LOG_PAYLOADS', () => {
    const config = resolveModelConfig({}, { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: 'http://localhost:11434/v1', LOOPWRIGHT_MODEL: 'llama3.1', LOOPWRIGHT_LOG_PAYLOADS: '1' });
    expect(config).toMatchObject({
      apiKey: 'sk-env',
      missingApiKey: false,
      baseURL: 'http://localhost:11434/v1',
      defaultModel: 'llama3.1',
      logPayloads: true,
      heartbeatIntervalMs: DEFAULT_HEARTBEAT_INTERVAL_MS,
    });
  });

  it('resolveModelConfig: options win over the environment', () => {
    const config = resolveModelConfig(
      { apiKey: 'sk-opt', baseURL: 'http://127.0.0.1:1/v1', defaultModel: 'opt-model', logPayloads: false },
      { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: 'http://other/v1', LOOPWRIGHT_MODEL: 'env-model', LOOPWRIGHT_LOG_PAYLOADS: '1' },
    );
    expect(config).toMatchObject({ apiKey: 'sk-opt', baseURL: 'http://127.0.0.1:1/v1', defaultModel: 'opt-model', logPayloads: false });
  });

  it('resolveModelConfig: defaults apply when nothing is set (empty values count as unset)', () => {
    const config = resolveModelConfig({}, { OPENAI_API_KEY: '', LOOPWRIGHT_MODEL: ' ' });
    expect(config.defaultModel).toBe(DEFAULT_MODEL);
    expect(config.baseURL).toBeUndefined();
    expect(config.logPayloads).toBe(false);
  });

  it('resolveModelConfig: no key for OpenAI itself is flagged; a compatible server gets a placeholder', () => {
    expect(resolveModelConfig({}, {}).missingApiKey).toBe(true);
    expect(resolveModelConfig({ baseURL: 'https://api.openai.com/v1' }, {}).missingApiKey).toBe(true);
    const local = resolveModelConfig({ baseURL: 'http://127.0.0.1:8080/v1' }, {});
    expect(local.missingApiKey).toBe(false);
    expect(local.apiKey).toBe(PLACEHOLDER_API_KEY);
  });

  it.each([
    [{ baseURL: 'not a url' }, 'baseURL (OPENAI_BASE_URL)'],
    [{ baseURL: 'ftp://host/v1' }, 'baseURL (OPENAI_BASE_URL)'],
    [{ heartbeatIntervalMs: 0 }, 'heartbeatIntervalMs'],
    [{ requestTimeoutMs: -1 }, 'requestTimeoutMs'],
    [{ maxReplyBytes: 0 }, 'maxReplyBytes (LOOPWRIGHT_MAX_REPLY_BYTES)'],
    [{ maxReplyBodyBytes: 1.5 }, 'maxReplyBodyBytes (LOOPWRIGHT_MAX_REPLY_BODY_BYTES)'],
  ])('resolveModelConfig: %j fails naming %s', (options, name) => {
    expect(() => resolveModelConfig(options, {})).toThrow(ModelConfigError);
    expect(() => resolveModelConfig(options, {})).toThrow(`Invalid model setting ${name}`);
  });
});

test('resolveModelConfig: a base URL with credentials is refused without echoing them', () => {
  let message = '';
  try {
    resolveModelConfig({}, { OPENAI_BASE_URL: 'http://alice:s3cretPass@models.example/v1' });
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message).toContain('OPENAI_BASE_URL');
  expect(message).toContain('must not hold credentials');
  expect(message).not.toContain('s3cretPass');
  expect(message).not.toContain('alice');
});

describe('resolveModelConfig: reply limits and secrets', () => {
  it('resolveModelConfig: the reply limit is 1 MB and the body limit four times it, unless set', () => {
    expect(resolveModelConfig({}, {})).toMatchObject({ maxReplyBytes: DEFAULT_MAX_REPLY_BYTES, maxReplyBodyBytes: DEFAULT_MAX_REPLY_BODY_BYTES });
    expect(resolveModelConfig({}, { LOOPWRIGHT_MAX_REPLY_BYTES: '2000' })).toMatchObject({ maxReplyBytes: 2000, maxReplyBodyBytes: 8000 });
    expect(resolveModelConfig({}, { LOOPWRIGHT_MAX_REPLY_BYTES: '2000', LOOPWRIGHT_MAX_REPLY_BODY_BYTES: '3000' })).toMatchObject({ maxReplyBytes: 2000, maxReplyBodyBytes: 3000 });
    expect(resolveModelConfig({ maxReplyBodyBytes: 5 }, { LOOPWRIGHT_MAX_REPLY_BODY_BYTES: '3000' }).maxReplyBodyBytes).toBe(5);
  });

  it('resolveModelConfig: a limit in the environment that is not a number fails naming it', () => {
    expect(() => resolveModelConfig({}, { LOOPWRIGHT_MAX_REPLY_BODY_BYTES: 'lots' })).toThrow('Invalid model setting maxReplyBodyBytes (LOOPWRIGHT_MAX_REPLY_BODY_BYTES)');
  });

  it('resolveModelConfig: the key is the secret to redact; the placeholder is none', () => {
    expect(resolveModelConfig({ apiKey: 'sk-real-key' }, {}).secrets).toEqual(['sk-real-key']);
    expect(resolveModelConfig({ baseURL: 'http://127.0.0.1:8080/v1' }, {}).secrets).toEqual([]);
  });
});
