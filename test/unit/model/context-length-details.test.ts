import { ApplicationFailure } from '@temporalio/common';
import { APIError, BadRequestError } from 'openai';
import { classifyModelError, contextSizes } from '../../../activities/model/classify-error';
import { MODEL_BAD_REQUEST, MODEL_CONTEXT_LENGTH_EXCEEDED, type ModelFailureDetails } from '../../../common/model-call';

function classify(error: unknown): { failure: ApplicationFailure; details: ModelFailureDetails } {
  const failure = classifyModelError(error, { model: 'local-model', baseURL: 'http://127.0.0.1:8080/v1' });
  expect(failure).toBeInstanceOf(ApplicationFailure);
  const app = failure as ApplicationFailure;
  return { failure: app, details: app.details![0] as ModelFailureDetails };
}

describe('context-length failure details', () => {
  it('context length: llama.cpp body gives n_ctx and n_prompt_tokens', () => {
    const error = APIError.generate(
      400,
      { error: { code: 400, message: 'the request exceeds the available context size, try increasing it', type: 'exceed_context_size_error', n_prompt_tokens: 9123, n_ctx: 8192 } },
      undefined,
      new Headers(),
    );
    expect(error).toBeInstanceOf(BadRequestError);
    const { failure, details } = classify(error);
    expect(failure.type).toBe(MODEL_CONTEXT_LENGTH_EXCEEDED);
    expect(failure.nonRetryable).toBe(true);
    expect(details.contextWindow).toBe(8192);
    expect(details.promptTokens).toBe(9123);
    expect(failure.message).toContain('window 8192 tokens, prompt 9123 tokens');
    expect(failure.message).toContain("compacts the model's view of the transcript and retries by itself");
    expect(failure.message).toContain('lower output limit');
  });

  it('context length: OpenAI wording gives the window and the tokens the messages resulted in', () => {
    const error = APIError.generate(
      400,
      {
        error: {
          message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.",
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
        },
      },
      undefined,
      new Headers({ 'x-request-id': 'req_1' }),
    );
    const { failure, details } = classify(error);
    expect(failure.type).toBe(MODEL_CONTEXT_LENGTH_EXCEEDED);
    expect(details).toMatchObject({ status: 400, contextWindow: 8192, promptTokens: 9000, requestId: 'req_1' });
  });

  it('context length: "you requested N tokens" counts too, preferring the messages part when it is given', () => {
    expect(contextSizes({}, ["This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."])).toEqual({ contextWindow: 4096, promptTokens: 5000 });
    expect(contextSizes({}, ["This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion)."])).toEqual({
      contextWindow: 4096,
      promptTokens: 4000,
    });
  });

  it('context length: nothing said means null sizes, and the hint has no sizes', () => {
    const { failure, details } = classify(APIError.generate(413, { error: { message: 'Too many tokens in the prompt' } }, undefined, new Headers()));
    expect(failure.type).toBe(MODEL_CONTEXT_LENGTH_EXCEEDED);
    expect(details.contextWindow).toBeNull();
    expect(details.promptTokens).toBeNull();
    expect(failure.message).not.toMatch(/window \d/);
  });

  it('context length: other 400s carry no sizes', () => {
    const { failure, details } = classify(APIError.generate(400, { error: { message: 'unknown parameter', n_ctx: 8192 } }, undefined, new Headers()));
    expect(failure.type).toBe(MODEL_BAD_REQUEST);
    expect('contextWindow' in details).toBe(false);
  });
});
