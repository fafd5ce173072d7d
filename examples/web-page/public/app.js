// @ts-check
/**
 * The page's script, plain JavaScript for the browser (no build step). It uses the HTTP API of
 * `loopwright serve` (serve/API.md) and reads each session's AG-UI event stream with EventSource.
 * The types come from the packages, so `tsc -p examples/web-page` checks it against the API.
 * @typedef {import('@ag-ui/core').BaseEvent} BaseEvent
 * @typedef {import('loopwright').PendingApproval} PendingApproval
 * @typedef {import('loopwright').TurnSummary} TurnSummary
 */

const log = /** @type {HTMLElement} */ (document.getElementById('log'));
const form = /** @type {HTMLFormElement} */ (document.getElementById('send'));
const input = /** @type {HTMLInputElement} */ (document.getElementById('message'));
/** @type {string | undefined} */
let sessionId;
/** The reply being written, by AG-UI message id. @type {Map<string, HTMLElement>} */
const replies = new Map();

/** A JSON request to the API; an error answer ({error: {type, message}}) becomes an exception. */
async function api(method, path, body) {
  const response = await fetch(`/api${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${answer.error.type}: ${answer.error.message}`);
  return answer;
}

/** Add a line to the conversation. */
function show(text, className) {
  const line = document.createElement('p');
  line.textContent = text;
  if (className) line.className = className;
  log.append(line);
  return line;
}

/** What the page does with one AG-UI event of the session's stream. */
function onEvent(/** @type {BaseEvent & Record<string, any>} */ event) {
  switch (event.type) {
    case 'TEXT_MESSAGE_START':
      replies.set(event.messageId, show('', 'reply'));
      break;
    case 'TEXT_MESSAGE_CONTENT':
      // The reply as the model writes it.
      (replies.get(event.messageId) ?? show('', 'reply')).textContent += event.delta;
      break;
    case 'TOOL_CALL_START':
      show(`⚙ ${event.toolCallName}`, 'tool');
      break;
    case 'RUN_FINISHED': {
      const result = /** @type {TurnSummary} */ (event.result);
      show(`turn ${result.turn} ${result.status} after ${result.iterations} model call(s)`, 'status');
      break;
    }
    case 'RUN_ERROR':
      show(`the turn failed: ${event.message}`, 'status');
      break;
    case 'CUSTOM':
      if (event.name === 'loopwright.approval_needed') askApproval(event.value);
      if (event.name === 'loopwright.reply_restarted') replies.get(event.value.messageId)?.replaceChildren();
      if (event.name === 'loopwright.question') show(`(the agent asks: answer in the box) ${event.value.question}`, 'status');
      break;
  }
}

/** A tool call that waits for a yes: what it would do, with Approve and Deny. */
function askApproval(/** @type {PendingApproval} */ approval) {
  const box = document.createElement('div');
  box.className = 'approval';
  box.textContent = `${approval.tool} wants to write ${approval.path ?? ''}: ${approval.preview.slice(0, 80)}… `;
  for (const [label, decide] of /** @type {const} */ ([
    ['Approve', 'approve'],
    ['Deny', 'deny'],
  ])) {
    const button = document.createElement('button');
    button.textContent = label;
    button.onclick = async () => {
      for (const each of box.querySelectorAll('button')) each.disabled = true;
      await api('POST', `/sessions/${sessionId}/${decide}`, { callId: approval.callId });
      box.replaceWith(show(`${approval.tool}: ${decide === 'approve' ? 'approved' : 'denied'}`, 'status'));
    };
    box.append(button);
  }
  log.append(box);
}

/** @type {HTMLElement} */ (document.getElementById('start')).onclick = async (click) => {
  /** @type {HTMLButtonElement} */ (click.currentTarget).disabled = true;
  // The example bundle that ships with Loopwright (the server names its folder); writes wait for approval.
  const health = await api('GET', '/health');
  // The bundle's agents, and the project its sessions work in (for the example bundle, a folder of the server's, not the package).
  const listing = await api('GET', `/agents?bundlePath=${encodeURIComponent(health.exampleBundle)}`);
  const agent = listing.agents.find((a) => a.id === 'facilitator');
  const { id } = await api('POST', '/sessions', { bundlePath: listing.bundlePath, agentId: agent.id, projectRoot: listing.projectRoot, approval: { policy: 'writes' } });
  sessionId = id;
  /** @type {HTMLElement} */ (document.getElementById('session')).textContent = `Session ${id}: ${agent.name}, ${agent.title} (${agent.menu.map((item) => item.cmd).join(' ')})`;
  // One stream for the whole session: each turn is an AG-UI run. EventSource reconnects with the last event id by itself.
  const events = new EventSource(`/api/sessions/${encodeURIComponent(id)}/events`);
  events.onmessage = (message) => onEvent(JSON.parse(message.data));
  form.hidden = false;
};

form.onsubmit = async (submit) => {
  submit.preventDefault();
  const text = input.value.trim();
  if (!text || !sessionId) return;
  show(`You: ${text}`, 'you');
  input.value = '';
  // 202 at once: the turn runs, and the stream shows it.
  await api('POST', `/sessions/${sessionId}/messages`, { text });
};

/** @type {HTMLElement} */ (document.getElementById('end')).onclick = async () => {
  await api('POST', `/sessions/${sessionId}/end`, {});
  show('session ended', 'status');
  form.hidden = true;
};

api('GET', '/health').then(
  (health) => {
    /** @type {HTMLElement} */ (document.getElementById('model')).textContent = health.scriptedModel
      ? "Model: Loopwright's scripted model (canned replies)"
      : 'Model: the one the worker is configured with';
  },
  (error) => show(`loopwright serve does not answer: ${error.message}`, 'status'),
);
