/**
 * The session routes: start, list, read state and transcript pages, send a message (the turn runs
 * on; its events are on the stream), read a turn's result, and the session's controls (interrupt,
 * approve, deny, extend, budget, rewind, branch, end). Each is a call of the client library.
 */
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ChatMessage } from '../../common/messages';
import { sessionInputProblem } from '../../common/session-input-schema';
import { SESSION_SETTINGS } from '../../common/settings/session-settings';
import type { BudgetChange, SessionInput } from '../../common/session-types';
import { BAD_INPUT } from '../../common/failure-types';
import { SessionRejectedError } from '../../client/session-client';
import { findTurnEnd } from '../../client/turn-history';
import { ApiError } from '../api-error';
import { isBusy } from '../events/projector';
import { errorResponses, idParams, INTERNAL_SETTINGS, looseObject, okSchema, sessionStateSchema, sessionSummarySchema, startSessionBody, turnResultSchema } from '../schemas';
import { type ServeContext, webUiUrl } from '../serve-context';
import { startTurn } from '../start-turn';

/** Messages a transcript page holds at most, and about how many bytes. */
export const MAX_PAGE_MESSAGES = 500;
const MAX_PAGE_BYTES = 4 * 1024 * 1024;
const DEFAULT_PAGE_MESSAGES = 50;

type Id = { Params: { id: string } };

/** The settings of a new session from a client's body: known, not internal, checked by the settings table. */
export function sessionSettings(body: Record<string, unknown>): { settings: SessionInput; workflowId?: string } {
  const { workflowId, ...settings } = body;
  for (const name of Object.keys(settings)) {
    if (INTERNAL_SETTINGS.includes(name)) throw new ApiError(400, 'BadRequest', `${name} is set by Loopwright itself, not by a client`, name);
    if (!(name in SESSION_SETTINGS)) throw new ApiError(400, 'BadRequest', `unknown setting ${name}`, name);
  }
  if (typeof settings.bundlePath !== 'string' || !path.isAbsolute(settings.bundlePath)) throw new ApiError(400, 'BadRequest', 'bundlePath must be an absolute path', 'bundlePath');
  const problem = sessionInputProblem(settings);
  if (problem !== undefined) {
    const field = /^([\w.]+):/.exec(problem)?.[1];
    throw new ApiError(400, 'BadRequest', problem, field);
  }
  if (workflowId !== undefined && (typeof workflowId !== 'string' || workflowId.trim() === '')) throw new ApiError(400, 'BadRequest', 'workflowId must be a non-empty string', 'workflowId');
  return { settings: settings as unknown as SessionInput, ...(typeof workflowId === 'string' ? { workflowId } : {}) };
}

