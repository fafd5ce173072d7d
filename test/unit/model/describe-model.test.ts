import { createServer, type IncomingMessage, type Server } from 'node:http';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { AddressInfo } from 'node:net';
import { createModelActivities } from '../../../activities/model/call-model';
import { createDescribeModel } from '../../../activities/model/describe-model';
import { resolveModelConfig } from '../../../activities/model/model-config';
import type { ModelDescription } from '../../../common/model-call';

/** Path -> JSON answer; anything else is a 404. */
type Routes = Record<string, unknown>;

interface Served {
  baseURL: string;
  seen: { path: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

async function serve(routes: Routes): Promise<Served> {
  const seen: Served['seen'] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const path = req.url ?? '';
    seen.push({ path, authorization: req.headers.authorization });
    if (path in routes) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(routes[path]));
    } else {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'not found' } }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function describeWith(baseURL: string | undefined, model = 'qwen-7b', apiKey?: string): Promise<ModelDescription> {
  const { describeModel } = createModelActivities({ env: {}, ...(baseURL ? { baseURL } : {}), ...(apiKey ? { apiKey } : {}), defaultModel: 'default-model' });
  return describeModel({ model });
}

let server: Served | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('describeModel', () => {
  it("describeModel: llama.cpp's /props answers first (default_generation_settings.n_ctx), with the key as Bearer", async () => {
    server = await serve({ '/props': { default_generation_settings: { n_ctx: 16384 }, total_slots: 1 }, '/v1/models': { data: [{ id: 'qwen-7b', context_length: 999 }] } });
    const description = await describeWith(server.baseURL, 'qwen-7b', 'sk-local-key');
    expect(description).toEqual({ model: 'qwen-7b', contextWindow: 16384, source: 'llama.cpp /props n_ctx' });
    expect(server.seen.map((s) => s.path)).toEqual(['/props']);
    expect(server.seen[0]!.authorization).toBe('Bearer sk-local-key');
  });

  it('describeModel: no key configured sends no Authorization header; a top-level n_ctx in /props counts', async () => {
    server = await serve({ '/props': { n_ctx: 4096 } });
    expect((await describeWith(server.baseURL)).contextWindow).toBe(4096);
    expect(server.seen[0]!.authorization).toBeUndefined();
  });

  it('describeModel: /props 404, then /v1/models/<model> 404, then the /v1/models entry whose id is the model', async () => {
    server = await serve({
      '/v1/models': {
        object: 'list',
        data: [
          { id: 'other', context_length: 2048 },
          { id: 'qwen-7b', context_length: 32768, max_model_len: 1 },
        ],
      },
    });
    const description = await describeWith(server.baseURL);
    expect(description).toEqual({ model: 'qwen-7b', contextWindow: 32768, source: '/v1/models context_length' });
    expect(server.seen.map((s) => s.path)).toEqual(['/props', '/v1/models/qwen-7b', '/v1/models']);
  });

  it('describeModel: the one-model endpoint, and meta.n_ctx_train only when nothing better is there', async () => {
    server = await serve({ '/v1/models/qwen-7b': { id: 'qwen-7b', max_model_len: 8192 } });
    expect(await describeWith(server.baseURL)).toEqual({ model: 'qwen-7b', contextWindow: 8192, source: '/v1/models/{model} max_model_len' });
    await server.close();
    // llama.cpp's list: one entry (another name), only the trained length.
    server = await serve({ '/v1/models': { data: [{ id: 'model.gguf', meta: { n_ctx_train: 131072, n_params: 7 } }] } });
    expect(await describeWith(server.baseURL)).toEqual({ model: 'qwen-7b', contextWindow: 131072, source: '/v1/models meta.n_ctx_train' });
  });

  it('describeModel: a model named with its provider (responses:, openai:) is looked up by its own name', async () => {
    server = await serve({ '/v1/models/qwen-7b': { id: 'qwen-7b', max_model_len: 8192 } });
    expect(await describeWith(server.baseURL, 'responses:qwen-7b')).toMatchObject({ model: 'responses:qwen-7b', contextWindow: 8192 });
    expect(await describeWith(server.baseURL, 'openai:qwen-7b')).toMatchObject({ contextWindow: 8192 });
  });

  it('describeModel: a server that says nothing gives null and says so', async () => {
    server = await serve({ '/v1/models': { data: [{ id: 'a' }, { id: 'b', context_length: 'big' }] } });
    const description = await describeWith(server.baseURL, 'b');
    expect(description).toEqual({ model: 'b', contextWindow: null, source: 'the server does not say' });
  });

  it('describeModel: a server that is down gives null without throwing', async () => {
    const down = await serve({});
    const baseURL = down.baseURL;
    await down.close();
    const description = await describeWith(baseURL);
    expect(description.contextWindow).toBeNull();
    expect(description.model).toBe('qwen-7b');
    expect(description.source).toContain('did not answer');
  });

  it('describeModel: a server that never answers times out per request, without throwing', async () => {
    const hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = hanging.address() as AddressInfo;
      const config = resolveModelConfig({ baseURL: `http://127.0.0.1:${port}/v1`, defaultModel: 'm' }, {});
      const started = Date.now();
      const description = await createDescribeModel(config, 100)({});
      expect(description).toEqual({ model: 'm', contextWindow: null, source: 'the server did not answer (no answer in 100 ms)' });
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });

  it('describeModel: inside an activity it beats every second while the server is slow, and stops when it has its answer', async () => {
    // The first GET (/props) takes 1.3 s; the two after it answer at once.
    let requests = 0;
    const slow = createServer((req, res) => {
      requests += 1;
      setTimeout(
        () => {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end('{}');
        },
        requests === 1 ? 1_300 : 0,
      );
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = slow.address() as AddressInfo;
      const config = resolveModelConfig({ baseURL: `http://127.0.0.1:${port}/v1`, defaultModel: 'm' }, {});
      const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 2_000 }, { logger: new DefaultLogger('ERROR', () => undefined) });
      let beats = 0;
      env.on('heartbeat', () => (beats += 1));
      const description: ModelDescription = await env.run(createDescribeModel(config, 5_000), {});
      expect(description.contextWindow).toBeNull();
      expect(requests).toBe(3);
      // One at once and one a second later, at least (the first GET alone takes 1.3 s).
      expect(beats).toBeGreaterThanOrEqual(2);
      const done = beats;
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expect(beats).toBe(done);
    } finally {
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });

  it("describeModel: OpenAI's own API is not asked", async () => {
    const description = await describeWith(undefined, 'gpt-4o', 'sk-test');
    expect(description).toEqual({ model: 'gpt-4o', contextWindow: null, source: 'OpenAI does not report it' });
    expect((await describeWith('https://api.openai.com/v1', 'gpt-4o', 'sk-test')).source).toBe('OpenAI does not report it');
  });

  it('describeModel: without a model in the input, the configured default is described', async () => {
    server = await serve({ '/props': { n_ctx: 1024 } });
    const { describeModel } = createModelActivities({ env: {}, baseURL: server.baseURL, defaultModel: 'default-model' });
    expect(await describeModel({})).toMatchObject({ model: 'default-model', contextWindow: 1024 });
  });
});
