/**
 * Starting a session: a bundle or project path, its agents (with their menus) and the project's
 * skills from GET /api/agents, an approval policy (`writes` by default, as `loopwright chat` asks),
 * and POST /api/sessions.
 */
import { ApiError, get, post } from './api.js';
import { byId, h, replace } from './dom.js';

const LAST_BUNDLE_KEY = 'loopwright.bundlePath';

/**
 * @typedef {{id: string, name: string, title: string, icon?: string, menu: {cmd: string, description: string}[]}} AgentInfo
 */

export class Picker {
  /** @param {{onStarted: (id: string, agent: AgentInfo) => void}} options */
  constructor(options) {
    this.onStarted = options.onStarted;
    this.section = byId('picker');
    this.pathInput = /** @type {HTMLInputElement} */ (byId('bundle-path'));
    this.agentForm = /** @type {HTMLFormElement} */ (byId('agent-form'));
    this.error = byId('picker-error');
    /** @type {{bundlePath: string, projectRoot?: string, agents: AgentInfo[]} | undefined} */
    this.loaded = undefined;
    byId('bundle-form').addEventListener('submit', (e) => {
      e.preventDefault();
      void this.loadAgents();
    });
    this.agentForm.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.start();
    });
    try {
      this.pathInput.value = localStorage.getItem(LAST_BUNDLE_KEY) ?? '';
    } catch {
      // No storage: the field starts empty.
    }
  }

  /**
   * The example bundle the server ships: a button that fills it in, and the field's value when
   * nothing was typed before.
   * @param {string} bundlePath
   */
  offerExample(bundlePath) {
    const button = byId('use-example');
    button.hidden = false;
    button.onclick = () => {
      this.pathInput.value = bundlePath;
      void this.loadAgents();
    };
    if (!this.pathInput.value) this.pathInput.value = bundlePath;
  }

  show() {
    this.section.hidden = false;
    this.pathInput.focus();
  }

  hide() {
    this.section.hidden = true;
  }

  /** @param {string} [message] */
  showError(message) {
    this.error.hidden = !message;
    this.error.textContent = message ?? '';
  }

  async loadAgents() {
    const bundlePath = this.pathInput.value.trim();
    if (!bundlePath) return;
    this.showError();
    this.agentForm.hidden = true;
    const button = /** @type {HTMLButtonElement} */ (byId('show-agents'));
    button.disabled = true;
    try {
      const answer = await get('/agents', { bundlePath });
      this.loaded = answer;
      try {
        localStorage.setItem(LAST_BUNDLE_KEY, bundlePath);
      } catch {
        // Not remembered: nothing lost.
      }
      this.render(answer);
    } catch (err) {
      this.showError(err instanceof ApiError ? `${err.message}` : String(err));
    } finally {
      button.disabled = false;
    }
  }

  /** @param {{bundlePath: string, projectRoot?: string, agents: AgentInfo[], skills?: {name: string, description: string}[]}} answer */
  render(answer) {
    byId('project-root').textContent = answer.projectRoot && answer.projectRoot !== answer.bundlePath ? `Project: ${answer.projectRoot}` : `Bundle: ${answer.bundlePath}`;
    const list = byId('agent-list');
    if (answer.agents.length === 0) {
      replace(list, h('p', { class: 'hint' }, 'This folder has no agent.'));
    } else {
      replace(
        list,
        ...answer.agents.map((agent, i) => {
          const id = `agent-${i}`;
          return h(
            'div',
            { class: 'agent', 'data-testid': 'agent-option' },
            h('input', { type: 'radio', name: 'agent', id, value: agent.id, checked: i === 0, 'aria-describedby': `${id}-menu` }),
            h('label', { for: id }, h('span', { class: 'icon', 'aria-hidden': 'true' }, agent.icon ?? '🤖'), h('strong', {}, agent.name), agent.title ? ` — ${agent.title}` : ''),
            h('ul', { class: 'agent-menu', id: `${id}-menu`, 'aria-label': `${agent.name}'s commands` }, ...agent.menu.map((item) => h('li', {}, h('code', {}, item.cmd), ' ', item.description))),
          );
        }),
      );
    }
    const skills = answer.skills ?? [];
    byId('skills').hidden = skills.length === 0;
    replace(byId('skill-list'), ...skills.map((skill) => h('li', {}, h('strong', {}, skill.name), skill.description ? `: ${skill.description}` : '')));
    this.agentForm.hidden = false;
    /** @type {HTMLButtonElement} */ (byId('start-session')).disabled = answer.agents.length === 0;
  }

  async start() {
    if (!this.loaded) return;
    const checked = /** @type {HTMLInputElement | null} */ (this.agentForm.querySelector('input[name="agent"]:checked'));
    const agent = this.loaded.agents.find((a) => a.id === checked?.value);
    if (!agent) return;
    const policy = /** @type {HTMLSelectElement} */ (byId('approval-policy')).value;
    const button = /** @type {HTMLButtonElement} */ (byId('start-session'));
    button.disabled = true;
    this.showError();
    try {
      // Streamed replies, as `loopwright chat` asks for on a terminal: the page shows them as they are written.
      const body = {
        bundlePath: this.loaded.bundlePath,
        ...(this.loaded.projectRoot ? { projectRoot: this.loaded.projectRoot } : {}),
        agentId: agent.id,
        approval: { policy },
        modelSettings: { stream: true },
      };
      const { id } = await post('/sessions', body);
      this.onStarted(id, agent);
    } catch (err) {
      this.showError(err instanceof ApiError ? err.message : String(err));
    } finally {
      button.disabled = false;
    }
  }
}
