/**
 * Tool calls waiting for the user's yes or no, each with exactly what it would do: the tool, the
 * path it names, its arguments as the model wrote them, and for a command the line as it runs, its
 * folder and its sandbox (PendingApproval.command). Approve and Deny post to the session.
 */
import { ApiError, post, sessionPath } from './api.js';
import { byId, h, prettyJson, replace } from './dom.js';

/**
 * @typedef {{callId: string, tool: string, path?: string, preview?: string, since?: number,
 *   delegate?: {agent: string, workflowId: string, callId: string},
 *   command?: {line: string, cwd: string, sandbox: string, requestedBy?: string[], unjudged?: string}}} PendingApproval
 */

export class Approvals {
  /**
   * @param {{argsOf: (callId: string) => string | undefined, onDecided: (callId: string) => void, onError: (message: string) => void}} options
   *   `argsOf`: the call's arguments as the stream gave them; `onDecided`: the session took the decision
   */
  constructor(options) {
    this.argsOf = options.argsOf;
    this.onDecided = options.onDecided;
    this.onError = options.onError;
    this.section = byId('approvals');
    this.list = byId('approval-list');
    /** @type {Map<string, {approval: PendingApproval, el: HTMLElement}>} */
    this.shown = new Map();
    /** @type {string | undefined} */
    this.sessionId = undefined;
  }

  /** @param {string} sessionId */
  reset(sessionId) {
    this.sessionId = sessionId;
    this.shown.clear();
    replace(this.list);
    this.section.hidden = true;
  }

  /** @param {PendingApproval} approval */
  add(approval) {
    if (!approval?.callId) return;
    const old = this.shown.get(approval.callId);
    const el = this.build(approval);
    if (old) old.el.replaceWith(el);
    else this.list.append(el);
    this.shown.set(approval.callId, { approval, el });
    this.section.hidden = false;
    el.scrollIntoView?.({ block: 'nearest' });
  }

  /**
   * Show these and only these (the session's state).
   * @param {PendingApproval[]} approvals
   */
  sync(approvals) {
    const ids = new Set(approvals.map((a) => a.callId));
    for (const id of [...this.shown.keys()]) if (!ids.has(id)) this.remove(id);
    for (const approval of approvals) if (!this.shown.has(approval.callId)) this.add(approval);
  }

  /**
   * The arguments of this call are now complete: show them in its card.
   * @param {string} callId
   */
  refresh(callId) {
    const entry = this.shown.get(callId);
    if (entry) this.add(entry.approval);
  }

  /** @param {string} callId */
  remove(callId) {
    this.shown.get(callId)?.el.remove();
    this.shown.delete(callId);
    this.section.hidden = this.shown.size === 0;
  }

  clear() {
    for (const id of [...this.shown.keys()]) this.remove(id);
  }

  /** @param {PendingApproval} approval */
  build(approval) {
    const args = this.argsOf(approval.callId);
    const reasonId = `deny-reason-${cssId(approval.callId)}`;
    const reason = /** @type {HTMLInputElement} */ (h('input', { id: reasonId, type: 'text', autocomplete: 'off', placeholder: 'the model is told this' }));
    const facts = [];
    const fact = (/** @type {string} */ term, /** @type {Node | string} */ value) => facts.push(h('dt', {}, term), h('dd', {}, value));
    if (approval.command) {
      fact('Command', h('pre', { class: 'command', 'data-testid': 'approval-command' }, approval.command.line));
      fact('Folder', h('code', {}, approval.command.cwd));
      fact('Sandbox', approval.command.sandbox);
      if (approval.command.requestedBy?.length) fact('Requested by', approval.command.requestedBy.join(', '));
      if (approval.command.unjudged) fact('No rule can cover it', approval.command.unjudged);
    }
    if (approval.path) fact('Path', h('code', { 'data-testid': 'approval-path' }, approval.path));
    if (approval.delegate) fact('Asked by', `subagent ${approval.delegate.agent} (${approval.delegate.workflowId})`);
    if (args !== undefined) fact('Arguments', argumentsView(args));
    else if (approval.preview) fact('Preview', h('pre', { class: 'args', 'data-testid': 'approval-preview' }, approval.preview));
    return h(
      'article',
      { class: 'approval', 'aria-label': `Approval of ${approval.tool}`, 'data-testid': 'approval', dataset: { callId: approval.callId } },
      h('h3', {}, h('span', { class: 'tool-name' }, approval.tool), ' wants to run'),
      h('dl', {}, ...facts),
      h(
        'div',
        { class: 'row' },
        h('button', { type: 'button', class: 'primary', onclick: () => void this.decide(approval.callId, 'approve') }, 'Approve'),
        h('button', { type: 'button', class: 'danger', onclick: () => void this.decide(approval.callId, 'deny', reason.value.trim()) }, 'Deny'),
        h('label', { for: reasonId, class: 'inline' }, 'Reason (optional)'),
        reason,
      ),
    );
  }

  /**
   * @param {string} callId
   * @param {'approve' | 'deny'} decision
   * @param {string} [reason]
   */
  async decide(callId, decision, reason) {
    if (!this.sessionId) return;
    const entry = this.shown.get(callId);
    for (const button of entry?.el.querySelectorAll('button') ?? []) button.disabled = true;
    try {
      await post(sessionPath(this.sessionId, decision), decision === 'deny' ? { callId, ...(reason ? { reason } : {}) } : { callId });
      this.remove(callId);
      this.onDecided(callId);
    } catch (err) {
      for (const button of entry?.el.querySelectorAll('button') ?? []) button.disabled = false;
      this.onError(err instanceof ApiError ? err.message : String(err));
    }
  }
}

/** @param {string} id a call id (may hold `/` for a subagent's call) */
function cssId(id) {
  return id.replace(/[^A-Za-z0-9_-]/g, '_');
}

/**
 * A call's arguments exactly: each one by name, a text as it is (line breaks shown as lines), any
 * other value as JSON; below, the JSON as the model wrote it. Arguments that are not a JSON object
 * are shown as written.
 * @param {string} args
 */
function argumentsView(args) {
  let parsed;
  try {
    parsed = JSON.parse(args);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return h('pre', { class: 'args', 'data-testid': 'approval-args' }, args);
  return h(
    'div',
    { 'data-testid': 'approval-args' },
    h(
      'dl',
      { class: 'arg-list' },
      ...Object.entries(parsed).flatMap(([name, value]) => [
        h('dt', {}, h('code', {}, name)),
        h('dd', {}, h('pre', { class: 'args', 'data-testid': `approval-arg-${name}` }, typeof value === 'string' ? value : JSON.stringify(value, null, 2))),
      ]),
    ),
    h('details', { class: 'raw' }, h('summary', {}, 'As the model wrote them (JSON)'), h('pre', { class: 'args', 'data-testid': 'approval-args-json' }, prettyJson(args))),
  );
}
