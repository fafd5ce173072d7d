/**
 * The conversation as the page shows it: user and agent messages, tool calls with their exact
 * arguments, output and result, and notices (a turn interrupted, an error). A list of plain items
 * (the model, which a reload restores from sessionStorage) and the DOM built from them, updated in
 * place as the stream's events arrive: a reply's text grows in one text node.
 */
import { h, prettyJson, replace } from './dom.js';

/**
 * @typedef {{kind: 'user', id: string, text: string, pending?: boolean}} UserItem
 * @typedef {{kind: 'assistant', id: string, text: string, done?: boolean}} AssistantItem
 * @typedef {{kind: 'tool', id: string, name: string, args: string, argsDone?: boolean, output?: string, result?: string, status: 'running' | 'waiting' | 'done'}} ToolItem
 * @typedef {{kind: 'notice', id: string, text: string, tone?: 'error' | 'info'}} NoticeItem
 * @typedef {UserItem | AssistantItem | ToolItem | NoticeItem} Item
 */

/** Characters of a tool's live output kept on the page (the end of it). */
const MAX_OUTPUT_CHARS = 20_000;

/** The main argument of a tool call, for its one-line summary. */
const DETAIL_ARGS = ['file_path', 'path', 'command', 'workflow_path', 'name', 'skill', 'question', 'pattern'];

export class Conversation {
  /** @param {HTMLElement} list the `<ol>` the items go in */
  constructor(list) {
    this.list = list;
    /** @type {Item[]} */
    this.items = [];
    /** @type {Map<string, {item: Item, el: HTMLElement, parts: Record<string, any>}>} */
    this.byId = new Map();
    /** Index of the running turn's first item: what `snapshot()` saves. */
    this.runStart = 0;
    this.noticeCount = 0;
    /** The scrolling area around the list: kept at its end while the user reads the end. */
    this.scroller = list.closest('.scroll') ?? list;
  }

  /**
   * Run `change`, then keep the view at the end if it was there (a reader who scrolled up to read
   * is left where they are).
   * @param {() => void} change
   */
  follow(change) {
    const s = this.scroller;
    const atEnd = s.scrollHeight - s.scrollTop - s.clientHeight < 60;
    change();
    if (atEnd) s.scrollTop = s.scrollHeight;
  }

  clear() {
    this.items = [];
    this.byId.clear();
    this.runStart = 0;
    replace(this.list);
  }

  /**
   * The running turn starts here: its items are the ones `snapshot()` returns (with the message
   * this page sent for it, still waiting for the stream's copy).
   */
  markRunStart() {
    const last = this.items[this.items.length - 1];
    this.runStart = last && last.kind === 'user' && last.pending ? this.items.length - 1 : this.items.length;
  }

  /** The running turn's items, to save. */
  snapshot() {
    return this.items.slice(this.runStart);
  }

  /**
   * Show saved items again (a reload mid-turn); they are the running turn's.
   * @param {Item[]} items
   */
  restore(items) {
    this.markRunStart();
    for (const item of items) this.add({ ...item });
  }

  /**
   * The transcript's messages (GET /api/sessions/:id/messages), without the system prompt.
   * @param {{role: string, content?: string | null, tool_calls?: {id: string, function: {name: string, arguments: string}}[], tool_call_id?: string}[]} messages
   * @param {number} from index of the first one in the transcript (ids stay unique across pages)
   * @param {{prepend?: boolean}} [options] an earlier page: its items go before everything shown
   */
  addTranscript(messages, from, options = {}) {
    let at = options.prepend ? 0 : undefined;
    const put = (/** @type {Item} */ item) => {
      if (this.byId.has(item.id)) return;
      this.add(item, at === undefined ? {} : { before: at++ });
    };
    messages.forEach((message, i) => {
      const id = `t${from + i}`;
      if (message.role === 'user') put({ kind: 'user', id, text: String(message.content ?? '') });
      else if (message.role === 'assistant') {
        if (message.content) put({ kind: 'assistant', id, text: message.content, done: true });
        for (const call of message.tool_calls ?? []) {
          put({ kind: 'tool', id: call.id, name: call.function.name, args: call.function.arguments, argsDone: true, status: 'done' });
        }
      } else if (message.role === 'tool' && message.tool_call_id) {
        const content = String(message.content ?? '');
        this.toolResult(message.tool_call_id, content);
        // The user's answer to the model's question is that call's result: shown as what the user said.
        const answer = answerOf(content);
        if (answer !== undefined) put({ kind: 'user', id, text: answer });
      }
    });
  }

