/**
 * One open session: its figures, the conversation (transcript pages for the history, the event
 * stream for the running turn), approvals, the agent's question, and the controls (send,
 * interrupt, extend, end). Opening a session whose turn is running rejoins that turn: the history
 * up to its message from the transcript, the turn itself from the stream. A reload mid-turn shows
 * the turn as it was (turn-store.js) and resumes the stream after the last event it handled.
 */
import { Approvals } from './approvals.js';
import { ApiError, get, post, sessionPath } from './api.js';
import { Conversation } from './conversation.js';
import { byId, count, h, replace } from './dom.js';
import { SessionEventStream } from './event-stream.js';
import { forgetStream, loadStream, saveStream } from './turn-store.js';

/** Messages per transcript page. */
const PAGE = 50;
/** Statuses of a session whose turn is running. */
const BUSY = new Set(['thinking', 'executing_tool', 'waiting_for_approval', 'verifying']);
/** Longest wait for the stream to connect before a message is sent anyway. */
const STREAM_WAIT_MS = 5000;
/** A turn this page started that ended this long ago without the stream showing it is read from the transcript. */
const MISSED_TURN_MS = 3000;
/** Iterations `Allow 10 more` adds. */
const EXTEND_BY = 10;
/** How often the figures are read again while a turn runs. */
const STATE_REFRESH_MS = 1000;
/** … and while a new session initialises (its agent is not known before). */
const INITIALIZING_REFRESH_MS = 250;
/** What a turn that did not complete says. */
const TURN_END_NOTES = {
  interrupted: 'Interrupted. Send a message to go on.',
  max_iterations: 'The turn reached its iteration limit. Send "continue" to go on.',
  stuck: 'The same tool call kept failing; the turn stopped.',
  truncated: 'The reply was cut off at the output limit.',
  content_filtered: "The server's content filter stopped the reply.",
  refused: 'The model refused.',
  budget_exceeded: 'A token or cost budget was reached. Raise it to go on.',
  failed_verification: 'The saved document still fails its checklist.',
};

