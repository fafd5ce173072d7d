/**
 * Loopwright's chat app, served by `loopwright serve` at `/`: plain ES modules and the DOM, no
 * build step and nothing fetched from elsewhere. The address says what is shown (`#/session/<id>`,
 * `#/eval/<id>[/<index>]`, else the picker), so a reload or a shared link opens the same page.
 */
import { ApiError, get } from './api.js';
import { byId, count, h, replace } from './dom.js';
import { EvalView, evalHash } from './eval-view.js';
import { Picker } from './picker.js';
import { SessionView } from './session-view.js';

const SESSION_ROUTE = /^#\/session\/(.+)$/;
/** `#/eval/<id>`, or one recorded session of it: `#/eval/<id>/<index>`. */
const EVAL_ROUTE = /^#\/eval\/([^/]+)(?:\/(\d+))?$/;

const picker = new Picker({
  onStarted: (id) => {
    location.hash = `#/session/${encodeURIComponent(id)}`;
    void loadSessions();
  },
});
const view = new SessionView({ onTurnEnded: () => void loadSessions() });
const evalView = new EvalView();

/** Show what the address names. */
async function route() {
  const evalMatch = EVAL_ROUTE.exec(location.hash);
  markCurrentEval(evalMatch ? decodeURIComponent(evalMatch[1]) : undefined);
  if (evalMatch) {
    markCurrent(undefined);
    view.close();
    picker.hide();
    await evalView.open(decodeURIComponent(evalMatch[1]), evalMatch[2] !== undefined ? Number(evalMatch[2]) : undefined);
    return;
  }
  evalView.close();
  const match = SESSION_ROUTE.exec(location.hash);
  const id = match ? decodeURIComponent(match[1]) : undefined;
  markCurrent(id);
  if (!id) {
    view.close();
    picker.show();
    return;
  }
  if (view.id === id) return;
  picker.hide();
  await view.open(id);
}

/** The sessions the server can find (GET /api/sessions), newest first. */
async function loadSessions() {
  const list = byId('session-list');
  const error = byId('sessions-error');
  try {
    const { sessions } = await get('/sessions', { limit: 100 });
    error.hidden = true;
    replace(list, ...sessions.map(sessionItem));
    if (sessions.length === 0) list.append(h('li', { class: 'hint' }, 'No session yet.'));
    markCurrent(view.id);
  } catch (err) {
    error.hidden = false;
    error.textContent = `Sessions cannot be listed: ${err instanceof ApiError ? err.message : String(err)}`;
  }
}

/**
 * @param {{workflowId: string, agent?: string, status?: string, workflowStatus?: string, turns?: number, totalTokens?: number, startTime?: string}} s
 */
function sessionItem(s) {
  const status = (s.status ?? s.workflowStatus ?? '').toLowerCase().replace(/_/g, ' ');
  const started = s.startTime ? new Date(s.startTime) : undefined;
  return h(
    'li',
    { dataset: { sessionId: s.workflowId } },
    h(
      'a',
      { href: `#/session/${encodeURIComponent(s.workflowId)}`, class: 'session-link' },
      h('span', { class: 's-agent' }, s.agent ?? 'new session'),
      h('span', { class: `badge ${status.replace(/ /g, '-')}` }, status || '?'),
      h('span', { class: 'sid' }, s.workflowId),
      h(
        'span',
        { class: 'when' },
        [
          started && !Number.isNaN(started.getTime()) ? started.toLocaleString() : '',
          s.turns !== undefined ? `${s.turns} turns` : '',
          s.totalTokens !== undefined ? `${count(s.totalTokens)} tokens` : '',
        ]
          .filter(Boolean)
          .join(' · '),
      ),
    ),
  );
}

/** @param {string | undefined} id */
function markCurrent(id) {
  for (const li of byId('session-list').querySelectorAll('li[data-session-id]')) {
    const link = li.querySelector('a');
    if (li instanceof HTMLElement && li.dataset.sessionId === id) link?.setAttribute('aria-current', 'page');
    else link?.removeAttribute('aria-current');
  }
}

/** The evals the server can find (GET /api/evals), newest first. */
async function loadEvals() {
  const list = byId('eval-list');
  const error = byId('evals-error');
  try {
    const { evals } = await get('/evals');
    error.hidden = true;
    replace(
      list,
      ...evals.map((/** @type {{id: string, status: string, startTime: string}} */ e) => {
        const status = e.status.toLowerCase().replace(/_/g, ' ');
        const started = new Date(e.startTime);
        return h(
          'li',
          { dataset: { evalId: e.id } },
          h(
            'a',
            { href: evalHash(e.id), class: 'session-link' },
            h('span', { class: 's-agent' }, e.id),
            h('span', { class: `badge ${status.replace(/ /g, '-')}` }, status),
            h('span', { class: 'when' }, Number.isNaN(started.getTime()) ? '' : started.toLocaleString()),
          ),
        );
      }),
    );
    if (evals.length === 0) list.append(h('li', { class: 'hint' }, 'No eval yet: loopwright eval <recordings…> runs one.'));
    const match = EVAL_ROUTE.exec(location.hash);
    markCurrentEval(match ? decodeURIComponent(match[1]) : undefined);
  } catch (err) {
    error.hidden = false;
    error.textContent = `Evals cannot be listed: ${err instanceof ApiError ? err.message : String(err)}`;
  }
}

/** @param {string | undefined} id */
function markCurrentEval(id) {
  for (const li of byId('eval-list').querySelectorAll('li[data-eval-id]')) {
    const link = li.querySelector('a');
    if (li instanceof HTMLElement && li.dataset.evalId === id) link?.setAttribute('aria-current', 'page');
    else link?.removeAttribute('aria-current');
  }
}

/** Which Temporal server the app talks to (the health answer holds nothing secret). */
async function loadHealth() {
  const el = byId('server-status');
  try {
    const health = await get('/health');
    const where = health.temporal ? `Temporal ${health.temporal.address} · ${health.temporal.namespace} · queue ${health.taskQueue}` : 'connected';
    // Said plainly, as `loopwright demo` says it: canned replies are not a model.
    el.textContent = health.scriptedModel ? `${where} · scripted model (canned replies, not a real model)` : where;
    el.dataset.ok = 'true';
    if (health.exampleBundle) picker.offerExample(health.exampleBundle);
  } catch (err) {
    el.textContent =
      err instanceof ApiError && err.status === 401 ? 'This server needs its token: open the link loopwright serve printed.' : `Server: ${err instanceof Error ? err.message : String(err)}`;
    el.dataset.ok = 'false';
  }
}

byId('new-session').addEventListener('click', () => {
  location.hash = '#/new';
});
byId('refresh-sessions').addEventListener('click', () => void loadSessions());
byId('refresh-evals').addEventListener('click', () => void loadEvals());
window.addEventListener('hashchange', () => void route());

void loadHealth();
void loadSessions();
void loadEvals();
void route();
