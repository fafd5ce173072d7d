/**
 * One eval in the app (`#/eval/<id>`, one recorded session of it `#/eval/<id>/<index>`): its
 * figures and a row per recorded session (GET /api/evals/:id), and for the session chosen each
 * turn with the recording (baseline) and the candidate side by side (GET /api/evals/:id/cases/:index),
 * the differences the server names marked where they are: a call with another tool or other
 * arguments, a recorded step the candidate skipped (a gap on its side) or one it added, a call not
 * in the recording, a changed status, a failed document check, tokens and cost. Every text from a
 * transcript goes in as text, never as markup (dom.js).
 */
import { ApiError, get } from './api.js';
import { byId, count, h, prettyJson, replace } from './dom.js';

/** What each kind of difference is called where it is marked. */
const KIND_LABELS = {
  tool: 'another tool',
  arguments: 'other arguments',
  missing: 'step skipped',
  extra: 'step added',
  diverged: 'not in the recording',
  status: 'status',
  check: 'check failed',
  tokens: 'tokens',
  cost: 'cost',
  'not-reached': 'not reached',
};

/** What a call marked on one side says, by the trajectory's kind. */
const CALL_NOTES = {
  baseline: { tool: 'the candidate called another tool here', arguments: 'the candidate called it with other arguments', missing: 'skipped by the candidate' },
  candidate: { tool: 'another tool than the recording', arguments: 'other arguments than the recording', extra: 'not in the recording: added' },
};

/** What the eval did with a call not in the recording. */
const DIVERGED_NOTES = { run: 'ran in the scratch copy', stub: 'answered with a stub', fail: 'answered with an error' };

/** Path of an eval's resource. */
function evalPath(/** @type {string} */ id, /** @type {string | undefined} */ rest) {
  return `/evals/${encodeURIComponent(id)}${rest ? `/${rest}` : ''}`;
}

/** The app's address of an eval, or of one of its sessions. */
export function evalHash(/** @type {string} */ id, /** @type {number | undefined} */ index) {
  return `#/eval/${encodeURIComponent(id)}${index !== undefined ? `/${index}` : ''}`;
}

export class EvalView {
  constructor() {
    this.section = byId('eval');
    this.title = byId('eval-title');
    this.meta = byId('eval-meta');
    this.figures = byId('eval-figures');
    this.cases = byId('eval-cases');
    this.detail = byId('eval-case');
    this.error = byId('eval-error');
    /** @type {string | undefined} */
    this.id = undefined;
    /** @type {number | undefined} */
    this.index = undefined;
    /** Answers to a page left since are dropped. */
    this.generation = 0;
  }

  /**
   * Show eval `id`, and its session `index` when given.
   * @param {string} id
   * @param {number | undefined} index
   */
  async open(id, index) {
    this.section.hidden = false;
    const generation = ++this.generation;
    if (this.id !== id) {
      this.id = id;
      this.index = undefined;
      this.title.textContent = `Eval ${id}`;
      replace(this.meta);
      replace(this.figures);
      replace(this.cases);
      replace(this.detail);
      this.showError(undefined);
      try {
        const overview = await get(evalPath(id));
        if (generation !== this.generation) return;
        this.showOverview(overview);
      } catch (err) {
        if (generation === this.generation) this.showError(`This eval cannot be shown: ${err instanceof ApiError ? err.message : String(err)}`);
        return;
      }
    }
    this.markCase(index);
    if (index === this.index) return;
    this.index = index;
    replace(this.detail);
    if (index === undefined) return;
    this.detail.append(h('p', { class: 'hint' }, 'Reading both transcripts…'));
    try {
      const view = await get(evalPath(id, `cases/${index}`));
      if (generation !== this.generation) return;
      replace(this.detail, ...caseDetail(view));
    } catch (err) {
      if (generation === this.generation) replace(this.detail, h('p', { class: 'error', role: 'alert' }, `This session cannot be shown: ${err instanceof ApiError ? err.message : String(err)}`));
    }
  }

  close() {
    this.generation += 1;
    this.id = undefined;
    this.index = undefined;
    this.section.hidden = true;
  }