export class SessionView {
  /** @param {{onTurnEnded: () => void}} options */
  constructor(options) {
    this.onTurnEnded = options.onTurnEnded;
    this.section = byId('session');
    this.conversation = new Conversation(byId('conversation'));
    this.approvals = new Approvals({
      argsOf: (id) => this.conversation.toolArgs(id),
      onDecided: (id) => this.conversation.toolDecided(id),
      onError: (m) => this.showError(m),
    });
    this.message = /** @type {HTMLTextAreaElement} */ (byId('message'));
    /** @type {string | undefined} */
    this.id = undefined;
    /** @type {any} the last state read (GET /api/sessions/:id) */
    this.state = undefined;
    /** @type {SessionEventStream | undefined} */
    this.stream = undefined;
    /** @type {string | undefined} the running turn's AG-UI run id */
    this.runId = undefined;
    this.running = false;
    this.historyFrom = 0;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.saveTimer = undefined;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.refreshTimer = undefined;
    this.refreshAt = 0;
    /** Bumped on every open(), so answers for a session left meanwhile are dropped. */
    this.generation = 0;
    /** The title and the menu show the agent (a new session has none until it is initialised). */
    this.headerAgent = false;
    /** The session is being opened (its history read): nothing can be sent yet. */
    this.loading = false;
    /** Resolved once the stream is connected (a message is sent only then). */
    this.streamReady = Promise.resolve(undefined);
    this.streamOpened = () => undefined;
    /** @type {number | undefined} the turn this page's message started, until the stream shows it */
    this.sentTurn = undefined;
    this.sentAt = 0;
    /** @type {number | undefined} set while the page waits for the stream to give a turn it saw running */
    this.expectRunningTurn = undefined;

    byId('composer').addEventListener('submit', (e) => {
      e.preventDefault();
      void this.send();
    });
    this.message.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        void this.send();
      }
    });
    byId('interrupt').addEventListener('click', () => void this.act('interrupt', { reason: 'interrupted in the app' }));
    byId('extend').addEventListener('click', () => void this.act('extend', { iterations: EXTEND_BY }));
    byId('end-session').addEventListener('click', () => void this.end());
    byId('earlier').addEventListener('click', () => void this.loadEarlier());
    // A reload or a closed tab keeps exactly what was shown with the id of the last event shown.
    window.addEventListener('pagehide', () => this.save());
  }

  /**
   * Show a session and follow it.
   * @param {string} id
   * @param {{fresh?: boolean}} [options] forget what this tab kept of the session (its stream's
   *   last id and the turn as shown): the session is read again from its transcript
   */
  async open(id, options = {}) {
    this.close();
    if (options.fresh) forgetStream(id);
    this.streamReady = new Promise((resolve) => (this.streamOpened = () => resolve(undefined)));
    const generation = ++this.generation;
    // Nothing is sent before the history is shown (a message would land above it).
    this.loading = true;
    this.updateControls();
    this.id = id;
    this.section.hidden = false;
    this.conversation.clear();
    this.approvals.reset(id);
    this.showQuestion(undefined);
    this.showError();
    byId('session-id').textContent = id;
    byId('session-title').textContent = 'Session';
    replace(byId('menu'));
    let state;
    try {
      state = await get(sessionPath(id));
    } catch (err) {
      this.showError(err instanceof ApiError ? err.message : String(err));
      return;
    }
    if (generation !== this.generation) return;
    this.renderState(state);
    this.renderHeader(state);
    const saved = loadStream(id);
    let resumeAfter;
    if (BUSY.has(state.status)) {
      // Rejoin: the history up to the running turn's message; the turn itself comes from the stream.
      const turnStart = await this.loadHistoryBeforeRunningTurn(state.messageCount).catch((err) => this.failedToLoad(err));
      if (turnStart === undefined || generation !== this.generation) return;
      this.runId = `${id}:t${state.turn}`;
      this.running = true;
      if (saved?.runId === this.runId && saved.lastEventId && Array.isArray(saved.items)) {
        this.conversation.restore(/** @type {any[]} */ (saved.items));
        resumeAfter = saved.lastEventId;
      } else {
        // The stream without an id starts at the running turn's RUN_STARTED.
        this.runId = undefined;
        this.expectRunningTurn = turnStart;
      }
    } else {
      const loaded = await this.loadHistory(state.messageCount).then(
        () => true,
        (err) => this.failedToLoad(err),
      );
      if (!loaded || generation !== this.generation) return;
    }
    this.loading = false;
    if (state.pendingApprovals?.length) this.approvals.sync(state.pendingApprovals);
    if (state.pendingQuestion && !BUSY.has(state.status)) this.showQuestion(state.pendingQuestion.question);
    this.updateControls();
    this.stream = new SessionEventStream(id, {
      lastEventId: resumeAfter,
      onEvent: (event) => this.onEvent(event),
      onStatus: (status, detail) => {
        if (status === 'open') this.streamOpened();
        this.onStreamStatus(status, detail);
      },
      onUnreadableId: () => void this.reload(),
    });
    this.stream.open();
  }

  /**
   * The transcript could not be read: say so (the session stays closed; opening it again retries).
   * @param {unknown} err
   * @returns {undefined}
   */
  failedToLoad(err) {
    this.showError(`The conversation could not be read: ${err instanceof ApiError ? err.message : String(err)}`);
    return undefined;
  }

  /** The server could not read the stream's id: read the session again from its transcript. */
  async reload() {
    if (this.id) await this.open(this.id, { fresh: true });
  }

  /** Stop following the session shown (another one opens, or the picker). */
  close() {
    this.streamOpened();
    this.save();
    this.expectRunningTurn = undefined;
    this.sentTurn = undefined;
    this.stream?.close();
    this.stream = undefined;
    clearTimeout(this.saveTimer);
    clearTimeout(this.refreshTimer);
    this.saveTimer = undefined;
    this.refreshTimer = undefined;
    this.headerAgent = false;
    this.loading = false;
    this.id = undefined;
    this.running = false;
    this.runId = undefined;
    this.section.hidden = true;
  }

  /**
   * The last page of the transcript.
   * @param {number} messageCount
   */
  async loadHistory(messageCount) {
    const from = Math.max(0, messageCount - PAGE);
    if (messageCount > 0) {
      const page = await get(sessionPath(/** @type {string} */ (this.id), 'messages'), { from, to: messageCount });
      this.conversation.addTranscript(page.messages, page.from);
    }
    this.setHistoryFrom(from);
  }

  /**
   * The transcript before the running turn (whose messages, its user message first, come from the
   * stream); returns the turn's first index.
   * @param {number} messageCount
   */
  async loadHistoryBeforeRunningTurn(messageCount) {
    const from = Math.max(0, messageCount - PAGE);
    if (messageCount === 0) return 0;
    const page = await get(sessionPath(/** @type {string} */ (this.id), 'messages'), { from, to: messageCount });
    /** @type {any[]} */
    const messages = page.messages;
    let start = messages.length;
    while (start > 0 && !startsTurn(messages[start - 1])) start -= 1;
    const kept = start > 0 ? messages.slice(0, start - 1) : messages;
    this.conversation.addTranscript(kept, page.from);
    this.setHistoryFrom(page.from);
    return page.from + kept.length;
  }

  async loadEarlier() {
    if (!this.id || this.historyFrom === 0) return;
    const to = this.historyFrom;
    const from = Math.max(0, to - PAGE);
    try {
      const page = await get(sessionPath(this.id, 'messages'), { from, to });
      this.conversation.addTranscript(page.messages, page.from, { prepend: true });
      this.setHistoryFrom(page.from);
    } catch (err) {
      this.showError(err instanceof ApiError ? err.message : String(err));
    }
  }

  /** @param {number} from */
  setHistoryFrom(from) {
    this.historyFrom = from;
    byId('earlier').hidden = from === 0;
  }

  /**
   * One AG-UI event of the session's stream.
   * @param {{type: string, [key: string]: any}} event
   */
  onEvent(event) {
    const c = this.conversation;
    switch (event.type) {
      case 'RUN_STARTED':
        this.runStarted(event.runId);
        break;
      case 'TEXT_MESSAGE_START':
        c.startText(event.messageId);
        break;
      case 'TEXT_MESSAGE_CONTENT':
        c.appendText(event.messageId, event.delta ?? '');
        break;
      case 'TEXT_MESSAGE_END':
        c.endText(event.messageId);
        break;
      case 'TOOL_CALL_START':
        c.startTool(event.toolCallId, event.toolCallName);
        break;
      case 'TOOL_CALL_ARGS':
        c.appendArgs(event.toolCallId, event.delta ?? '');
        break;
      case 'TOOL_CALL_END':
        c.endArgs(event.toolCallId);
        this.approvals.refresh(event.toolCallId);
        break;
      case 'TOOL_CALL_RESULT':
        c.toolResult(event.toolCallId, String(event.content ?? ''));
        this.approvals.remove(event.toolCallId);
        break;
      case 'STEP_STARTED': {
        const n = /iteration (\d+)/.exec(event.stepName ?? '');
        if (n && this.state) {
          this.state.iteration = Number(n[1]);
          this.renderState(this.state);
        }
        break;
      }
      case 'CUSTOM':
        this.onCustom(event.name, event.value);
        break;
      case 'RUN_FINISHED':
        this.runEnded(event.result);
        break;
      case 'RUN_ERROR':
        if (event.code === 'LoopwrightRewound') {
          // The transcript was taken back: show it as it now is, and follow it from here.
          void this.open(/** @type {string} */ (this.id), { fresh: true });
          return;
        }
        c.notice(`The turn failed: ${event.message ?? 'unknown error'}`, 'error');
        this.runEnded(undefined);
        break;
      default:
        break;
    }
    this.scheduleSave();
  }

  /**
   * @param {string} name
   * @param {any} value
   */
  onCustom(name, value) {
    switch (name) {
      case 'loopwright.user_message':
        this.conversation.userMessage(value?.messageId, String(value?.text ?? ''));
        break;
      case 'loopwright.notice':
        if (value?.text) this.conversation.notice(String(value.text), 'info', value.messageId);
        break;
      case 'loopwright.reply_restarted':
        this.conversation.resetText(value?.messageId);
        break;
      case 'loopwright.approval_needed':
        this.approvals.add(value);
        this.conversation.toolWaiting(value?.callId);
        break;
      case 'loopwright.question':
        this.showQuestion(value?.question);
        break;
      case 'loopwright.usage':
        if (this.state && value) {
          this.state.usage = value;
          this.renderState(this.state);
        }
        this.refreshSoon();
        break;
      case 'loopwright.tool_output':
        this.conversation.toolOutput(value?.toolCallId, String(value?.text ?? ''));
        break;
      case 'loopwright.compaction':
        if (value) this.conversation.notice(`The model's view was compacted: about ${count(value.beforeTokens)} → ${count(value.afterTokens)} tokens.`);
        break;
      default:
        break;
    }
  }

  /** @param {string} runId */
  runStarted(runId) {
    this.expectRunningTurn = undefined;
    this.sentTurn = undefined;
    this.runId = runId;
    this.running = true;
    // The figures follow at once; the state read below corrects them.
    const turn = /:t(\d+)$/.exec(runId ?? '');
    if (this.state) this.renderState({ ...this.state, status: 'thinking', iteration: 0, ...(turn ? { turn: Number(turn[1]) } : {}) });
    this.conversation.markRunStart();
    this.showQuestion(undefined);
    this.updateControls();
    this.refreshSoon(0);
  }

  /** @param {any} result the turn's TurnSummary */
  runEnded(result) {
    this.running = false;
    this.runId = undefined;
    if (this.state && result) {
      this.renderState({
        ...this.state,
        status: result.status === 'interrupted' ? 'interrupted' : 'waiting_for_user',
        turn: result.turn ?? this.state.turn,
        iteration: result.iterations ?? this.state.iteration,
      });
    }
    this.approvals.clear();
    const note =
      result && !result.success && result.status !== 'waiting_for_user'
        ? (TURN_END_NOTES[/** @type {keyof typeof TURN_END_NOTES} */ (result.status)] ?? `The turn ended: ${result.status}${result.error ? ` (${result.error})` : ''}`)
        : undefined;
    if (note) this.conversation.notice(note, result.status === 'failed' ? 'error' : 'info');
    this.updateControls();
    this.refreshSoon(0);
    this.onTurnEnded();
  }

  async send() {
    const text = this.message.value.trim();
    if (!text || !this.id || this.running || this.loading) return;
    const id = this.id;
    this.showError();
    this.message.value = '';
    this.showQuestion(undefined);
    this.conversation.addPendingUser(text);
    this.running = true;
    this.updateControls();
    try {
      // The stream must be connected first: one without an id waits for the next turn from the
      // moment it connects, and a quick turn could otherwise end before it is there to see it.
      await Promise.race([this.streamReady, new Promise((resolve) => setTimeout(resolve, STREAM_WAIT_MS))]);
      if (this.id !== id) return;
      const answer = await post(sessionPath(id, 'messages'), { text });
      if (this.running && this.runId === undefined) {
        this.sentTurn = answer?.turn;
        this.sentAt = Date.now();
        this.refreshSoon();
      }
    } catch (err) {
      if (this.id !== id) return;
      this.conversation.dropPendingUser();
      this.message.value = text;
      this.running = false;
      this.showError(`Not sent: ${err instanceof ApiError ? err.message : String(err)}`);
      this.updateControls();
    }
  }

  /**
   * interrupt, extend
   * @param {'interrupt' | 'extend'} action
   * @param {Record<string, unknown>} body
   */
  async act(action, body) {
    if (!this.id) return;
    this.showError();
    try {
      const answer = await post(sessionPath(this.id, action), body);
      if (action === 'extend' && this.state && answer?.maxIterations) {
        this.state.maxIterations = answer.maxIterations;
        this.renderState(this.state);
      }
    } catch (err) {
      this.showError(err instanceof ApiError ? err.message : String(err));
    }
  }

  async end() {
    if (!this.id) return;
    if (!window.confirm('End this session? It completes after the running turn, and takes no more messages.')) return;
    try {
      await post(sessionPath(this.id, 'end'), {});
      this.conversation.notice('The session ends after the running turn.');
      this.refreshSoon(500);
    } catch (err) {
      this.showError(err instanceof ApiError ? err.message : String(err));
    }
  }

  /**
   * Read the figures again in `delay` ms (0: now), unless a read is due sooner already.
   * @param {number} [delay]
   */
  refreshSoon(delay = STATE_REFRESH_MS) {
    const at = Date.now() + delay;
    if (this.refreshTimer && this.refreshAt <= at) return;
    clearTimeout(this.refreshTimer);
    this.refreshAt = at;
    this.refreshTimer = setTimeout(() => void this.refresh(), delay);
  }

  async refresh() {
    this.refreshTimer = undefined;
    const id = this.id;
    if (!id) return;
    try {
      const state = await get(sessionPath(id));
      if (this.id !== id) return;
      this.renderState(state);
      // A new session shows its agent once initialised; until then it is read again.
      if (state.agent && !this.headerAgent) this.renderHeader(state);
      else if (!state.agent && state.status === 'initializing') this.refreshSoon(INITIALIZING_REFRESH_MS);
      if (!BUSY.has(state.status) && this.expectRunningTurn !== undefined) {
        // The turn this page meant to rejoin ended before the stream was open: read it from the transcript.
        this.expectRunningTurn = undefined;
        this.running = false;
        this.conversation.clear();
        await this.loadHistory(state.messageCount);
        if (state.pendingQuestion) this.showQuestion(state.pendingQuestion.question);
      }
      if (this.sentTurn !== undefined && Date.now() - this.sentAt > MISSED_TURN_MS && !BUSY.has(state.status) && (state.lastTurn?.turn ?? 0) >= this.sentTurn) {
        // The turn this page started is over and the stream never showed it: read the session again.
        await this.open(id, { fresh: true });
        return;
      }
      if (!this.running) this.approvals.sync(state.pendingApprovals ?? []);
      this.updateControls();
      // While a turn runs the figures (status, iteration, tokens, budgets) are read once a second.
      if (this.running || BUSY.has(state.status)) this.refreshSoon();
    } catch {
      // The figures stay as they were; the stream says whether the server is reachable.
    }
  }

  /** @param {any} state */
  renderHeader(state) {
    const agent = state.agent;
    this.headerAgent = Boolean(agent);
    byId('session-title').textContent = agent ? `${agent.icon ? `${agent.icon} ` : ''}${agent.name}${agent.title ? ` — ${agent.title}` : ''}` : 'Session';
    const link = /** @type {HTMLAnchorElement} */ (byId('web-ui-link'));
    link.hidden = !state.webUiUrl;
    if (state.webUiUrl) link.href = state.webUiUrl;
    const commands = agent?.commands ?? [];
    replace(
      byId('menu'),
      ...commands.map((/** @type {{cmd: string, description: string}} */ item) =>
        h(
          'button',
          {
            type: 'button',
            class: 'command',
            title: item.description,
            onclick: () => {
              this.message.value = item.cmd;
              this.message.focus();
            },
          },
          h('code', {}, item.cmd),
          h('span', { class: 'description' }, item.description),
        ),
      ),
    );
  }

  /** @param {any} state */
  renderState(state) {
    this.state = state;
    const stats = [];
    const stat = (/** @type {string} */ term, /** @type {string} */ value, /** @type {string} */ testid) => stats.push(h('div', {}, h('dt', {}, term), h('dd', { 'data-testid': testid }, value)));
    stat('Status', String(state.status ?? '').replace(/_/g, ' '), 'session-status');
    stat('Turn', String(state.turn ?? 0), 'session-turn');
    stat('Iteration', `${state.iteration ?? 0} / ${state.maxIterations ?? '–'}`, 'session-iteration');
    const usage = state.usage ?? {};
    stat('Tokens', `${count(usage.totalTokens)} (${count(usage.promptTokens)} in, ${count(usage.completionTokens)} out)`, 'session-tokens');
    const budget = state.budget;
    if (budget) {
      const use = (/** @type {{used: number, limit?: number}} */ b, /** @type {(n: number) => string} */ fmt = count) =>
        b.limit === undefined ? `${fmt(b.used)}` : `${fmt(b.used)} of ${fmt(b.limit)}`;
      stat('Turn budget', use(budget.turnTokens), 'budget-turn');
      stat('Session budget', use(budget.sessionTokens), 'budget-session');
      if (budget.cost && (budget.cost.used > 0 || budget.cost.limit !== undefined))
        stat(
          'Cost',
          use(budget.cost, (n) => n.toFixed(4)),
          'budget-cost',
        );
    }
    replace(byId('session-stats'), ...stats);
    if (budget?.warnings?.length) this.showError(`Budget: ${budget.warnings.join(', ')}`);
  }

  updateControls() {
    /** @type {HTMLButtonElement} */ (byId('send')).disabled = this.running || this.loading;
    /** @type {HTMLButtonElement} */ (byId('interrupt')).disabled = !this.running;
    /** @type {HTMLButtonElement} */ (byId('extend')).disabled = !this.running;
    const ended = this.state && (this.state.status === 'completed' || this.state.status === 'failed');
    /** @type {HTMLButtonElement} */ (byId('end-session')).disabled = Boolean(ended);
    byId('conversation').setAttribute('aria-busy', String(this.running));
    this.section.dataset.running = String(this.running);
  }

  /** @param {string | undefined} question */
  showQuestion(question) {
    byId('question').hidden = !question;
    byId('question-text').textContent = question ?? '';
    byId('message-label').textContent = question ? 'Your answer' : 'Message';
  }

  /** @param {string} [message] */
  showError(message) {
    const el = byId('session-error');
    el.hidden = !message;
    el.textContent = message ?? '';
  }

  /**
   * @param {import('./event-stream.js').StreamStatus} status
   * @param {string} [detail]
   */
  onStreamStatus(status, detail) {
    const el = byId('stream-status');
    el.dataset.status = status;
    el.textContent = status === 'open' ? 'live' : status === 'connecting' ? 'connecting…' : status === 'closed' ? '' : (detail ?? status);
    if (status === 'open' || status === 'ended') this.refreshSoon(0);
    if (status === 'ended') {
      this.running = false;
      this.updateControls();
    }
  }

  scheduleSave() {
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      this.save();
    }, 200);
  }

  /** What a reload needs: the last event handled and the running turn as shown. */
  save() {
    if (!this.id || !this.stream) return;
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    const lastEventId = this.stream.lastEventId;
    if (!lastEventId) return;
    saveStream(this.id, this.running && this.runId ? { lastEventId, runId: this.runId, items: this.conversation.snapshot() } : { lastEventId });
  }
}

/**
 * Whether a transcript message opens a turn: the user's message, or the answer to the model's
 * question (an `ask_question` result, `{"success":true,"answer":…}`), as the server counts them.
 * @param {{role: string, content?: unknown}} message
 */
function startsTurn(message) {
  if (message.role === 'user') return true;
  return message.role === 'tool' && typeof message.content === 'string' && message.content.startsWith('{"success":true,"answer":');
}
