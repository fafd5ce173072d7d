/**
 * The event routes: a session's events as server-sent AG-UI events (`GET /api/sessions/:id/events`,
 * resumable by event id), and AG-UI's HTTP agent endpoint (`POST /api/agui`), which sends a thread's
 * last user message and answers with that turn's events, so that an unmodified AG-UI client
 * (`@ag-ui/client`'s HttpAgent) drives a session.
 */
import { EventType } from '@ag-ui/core';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { WorkflowNotFoundError } from '@temporalio/client';
import { ApiError } from '../api-error';
import { decodeCursor, type StreamCursor } from '../events/cursor';
import { isBusy } from '../events/projector';
import { SseStream } from '../events/sse-stream';
import type { Watcher } from '../events/session-feed';
import { errorResponses, eventStreamDescription, idParams, looseObject, startSessionBody } from '../schemas';
import type { ServeContext } from '../serve-context';
import { startTurn } from '../start-turn';
import { sessionSettings } from './session-routes';

const SSE_RESPONSE = { 200: { description: eventStreamDescription, content: { 'text/event-stream': { schema: { type: 'string' } } } } };

export function registerEventRoutes(app: FastifyInstance, context: ServeContext): void {
  app.get<{ Params: { id: string }; Querystring: { lastEventId?: string } }>(
    '/api/sessions/:id/events',
    {
      schema: {
        tags: ['events'],
        summary: "The session's events as server-sent AG-UI events, from the running turn (or the next), or after Last-Event-ID",
        params: idParams,
        querystring: { type: 'object', properties: { lastEventId: { type: 'string', maxLength: 16384, description: 'As the Last-Event-ID header, for clients that cannot set it' } } },
        response: { ...SSE_RESPONSE, 204: { description: 'The session is over: nothing more will come', type: 'null' }, ...errorResponses(400, 404, 406) },
      },
    },
    async (request, reply) => {
      const accept = request.headers.accept;
      if (accept && !/text\/event-stream|\*\/\*|text\/\*/.test(accept)) throw new ApiError(406, 'NotAcceptable', 'This route answers text/event-stream only');
      const { id } = request.params;
      const header = request.headers['last-event-id'];
      const lastId = (Array.isArray(header) ? header[0] : header) ?? request.query.lastEventId;
      const handle = context.loopwright.session(id);
      const state = await handle.state();
      let cursor: StreamCursor;
      if (lastId !== undefined && lastId !== '') {
        const decoded = decodeCursor(lastId);
        if (!decoded) throw new ApiError(400, 'BadRequest', 'Last-Event-ID is not an event id of this API', 'lastEventId');
        cursor = decoded;
      } else {
        if (state.status === 'completed' || state.status === 'failed') return reply.code(204).send();
        cursor = { kind: 'wait', t: isBusy(state) ? state.turn : state.turn + 1 };
      }
      stream(reply, context, id, cursor, () => false);
      return reply;
    },
  );

  app.post<{ Body: AgentInput }>(
    '/api/agui',
    {
      schema: {
        tags: ['events'],
        summary: "AG-UI's HTTP agent endpoint: send the last user message of a thread (a session) and stream that turn's events",
        body: {
          type: 'object',
          required: ['threadId', 'messages'],
          properties: {
            threadId: { type: 'string', minLength: 1, maxLength: 200, description: 'The session (its workflow id); a new one is started from forwardedProps when none has this id' },
            runId: { type: 'string' },
            messages: { type: 'array', items: looseObject('AG-UI Message'), maxItems: 10_000 },
            tools: { type: 'array' },
            context: { type: 'array' },
            state: {},
            forwardedProps: { ...startSessionBody, required: [], description: 'For a new thread: the session settings (bundlePath, agentId, …)' },
          },
        },
        response: { ...SSE_RESPONSE, ...errorResponses(400, 404, 409, 413) },
      },
    },
    async (request, reply) => {
      const { threadId, messages, forwardedProps } = request.body;
      const last = [...messages].reverse().find((m) => m.role === 'user');
      const text = last ? contentText(last.content) : '';
      if (text.trim() === '') throw new ApiError(400, 'BadRequest', 'messages has no user message with text to send', 'messages');
      const handle = context.loopwright.session(threadId);
      try {
        await handle.workflow.describe();
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        const props = forwardedProps && typeof forwardedProps === 'object' ? (forwardedProps as Record<string, unknown>) : {};
        if (props.bundlePath === undefined || props.agentId === undefined) {
          throw new ApiError(404, 'NotFound', `No session ${threadId}; to start one, pass forwardedProps: {bundlePath, agentId, …settings}`, 'threadId');
        }
        const { settings } = sessionSettings(props);
        await context.loopwright.start({ ...settings, workflowId: threadId });
      }
      const turn = await startTurn(handle, context.client, text);
      context.feeds.wake(threadId);
      // The turn's run, and the end of the answer with it.
      stream(reply, context, threadId, { kind: 'wait', t: turn }, (type) => type === EventType.RUN_FINISHED || type === EventType.RUN_ERROR);
      return reply;
    },
  );
}

/** What `POST /api/agui` reads of AG-UI's RunAgentInput. */
interface AgentInput {
  threadId: string;
  runId?: string;
  messages: { role?: string; content?: unknown }[];
  forwardedProps?: unknown;
}

/** A message's text: a string, or the text parts of a list of parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (part && typeof part === 'object' && (part as { type?: unknown }).type === 'text' ? String((part as { text?: unknown }).text ?? '') : '')).join('');
}

/** Stream a session's events from `cursor` on this reply, until the client leaves, `last(type)` says so, or the session is over. */
function stream(reply: FastifyReply, context: ServeContext, sessionId: string, cursor: StreamCursor, last: (type: string) => boolean): void {
  reply.hijack();
  const feed = context.feeds.feed(sessionId);
  const watcher: Watcher = {
    cursor,
    send(events, frames, joined) {
      const end = events.findIndex((e) => last(e.event.type));
      if (end < 0) return sse.write(joined);
      // The answer ends with its run: nothing of a later turn goes out on it.
      if (sse.write(frames.slice(0, end + 1).join(''))) sse.end();
      return false;
    },
    finish() {
      sse.end();
    },
  };
  const sse = new SseStream(reply.raw, context.streamLimits, () => feed.remove(watcher));
  feed.add(watcher);
}
