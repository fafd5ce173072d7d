/**
 * JSON schemas of the eval routes (serve/routes/eval-routes.ts), from the report's types
 * (common/eval/eval-types.ts) and the page's view of a case (common/eval/eval-view.ts). Every
 * object lets further fields through, so a field the report gains later still reaches the client.
 */
import { DIVERGENCE_RULES, UNRECORDED_APPROVALS } from '../common/eval/eval-script';
import { MAX_EVAL_CASES } from '../common/eval/eval-types';
import type { Schema } from './schemas';

/** An object with these fields typed (the `required` ones always there), open to more. */
function object(description: string, properties: Record<string, Schema>, required: string[] = []): Schema {
  return { type: 'object', description, additionalProperties: true, ...(required.length ? { required } : {}), properties };
}

const int: Schema = { type: 'integer' };
const str: Schema = { type: 'string' };
const bool: Schema = { type: 'boolean' };
const num: Schema = { type: 'number' };

const usage = object('TokenUsage', { promptTokens: int, completionTokens: int, totalTokens: int }, ['promptTokens', 'completionTokens', 'totalTokens']);

const failedItem = object('A checklist item the document failed', { item: str, section: str, note: str }, ['item']);

const verification = object("The turn's document check", { status: str, passed: int, failed: int, attempts: int, failedItems: { type: 'array', items: failedItem } }, ['status', 'passed', 'failed']);

const sideFigures = object(
  "One side's figures for the whole session (SideFigures)",
  {
    status: { type: 'string', description: "The last turn's status" },
    turns: int,
    iterations: int,
    usage,
    cost: num,
    latencyMs: num,
    checks: object('Turns whose document check passed and failed', { verified: int, failed: int }),
    headless: str,
  },
  ['status', 'turns', 'iterations', 'usage'],
);

const turnFigures = object(
  "One side's figures for a turn (TurnFigures)",
  { status: str, success: bool, iterations: int, usage, response: { type: ['string', 'null'] }, error: str, cost: num, verification, latencyMs: num, calls: int },
  ['status', 'iterations', 'usage', 'calls'],
);

const step = object('A call of a trajectory', { tool: str, arguments: str }, ['tool', 'arguments']);

const difference = object(
  'Where the trajectories first part: call `index` (0-based) of the turn',
  {
    index: int,
    kind: { type: 'string', enum: ['tool', 'arguments', 'missing', 'extra'], description: 'tool: another tool; arguments: other arguments; missing: a recorded step skipped; extra: a step added' },
    baseline: step,
    candidate: step,
    turn: int,
  },
  ['index', 'kind'],
);

const trajectory = object('The tool-call trajectory compared with the recording', { same: bool, firstDifference: difference }, ['same']);

const divergedCall = object('A call of the candidate that matches no recorded call of its turn', { tool: str, arguments: str, action: { type: 'string', enum: ['run', 'stub', 'fail'] }, turn: int }, [
  'tool',
  'arguments',
  'action',
]);

const replay = object(
  "How the candidate's calls were answered",
  { answered: int, ran: int, diverged: int, divergedCalls: { type: 'array', items: divergedCall }, approvalsAsRecorded: int, approvalsByRule: int },
  ['answered', 'ran', 'diverged', 'divergedCalls'],
);

const source = object('Where the recording came from: a session (workflowId) or a history file (file)', { workflowId: str, file: str });

const turnScore = {
  message: { type: 'string', description: "The user's message, cut to 120 characters" },
  turn: int,
  baseline: turnFigures,
  candidate: turnFigures,
  statusChanged: bool,
  trajectory,
};

const caseFields = {
  index: { type: 'integer', description: 'Place of the case in the eval (0-based); its candidate session is `<eval id>-<index>`' },
  name: str,
  source,
  candidateWorkflowId: str,
  error: { type: 'string', description: 'Why the case could not be replayed or scored' },
  baseline: sideFigures,
  candidate: sideFigures,
  statusChanged: bool,
  trajectory,
  replay,
  scorers: { type: 'array', items: object('A custom scorer’s verdict', { name: str, value: num, passed: bool, note: str, error: str }, ['name']) },
  workspace: object('The scratch copy the candidate ran in', { path: str, files: int, bytes: int }),
  warnings: { type: 'array', items: str },
};

const brokenRule = object('A rule of failOn the case broke', { rule: str, message: str }, ['rule', 'message']);

const caseReport = object(
  'One case of the report (EvalCaseReport), with the rules of failOn it broke',
  {
    ...caseFields,
    turns: { type: 'array', items: object('One turn: the baseline beside the candidate (TurnScore)', turnScore, ['turn', 'baseline', 'statusChanged', 'trajectory']) },
    broken: { type: 'array', items: brokenRule },
  },
  ['index', 'name', 'source', 'candidateWorkflowId', 'turns', 'statusChanged', 'trajectory', 'replay'],
);

const counts = {
  started: int,
  scored: int,
  errors: int,
  statusChanged: int,
  trajectoryChanged: int,
  baselineTokens: int,
  candidateTokens: int,
  total: int,
  reportPath: str,
};