export function registerSessionRoutes(app: FastifyInstance, context: ServeContext): void {
  const { loopwright } = context;
  const session = (id: string) => loopwright.session(id);
  const tags = ['sessions'];

  app.post<{ Body: Record<string, unknown> }>(
    '/api/sessions',
    {
      schema: {
        tags,
        summary: 'Start a session',
        body: startSessionBody,
        response: { 201: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } }, ...errorResponses(400, 409) },
      },
    },
    async (request, reply) => {
      const { settings, workflowId } = sessionSettings(request.body);
      const started = await loopwright.start({ ...settings, ...(workflowId ? { workflowId } : {}) });
      return reply.code(201).send({ id: started.workflowId });
    },
  );

  app.get<{ Querystring: { agent?: string; status?: string; limit?: number } }>(
    '/api/sessions',
    {
      schema: {
        tags,
        summary: 'List sessions, newest first (by their search attributes)',
        querystring: {
          type: 'object',
          properties: { agent: { type: 'string', maxLength: 200 }, status: { type: 'string', maxLength: 50 }, limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
        },
        response: { 200: { type: 'object', required: ['sessions'], properties: { sessions: { type: 'array', items: sessionSummarySchema } } } },
      },
    },
    async (request) => {
      const { agent, status, limit } = request.query;
      const sessions = await loopwright.list({ ...(agent ? { agent } : {}), ...(status ? { status } : {}), limit: limit ?? 100 });
      return { sessions };
    },
  );

  app.get<Id>(
    '/api/sessions/:id',
    { schema: { tags, summary: "The session's state, with its Web UI link", params: idParams, response: { 200: sessionStateSchema, ...errorResponses(404) } } },
    async (request) => {
      const { id } = request.params;
      const state = await session(id).state();
      const link = webUiUrl(context, id);
      return { ...state, id, ...(link ? { webUiUrl: link } : {}) };
    },
  );

  app.get<Id & { Querystring: { from?: number; to?: number } }>(
    '/api/sessions/:id/messages',
    {
      schema: {
        tags,
        summary: 'A page of the transcript: messages [from, to) (default: the last 50)',
        params: idParams,
        querystring: { type: 'object', properties: { from: { type: 'integer', minimum: 0 }, to: { type: 'integer', minimum: 0 } } },
        response: {
          200: {
            type: 'object',
            required: ['from', 'to', 'messages'],
            properties: { from: { type: 'integer' }, to: { type: 'integer' }, messages: { type: 'array', items: looseObject('ChatMessage') } },
          },
          ...errorResponses(400, 404),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      const handle = session(id);
      const count = (await handle.state()).messageCount;
      let to = Math.min(request.query.to ?? count, count);
      const from = request.query.from ?? Math.max(0, to - DEFAULT_PAGE_MESSAGES);
      if (from > to) throw new ApiError(400, 'BadRequest', `from (${from}) is after to (${to}); the transcript has ${count} messages`, 'from');
      to = Math.min(to, from + MAX_PAGE_MESSAGES);
      const messages: ChatMessage[] = from < to ? await handle.messages(from, to) : [];
      // A page stays a few megabytes at most: it ends early, and `to` says where.
      let bytes = 0;
      let kept = 0;
      while (kept < messages.length && (kept === 0 || bytes + JSON.stringify(messages[kept]).length <= MAX_PAGE_BYTES)) bytes += JSON.stringify(messages[kept++]).length;
      return { from, to: from + kept, messages: messages.slice(0, kept) };
    },
  );

  app.post<Id & { Body: { text: string } }>(
    '/api/sessions/:id/messages',
    {
      schema: {
        tags,
        summary: 'Send a message: the turn starts and runs on (its events are on the stream); a question is answered this way too',
        params: idParams,
        body: { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string', minLength: 1 } } },
        response: { 202: { type: 'object', required: ['turn'], properties: { turn: { type: 'integer' } } }, ...errorResponses(400, 404, 409, 413) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (request.body.text.trim() === '') throw new ApiError(400, 'BadRequest', 'text must not be empty', 'text');
      const turn = await startTurn(session(id), context.client, request.body.text);
      context.feeds.wake(id);
      return reply.code(202).send({ turn });
    },
  );

  app.get<{ Params: { id: string; turn: number } }>(
    '/api/sessions/:id/turns/:turn',
    {
      schema: {
        tags,
        summary: "A turn's result once it ended (202 while it runs)",
        params: { type: 'object', required: ['id', 'turn'], properties: { id: { type: 'string', minLength: 1 }, turn: { type: 'integer', minimum: 1 } } },
        response: { 200: turnResultSchema, 202: { type: 'object', properties: { running: { type: 'boolean' } } }, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const { id, turn } = request.params;
      const handle = session(id);
      const state = await handle.state();
      if (turn > state.turn) throw new ApiError(404, 'NotFound', `Turn ${turn} has not started (the session is at turn ${state.turn})`);
      if (turn === state.turn && isBusy(state)) return reply.code(202).send({ running: true });
      try {
        return await handle.awaitTurn(turn);
      } catch (err) {
        if (!(err instanceof SessionRejectedError) || err.type !== BAD_INPUT) throw err;
        // Older than the turns a session keeps: read it from the history.
        const found = await findTurnEnd(context.client, handle.workflow, turn);
        if (!found) throw new ApiError(404, 'NotFound', `The result of turn ${turn} is no longer kept`);
        return found.ended.result;
      }
    },
  );

  const action = <B>(name: string, summary: string, body: Record<string, unknown>, response: Record<string, unknown>, run: (id: string, body: B) => Promise<unknown>, status = 200) => {
    app.post<Id & { Body: B }>(
      `/api/sessions/:id/${name}`,
      { schema: { tags, summary, params: idParams, body: { type: 'object', additionalProperties: false, ...body }, response: { [status]: response, ...errorResponses(400, 404, 409) } } },
      async (request, reply) => reply.code(status).send(await run(request.params.id, (request.body ?? {}) as B)),
    );
  };
  const text = { type: 'string', minLength: 1, maxLength: 10_000 };
  action<{ reason?: string }>('interrupt', 'Interrupt the running turn', { properties: { reason: text } }, okSchema, async (id, body) => {
    await session(id).interrupt(body.reason);
    return { ok: true };
  });
  action<{ callId?: string }>('approve', 'Let tool calls waiting for approval run (all, or one)', { properties: { callId: text } }, listOf('approved'), async (id, body) => ({
    approved: await session(id).approve(body.callId),
  }));
  action<{ callId?: string; reason?: string }>(
    'deny',
    'Refuse tool calls waiting for approval (all, or one); the model sees the reason',
    { properties: { callId: text, reason: text } },
    listOf('denied'),
    async (id, body) => ({
      denied: await session(id).deny(body.callId, body.reason),
    }),
  );
  action<{ iterations?: number }>(
    'extend',
    "Raise the running turn's iteration limit",
    { properties: { iterations: { type: 'integer', minimum: 1, maximum: 10_000 } } },
    { type: 'object', properties: { maxIterations: { type: 'integer' } } },
    async (id, body) => ({ maxIterations: await session(id).extend(body.iterations) }),
  );
  action<BudgetChange>(
    'budget',
    "Raise the session's token and cost budgets by these amounts",
    { properties: { turnTokens: { type: 'integer', minimum: 1 }, sessionTokens: { type: 'integer', minimum: 1 }, sessionCost: { type: 'number', exclusiveMinimum: 0 } } },
    looseObject('BudgetState'),
    (id, body) => session(id).budget(body),
  );
  action<{ turn: number }>(
    'rewind',
    'Take the session back to the end of a turn (Temporal reset); files written later stay',
    { required: ['turn'], properties: { turn: { type: 'integer', minimum: 1 } } },
    { type: 'object', properties: { runId: { type: 'string' } } },
    async (id, body) => {
      const rewound = await session(id).rewind(body.turn);
      context.feeds.rewound(id, body.turn);
      return rewound;
    },
  );
  action<{ turns: number; workflowId?: string }>(
    'branch',
    'Start a new session from the first turns of this one',
    { required: ['turns'], properties: { turns: { type: 'integer', minimum: 1 }, workflowId: { type: 'string', minLength: 1, maxLength: 200 } } },
    { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
    async (id, body) => ({ id: (await loopwright.branch(id, body.turns, body.workflowId ? { workflowId: body.workflowId } : {})).workflowId }),
    201,
  );
  action<Record<string, never>>('end', 'End the session after the current turn', { properties: {} }, okSchema, async (id) => {
    await session(id).end();
    return { ok: true };
  });
}

function listOf(name: string): Record<string, unknown> {
  return { type: 'object', required: [name], properties: { [name]: { type: 'array', items: { type: 'string' } } } };
}