  /**
   * A message the user sent from this page: shown at once, until the stream's own copy of it
   * (`loopwright.user_message`) takes its place.
   * @param {string} text
   */
  addPendingUser(text) {
    this.add({ kind: 'user', id: `pending-${Date.now()}-${this.items.length}`, text, pending: true });
  }

  /**
   * The turn's user message (or answer to a question) as the stream gives it: the pending one
   * sent from this page, or a message sent elsewhere (the command line, another tab).
   * @param {string} messageId
   * @param {string} text
   */
  userMessage(messageId, text) {
    if (this.byId.has(messageId)) return;
    const pending = this.items.find((item) => item.kind === 'user' && item.pending);
    if (pending) {
      const entry = this.byId.get(pending.id);
      this.byId.delete(pending.id);
      pending.id = messageId;
      delete (/** @type {UserItem} */ (pending).pending);
      if (entry) this.byId.set(messageId, entry);
      return;
    }
    this.add({ kind: 'user', id: messageId, text });
  }

  /** Drop the pending message (the server refused it). */
  dropPendingUser() {
    const at = this.items.findIndex((item) => item.kind === 'user' && item.pending);
    if (at < 0) return;
    const [item] = this.items.splice(at, 1);
    this.byId.get(item.id)?.el.remove();
    this.byId.delete(item.id);
    if (at < this.runStart) this.runStart -= 1;
  }

  /** @param {string} messageId */
  startText(messageId) {
    if (!this.byId.has(messageId)) this.add({ kind: 'assistant', id: messageId, text: '' });
  }

  /**
   * @param {string} messageId
   * @param {string} delta
   */
  appendText(messageId, delta) {
    this.startText(messageId);
    const entry = this.byId.get(messageId);
    if (!entry || entry.item.kind !== 'assistant') return;
    entry.item.text += delta;
    this.follow(() => entry.parts.text.appendData(delta));
  }

  /**
   * The reply is being written again (its model call is made again): what was shown of it goes.
   * @param {string} messageId
   */
  resetText(messageId) {
    const entry = this.byId.get(messageId);
    if (!entry || entry.item.kind !== 'assistant') return;
    entry.item.text = '';
    entry.parts.text.data = '';
    entry.el.dataset.restarted = 'true';
  }

  /** @param {string} messageId */
  endText(messageId) {
    const entry = this.byId.get(messageId);
    if (!entry || entry.item.kind !== 'assistant') return;
    entry.item.done = true;
    entry.el.setAttribute('aria-busy', 'false');
  }

  /**
   * @param {string} id
   * @param {string} name
   */
  startTool(id, name) {
    if (!this.byId.has(id)) this.add({ kind: 'tool', id, name, args: '', status: 'running' });
  }

  /**
   * @param {string} id
   * @param {string} delta
   */
  appendArgs(id, delta) {
    const entry = this.tool(id);
    if (!entry) return;
    entry.item.args += delta;
    entry.parts.args.textContent = entry.item.args;
  }

  /** @param {string} id */
  endArgs(id) {
    const entry = this.tool(id);
    if (!entry) return;
    entry.item.argsDone = true;
    this.renderTool(entry);
  }

  /**
   * More output of a running tool (a command).
   * @param {string} id
   * @param {string} text
   */
  toolOutput(id, text) {
    const entry = this.tool(id);
    if (!entry) return;
    entry.item.output = ((entry.item.output ?? '') + text).slice(-MAX_OUTPUT_CHARS);
    this.renderTool(entry);
  }

  /**
   * @param {string} id
   * @param {string} content
   */
  toolResult(id, content) {
    const entry = this.tool(id);
    if (!entry) return;
    entry.item.result = content;
    entry.item.status = 'done';
    this.renderTool(entry);
  }

  /**
   * The call waits for the user's yes or no.
   * @param {string} id
   */
  toolWaiting(id) {
    const entry = this.tool(id);
    if (!entry || entry.item.status === 'done') return;
    entry.item.status = 'waiting';
    this.renderTool(entry);
  }

  /**
   * The user decided: an approved call runs, a denied one gets its result from the session.
   * @param {string} id
   */
  toolDecided(id) {
    const entry = this.tool(id);
    if (!entry || entry.item.status !== 'waiting') return;
    entry.item.status = 'running';
    this.renderTool(entry);
  }

  /**
   * The arguments of a tool call as the model wrote them (for an approval).
   * @param {string} id
   */
  toolArgs(id) {
    const entry = this.tool(id);
    return entry ? entry.item.args : undefined;
  }