  /** @param {string | undefined} message */
  showError(message) {
    this.error.hidden = !message;
    this.error.textContent = message ?? '';
  }

  /** @param {any} overview GET /api/evals/:id */
  showOverview(overview) {
    const report = overview.report;
    const candidate = report ? Object.entries(report.candidate ?? {}).map(([k, v]) => `${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`) : [];
    replace(
      this.meta,
      h('span', { class: `badge ${String(overview.status).toLowerCase()}` }, String(overview.status).toLowerCase()),
      ' ',
      candidate.length ? `candidate: ${candidate.join(', ')}` : 'candidate: the recordings’ own settings',
      overview.webUiUrl ? ' · ' : '',
      overview.webUiUrl ? h('a', { href: overview.webUiUrl, target: '_blank', rel: 'noopener noreferrer' }, 'Open in the Temporal Web UI') : '',
    );
    const counts = overview.summary ?? overview.state;
    if (counts) {
      replace(
        this.figures,
        ...figure('recordings', `${counts.total}`),
        ...figure('scored', `${counts.scored}`),
        ...figure('changed', `${Math.max(counts.statusChanged, counts.trajectoryChanged)}`),
        ...figure('errors', `${counts.errors}`),
        ...figure('tokens', `${count(counts.baselineTokens)} → ${count(counts.candidateTokens)}`),
      );
    }
    if (overview.problem) this.showError(overview.problem);
    if (!report) return;
    const head = h('tr', {}, ...['#', 'recording', 'turns', 'status', 'tokens', 'cost', 'trajectory', 'calls'].map((t) => h('th', { scope: 'col' }, t)));
    const rows = report.cases.map((/** @type {any} */ c) => caseRow(overview.id, c));
    replace(this.cases, h('table', { class: 'eval-table', 'aria-label': 'Recorded sessions' }, h('thead', {}, head), h('tbody', {}, ...rows)));
  }

  /** @param {number | undefined} index */
  markCase(index) {
    for (const row of this.cases.querySelectorAll('tr[data-case]')) {
      if (row instanceof HTMLElement && row.dataset.case === String(index)) row.setAttribute('aria-current', 'true');
      else row.removeAttribute('aria-current');
    }
  }
}

/** A term and its value for a `<dl>`. */
function figure(/** @type {string} */ term, /** @type {string} */ value) {
  return [h('dt', {}, term), h('dd', {}, value)];
}

/** `a → b` when they differ, else `a`. */
function change(/** @type {unknown} */ a, /** @type {unknown} */ b) {
  return a === b ? String(a) : `${a} → ${b}`;
}

/** @param {number | undefined} cost */
function money(cost) {
  return typeof cost === 'number' ? cost.toFixed(cost < 0.01 ? 6 : 4) : '–';
}

/** @param {number | undefined} ms */
function seconds(ms) {
  return typeof ms === 'number' ? `${(ms / 1000).toFixed(2)} s` : '–';
}

/** One row of the eval's table: a recorded session, the baseline beside the candidate. */
function caseRow(/** @type {string} */ id, /** @type {any} */ c) {
  const b = c.baseline;
  const n = c.candidate;
  const link = h('a', { href: evalHash(id, c.index), 'data-testid': 'eval-case-link' }, c.name);
  if (c.error || !b || !n)
    return h('tr', { dataset: { case: String(c.index) } }, h('td', {}, String(c.index + 1)), h('td', {}, link), h('td', { colspan: '6', class: 'error' }, c.error ?? 'not scored'));
  const calls = `${c.replay.answered} answered, ${c.replay.ran} ran${c.replay.diverged ? `, ${c.replay.diverged} diverged` : ''}`;
  return h(
    'tr',
    { dataset: { case: String(c.index) } },
    h('td', {}, String(c.index + 1)),
    h('td', {}, link),
    h('td', {}, change(b.turns, n.turns)),
    h('td', { class: b.status !== n.status ? 'changed' : undefined }, change(b.status, n.status)),
    h('td', {}, `${count(b.usage.totalTokens)} → ${count(n.usage.totalTokens)}`),
    h('td', {}, b.cost !== undefined || n.cost !== undefined ? `${money(b.cost)} → ${money(n.cost)}` : '–'),
    h('td', { class: c.trajectory.same ? undefined : 'changed' }, c.trajectory.same ? 'same' : `differs at turn ${c.trajectory.firstDifference.turn}`),
    h('td', {}, calls),
  );
}