/** `GET /api/evals`. */
export const evalListSchema: Schema = {
  type: 'object',
  required: ['evals'],
  properties: {
    evals: {
      type: 'array',
      items: object(
        'One eval',
        {
          id: str,
          status: { type: 'string', description: 'RUNNING, COMPLETED, FAILED, TERMINATED, …' },
          startTime: { type: 'string', format: 'date-time' },
          closeTime: { type: 'string', format: 'date-time' },
        },
        ['id', 'status', 'startTime'],
      ),
    },
  },
};

/** `GET /api/evals/:id`. */
export const evalOverviewSchema: Schema = object(
  'One eval: its counters while it runs, its summary and report once it completed',
  {
    id: str,
    status: str,
    webUiUrl: str,
    startTime: { type: 'string', format: 'date-time' },
    closeTime: { type: 'string', format: 'date-time' },
    state: object('EvalState, while it runs', { ...counts, running: int, phase: str, run: int }),
    summary: object('EvalSummary, once it completed', { ...counts, reportCases: int, cancelled: bool, runs: int }),
    report: object(
      'The report the eval wrote (EvalReport), each case with the rules of failOn it broke',
      {
        evalId: str,
        candidate: object('What the candidate changed (model, settings, bundle, project)', {}),
        replay: object('The replay rules (onDivergence, approvals)', {}),
        total: int,
        failOn: { type: 'array', items: str },
        failed: { type: 'integer', description: 'Cases that broke a rule of failOn (or could not be replayed)' },
        cases: { type: 'array', items: caseReport },
      },
      ['evalId', 'total', 'cases', 'failOn', 'failed'],
    ),
    problem: { type: 'string', description: 'Why there is no report to show (running, failed, the file not on this machine)' },
  },
  ['id', 'status'],
);

const transcriptCall = object(
  'A tool call of a transcript',
  {
    index: int,
    iteration: int,
    tool: str,
    arguments: str,
    result: { type: 'string', description: 'The result as JSON, where history holds it (a call answered from the recording has none of its own)' },
    ok: bool,
    approval: object('The decision on a call that waited for approval', { approved: bool, reason: str }, ['approved']),
    diverged: { type: 'string', enum: ['run', 'stub', 'fail'], description: 'The call is not in the recording, and the eval ran it, stubbed it or failed it' },
  },
  ['index', 'iteration', 'tool', 'arguments'],
);

const transcriptTurn = object(
  "One side of a turn: the user's message, the tool calls and how it ended",
  { message: str, calls: { type: 'array', items: transcriptCall }, response: { type: ['string', 'null'] }, status: str, error: str, verification },
  ['message', 'calls', 'response', 'status'],
);

const turnDifference = object(
  'A difference to mark',
  {
    kind: { type: 'string', enum: ['tool', 'arguments', 'missing', 'extra', 'diverged', 'status', 'check', 'tokens', 'cost', 'not-reached'] },
    text: str,
    index: { type: 'integer', description: 'The call it is about (0-based in the turn)' },
  },
  ['kind', 'text'],
);

/** `GET /api/evals/:id/cases/:index`. */
export const evalCaseSchema: Schema = object(
  "One case of an eval: the report's entry, each turn with both transcripts and the differences to mark",
  {
    ...caseFields,
    evalId: str,
    turns: {
      type: 'array',
      items: object(
        'One turn: its scores from the report, the differences, and both transcripts',
        {
          ...turnScore,
          differences: { type: 'array', items: turnDifference },
          transcripts: object('The recording (baseline) and the candidate', { baseline: transcriptTurn, candidate: transcriptTurn }),
        },
        ['turn', 'baseline', 'statusChanged', 'trajectory', 'differences', 'transcripts'],
      ),
    },
    problems: { type: 'array', items: str, description: 'Transcripts that could not be read' },
  },
  ['evalId', 'index', 'name', 'candidateWorkflowId', 'turns', 'problems'],
);

/** The body of `POST /api/evals`. */
export const startEvalBody: Schema = {
  type: 'object',
  description: 'An eval of recorded sessions on this server against a candidate model (the rest is each recording’s)',
  required: ['sessions'],
  properties: {
    sessions: { type: 'array', minItems: 1, maxItems: MAX_EVAL_CASES, items: { type: 'string', minLength: 1, maxLength: 1000 }, description: 'Workflow ids of recorded sessions' },
    model: { type: 'string', minLength: 1, maxLength: 200, description: "The candidate's model (default: each recording's)" },
    maxIterations: { type: 'integer', minimum: 1, maximum: 1000 },
    onDivergence: { type: 'string', enum: [...DIVERGENCE_RULES], description: 'A call the recording has not: run it in the scratch copy (default), stub or fail it' },
    approveUnrecorded: { type: 'string', enum: [...UNRECORDED_APPROVALS], description: 'An approval the recording has not decided (default approve)' },
    concurrency: { type: 'integer', minimum: 1, maximum: 32 },
    workflowId: { type: 'string', minLength: 1, maxLength: 200, description: 'Id of the eval (default loopwright-eval-<time>)' },
  },
};

/** `failOn` of `GET /api/evals/:id`. */
export const failOnQuery: Schema = {
  type: 'object',
  properties: {
    failOn: { type: 'string', maxLength: 1000, description: 'Rules, comma-separated, as `loopwright eval --fail-on` takes them (status-changed, tokens>+20%, …): each case lists those it broke' },
  },
};