  /**
   * @param {string} text
   * @param {'error' | 'info'} [tone]
   * @param {string} [id] the stream's message id, so a notice is shown once
   */
  notice(text, tone = 'info', id = `n${Date.now()}-${++this.noticeCount}`) {
    if (!this.byId.has(id)) this.add({ kind: 'notice', id, text, tone });
  }

  /**
   * @param {string} id
   * @returns {{item: ToolItem, el: HTMLElement, parts: Record<string, any>} | undefined}
   */
  tool(id) {
    const entry = this.byId.get(id);
    return entry && entry.item.kind === 'tool' ? /** @type {any} */ (entry) : undefined;
  }

  /**
   * @param {Item} item
   * @param {{before?: number}} [where] insert before the item at this index (default: at the end)
   */
  add(item, where = {}) {
    const at = where.before ?? this.items.length;
    const { el, parts } = this.build(item);
    const entry = { item, el, parts };
    this.byId.set(item.id, entry);
    const next = this.items[at];
    this.items.splice(at, 0, item);
    if (at < this.runStart || (at === this.runStart && where.before !== undefined)) this.runStart += 1;
    const place = () => {
      if (next) this.list.insertBefore(el, this.byId.get(next.id)?.el ?? null);
      else this.list.append(el);
      if (item.kind === 'tool') this.renderTool(/** @type {any} */ (entry));
    };
    if (where.before === undefined) this.follow(place);
    else place();
  }

  /**
   * @param {Item} item
   * @returns {{el: HTMLElement, parts: Record<string, any>}}
   */
  build(item) {
    switch (item.kind) {
      case 'user':
        return { el: h('li', { class: 'msg user', 'data-testid': 'user-message' }, h('span', { class: 'who' }, 'You'), h('div', { class: 'text' }, item.text)), parts: {} };
      case 'assistant': {
        const text = document.createTextNode(item.text);
        const el = h(
          'li',
          { class: 'msg assistant', 'data-testid': 'assistant-message', 'aria-busy': item.done ? 'false' : 'true', dataset: { messageId: item.id } },
          h('span', { class: 'who' }, 'Agent'),
          h('div', { class: 'text', 'data-testid': 'assistant-text' }, text),
        );
        return { el, parts: { text } };
      }
      case 'tool': {
        const summary = h('summary');
        const args = h('pre', { class: 'args', 'data-testid': 'tool-args' });
        const output = h('pre', { class: 'output', 'data-testid': 'tool-output', hidden: true });
        const result = h('pre', { class: 'result', 'data-testid': 'tool-result', hidden: true });
        const details = h('details', {}, summary, h('div', { class: 'label' }, 'Arguments'), args, output, result);
        const el = h('li', { class: 'tool', 'data-testid': 'tool-call', dataset: { toolCallId: item.id } }, details);
        return { el, parts: { summary, args, output, result } };
      }
      default:
        return { el: h('li', { class: `notice ${item.tone ?? 'info'}`, 'data-testid': 'notice', role: item.tone === 'error' ? 'alert' : undefined }, item.text), parts: {} };
    }
  }

  /** @param {{item: ToolItem, el: HTMLElement, parts: Record<string, any>}} entry */
  renderTool(entry) {
    const { item, el, parts } = entry;
    const detail = item.argsDone ? mainArgument(item.args) : undefined;
    replace(
      parts.summary,
      h('span', { class: 'tool-name' }, item.name),
      detail ? h('span', { class: 'detail' }, detail) : undefined,
      h('span', { class: 'status' }, item.status === 'running' ? 'running…' : item.status === 'waiting' ? 'waiting for your approval' : 'done'),
    );
    el.dataset.status = item.status;
    parts.args.textContent = item.argsDone ? prettyJson(item.args) : item.args;
    parts.output.hidden = !item.output;
    parts.output.textContent = item.output ?? '';
    parts.result.hidden = item.result === undefined;
    parts.result.textContent = item.result ?? '';
  }
}

/**
 * The argument that says what a call does (its path, its command), shortened.
 * @param {string} args
 */
function mainArgument(args) {
  try {
    const parsed = JSON.parse(args);
    for (const key of DETAIL_ARGS) {
      const value = parsed?.[key];
      if (typeof value === 'string' && value) return value.length > 80 ? `${value.slice(0, 77)}…` : value;
    }
  } catch {
    // Broken arguments: the summary shows the name alone, the body the text as written.
  }
  return undefined;
}

/**
 * The user's answer, when a tool result is the answer to an `ask_question` call.
 * @param {string} content
 */
function answerOf(content) {
  if (!content.startsWith('{"success":true,"answer":')) return undefined;
  try {
    const answer = JSON.parse(content).answer;
    return typeof answer === 'string' ? answer : undefined;
  } catch {
    return undefined;
  }
}