/** A recorded session of the eval: its notes, then each turn side by side. */
function caseDetail(/** @type {any} */ view) {
  const notes = [...(view.error ? [`error: ${view.error}`] : []), ...view.problems, ...view.warnings.map((/** @type {string} */ w) => `note: ${w}`)];
  return [
    h('h2', { id: 'eval-case-title' }, `Session ${view.index + 1}: ${view.name}`),
    h('p', { class: 'hint' }, `candidate session ${view.candidateWorkflowId}`),
    notes.length ? h('ul', { class: 'eval-notes' }, ...notes.map((n) => h('li', {}, n))) : undefined,
    ...view.turns.map(turnView),
  ];
}

/** One turn: the user's message, the differences, and the two sides. */
function turnView(/** @type {any} */ turn) {
  const kinds = new Set(turn.differences.map((/** @type {any} */ d) => d.kind));
  const first = turn.trajectory.firstDifference;
  const diverged = turn.differences.filter((/** @type {any} */ d) => d.kind === 'diverged' && d.index !== undefined);
  const message = turn.transcripts.baseline?.message ?? turn.transcripts.candidate?.message ?? turn.message;
  return h(
    'article',
    { class: 'eval-turn', 'data-testid': 'eval-turn', 'aria-label': `Turn ${turn.turn}`, dataset: { turn: String(turn.turn) } },
    h('h3', {}, `Turn ${turn.turn}`),
    h('p', { class: 'eval-message', 'data-testid': 'eval-message' }, message),
    turn.differences.length
      ? h(
          'ul',
          { class: 'differences', 'aria-label': `Differences in turn ${turn.turn}` },
          ...turn.differences.map((/** @type {any} */ d) =>
            h('li', { 'data-testid': 'difference', dataset: { kind: d.kind } }, h('span', { class: 'kind' }, `${KIND_LABELS[/** @type {keyof KIND_LABELS} */ (d.kind)] ?? d.kind}:`), ' ', d.text),
          ),
        )
      : h('p', { class: 'same', 'data-testid': 'no-difference' }, 'No difference from the recording.'),
    h(
      'div',
      { class: 'sides' },
      side('baseline', 'Recording', turn.baseline, turn.transcripts.baseline, kinds, first, []),
      side('candidate', 'Candidate', turn.candidate, turn.transcripts.candidate, kinds, first, diverged),
    ),
  );
}

/**
 * One side of a turn: its figures (those that differ marked), its calls (the trajectory's first
 * difference and the calls not in the recording marked; a gap where the other side has a step this
 * one has not) and its answer.
 * @param {'baseline' | 'candidate'} which
 * @param {string} label
 * @param {any} figures the turn's figures on this side (the report's)
 * @param {any} transcript
 * @param {Set<string>} kinds the kinds of difference of the turn
 * @param {any} first the trajectory's first difference
 * @param {any[]} diverged the turn's diverged calls with their index
 */
