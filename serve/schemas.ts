/**
 * JSON schemas of the API's requests and answers: Fastify checks requests with them and
 * @fastify/swagger writes the OpenAPI description from them. The session settings a client may
 * pass come from the settings table (common/settings/session-settings.ts), so the description names
 * every one with its documentation; the table's own checks run on them in the route.
 */
import { SESSION_SETTINGS } from '../common/settings/session-settings';

/** A JSON schema (as Fastify and OpenAPI take it). */
export type Schema = Record<string, unknown>;

export const errorSchema: Schema = {
  type: 'object',
  description: 'Every error answer',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['type', 'message'],
      properties: {
        type: {
          type: 'string',
          description: 'BadRequest, Unauthorized, Forbidden, NotFound, Conflict (or the session failure type, e.g. LoopwrightBusy), TooLarge, UnsupportedMediaType, ServerUnreachable, Internal, …',
        },
        message: { type: 'string' },
        field: { type: 'string', description: 'The field at fault, when one is' },
      },
    },
  },
};

/** Error answers every route may give. */
export const errorResponses = (...statuses: number[]): Record<number, Schema> => Object.fromEntries(statuses.map((status) => [status, { ...errorSchema, description: `Error ${status}` }]));

/** An object passed on as it is (its fields are documented where the client library defines them). */
export const looseObject = (description: string, properties: Record<string, Schema> = {}): Schema => ({ type: 'object', description, additionalProperties: true, properties });

export const okSchema: Schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };

export const idParams: Schema = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 1000, description: 'Workflow id of the session' } } };

/** The settings a client may give a new session: every setting of the table that Loopwright does not set itself. */
export const CLIENT_SETTINGS: readonly string[] = Object.entries(SESSION_SETTINGS)
  .filter(([, setting]) => !(setting as { internal?: true }).internal)
  .map(([name]) => name);

/** The settings Loopwright sets itself (refused from a client). */
export const INTERNAL_SETTINGS: readonly string[] = Object.entries(SESSION_SETTINGS)
  .filter(([, setting]) => (setting as { internal?: true }).internal)
  .map(([name]) => name);

/** The body of `POST /api/sessions`, and `forwardedProps` of `POST /api/agui` for a new session. */
export const startSessionBody: Schema = {
  type: 'object',
  description: 'A new session: any session setting a client may pass (checked by the settings table), and optionally its workflow id.',
  required: ['bundlePath', 'agentId'],
  properties: {
    workflowId: { type: 'string', minLength: 1, maxLength: 200, description: 'Workflow id (default loopwright-<agent>-<random>)' },
    ...Object.fromEntries(
      CLIENT_SETTINGS.map((name) => {
        const setting = SESSION_SETTINGS[name as keyof typeof SESSION_SETTINGS] as { doc: string; default?: unknown; defaultText?: string };
        const known = setting.default !== undefined ? ` Default: ${JSON.stringify(setting.default)}.` : setting.defaultText ? ` Default: ${setting.defaultText}.` : '';
        return [name, { description: `${setting.doc}${known}`, ...(name === 'bundlePath' || name === 'agentId' ? { type: 'string' } : {}) }];
      }),
    ),
  },
};

export const sessionSummarySchema: Schema = looseObject('One session as the list shows it (SessionSummary)', {
  workflowId: { type: 'string' },
  runId: { type: 'string' },
  workflowStatus: { type: 'string' },
  startTime: { type: 'string', format: 'date-time' },
  agent: { type: 'string' },
  bundle: { type: 'string' },
  status: { type: 'string' },
  turns: { type: 'integer' },
  totalTokens: { type: 'integer' },
});

export const sessionStateSchema: Schema = looseObject('The session state query (SessionState), with its id and the Web UI link', {
  id: { type: 'string' },
  webUiUrl: { type: 'string' },
  status: { type: 'string' },
  turn: { type: 'integer' },
  iteration: { type: 'integer' },
  maxIterations: { type: 'integer' },
  messageCount: { type: 'integer' },
  pendingApprovals: { type: 'array', items: looseObject('PendingApproval') },
  usage: looseObject('TokenUsage'),
});

export const turnResultSchema: Schema = looseObject('A finished turn (TurnResult)', {
  turn: { type: 'integer' },
  success: { type: 'boolean' },
  status: { type: 'string' },
  iterations: { type: 'integer' },
  response: { type: ['string', 'null'] },
  messageRange: { type: 'object', properties: { from: { type: 'integer' }, to: { type: 'integer' } } },
});

export const eventStreamDescription = 'Server-sent events: one AG-UI event (@ag-ui/core) per message, each with an `id:` to resume from (Last-Event-ID header or lastEventId query). See serve/API.md.';