function side(which, label, figures, transcript, kinds, first, diverged) {
  const mark = (/** @type {string} */ kind) => (kinds.has(kind) && which === 'candidate' ? kind : undefined);
  const figureList = figures
    ? h(
        'dl',
        { class: 'stats eval-figures', 'aria-label': `${label} figures` },
        ...marked('status', figures.status, mark('status')),
        ...marked('iterations', String(figures.iterations)),
        ...marked('tokens', count(figures.usage.totalTokens), mark('tokens')),
        ...(figures.cost !== undefined ? marked('cost', money(figures.cost), mark('cost')) : []),
        ...(figures.latencyMs !== undefined ? marked('latency', seconds(figures.latencyMs)) : []),
        ...(figures.verification ? marked('check', `${figures.verification.status} (${figures.verification.failed} failed)`, mark('check')) : []),
      )
    : h('p', { class: 'hint' }, 'The candidate never reached this turn.');
  if (!transcript)
    return h(
      'section',
      { class: `side ${which}`, 'data-side': which, 'aria-label': label },
      h('h4', {}, label),
      figureList,
      figures ? h('p', { class: 'hint' }, 'Transcript not available.') : undefined,
    );
  /** @type {HTMLElement[]} */
  const calls = transcript.calls.map((/** @type {any} */ call) => callView(which, call, first, diverged));
  // A gap where the other side has the step this one has not.
  if (first && ((first.kind === 'missing' && which === 'candidate') || (first.kind === 'extra' && which === 'baseline'))) {
    const step = which === 'candidate' ? first.baseline : first.candidate;
    const gap = h(
      'li',
      { class: 'eval-call gap', 'data-testid': 'eval-gap', dataset: { mark: first.kind } },
      h('span', { class: 'mark' }, which === 'candidate' ? 'skipped' : 'not in the recording'),
      ' ',
      h('span', { class: 'tool-name' }, step?.tool ?? ''),
    );
    calls.splice(Math.min(first.index, calls.length), 0, gap);
  }
  const verification = transcript.verification;
  return h(
    'section',
    { class: `side ${which}`, 'data-side': which, 'aria-label': label },
    h('h4', {}, label),
    figureList,
    calls.length ? h('ol', { class: 'eval-calls', 'aria-label': `${label} tool calls` }, ...calls) : h('p', { class: 'hint' }, 'No tool call.'),
    verification?.failedItems?.length
      ? h(
          'ul',
          { class: 'failed-items', 'aria-label': `${label} failed checklist items`, dataset: { mark: which === 'candidate' && kinds.has('check') ? 'check' : undefined } },
          ...verification.failedItems.map((/** @type {any} */ i) => h('li', { 'data-testid': 'failed-item' }, `${i.section ? `${i.section}: ` : ''}${i.item}${i.note ? ` — ${i.note}` : ''}`)),
        )
      : undefined,
    transcript.error ? h('p', { class: 'error' }, transcript.error) : undefined,
    h('div', { class: 'eval-response', 'data-testid': 'eval-response' }, transcript.response ?? '(no answer)'),
  );
}

/** A figure, marked when it is one of the turn's differences. */
function marked(/** @type {string} */ term, /** @type {string} */ value, /** @type {string | undefined} */ kind = undefined) {
  return [h('dt', {}, term), h('dd', { dataset: { mark: kind }, class: kind ? 'changed' : undefined }, value)];
}

/**
 * One call: tool, arguments, result, approval, and what marks it.
 * @param {'baseline' | 'candidate'} which
 * @param {any} call
 * @param {any} first
 * @param {any[]} diverged
 */
function callView(which, call, first, diverged) {
  const kind = first && first.index === call.index ? first.kind : undefined;
  const note = kind ? /** @type {Record<string, string>} */ (CALL_NOTES[which])[kind] : undefined;
  const divergedHere = which === 'candidate' && call.diverged && diverged.some((d) => d.index === call.index);
  return h(
    'li',
    { class: 'eval-call', 'data-testid': 'eval-call', dataset: { tool: call.tool, mark: note ? kind : undefined, diverged: divergedHere ? call.diverged : undefined } },
    h('span', { class: 'tool-name' }, call.tool),
    note ? h('span', { class: 'mark' }, note) : undefined,
    divergedHere ? h('span', { class: 'mark' }, `not in the recording: ${DIVERGED_NOTES[/** @type {keyof DIVERGED_NOTES} */ (call.diverged)] ?? call.diverged}`) : undefined,
    call.approval ? h('span', { class: 'approval-note' }, call.approval.approved ? 'approved' : `denied${call.approval.reason ? `: ${call.approval.reason}` : ''}`) : undefined,
    h('pre', { class: 'args', 'data-testid': 'eval-args' }, prettyJson(call.arguments)),
    call.result !== undefined
      ? h('details', {}, h('summary', {}, call.ok === false ? 'result (failed)' : 'result'), h('pre', {}, prettyJson(call.result)))
      : which === 'candidate' && !call.diverged && call.approval?.approved !== false
        ? h('p', { class: 'hint' }, 'answered from the recording')
        : undefined,
  );
}
