/**
 * The few DOM helpers the app needs. Text always goes in as text nodes (never as HTML), so nothing
 * a model, a tool or a file says can become markup in the page.
 */

/**
 * An element: `h('button', {type: 'button', onclick}, 'Send')`. Attributes named `on…` are
 * listeners, `dataset` is copied to data-* attributes (undefined ones left out), `hidden`/`disabled` are properties, the rest
 * are attributes (undefined and false ones left out). Children are nodes or strings.
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {...(Node | string | undefined | null | false)} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name === 'dataset') {
      for (const [key, data] of Object.entries(/** @type {Record<string, unknown>} */ (value))) if (data !== undefined && data !== null) el.dataset[key] = String(data);
    } else if (name === 'hidden' || name === 'disabled' || name === 'checked' || name === 'value') /** @type {any} */ (el)[name] = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, ...children);
  return el;
}

/**
 * Append nodes and strings (as text) to `el`, skipping empty ones.
 * @param {Element} el
 * @param {...(Node | string | undefined | null | false)} children
 */
export function append(el, ...children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/**
 * Replace the children of `el`.
 * @param {Element} el
 * @param {...(Node | string | undefined | null | false)} children
 */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, ...children);
}

/**
 * The element with this id; throws when the page lacks it (a broken index.html).
 * @param {string} id
 * @returns {HTMLElement}
 */
export function byId(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el;
}

/**
 * A whole number with thousands separators.
 * @param {number | undefined} n
 */
export function count(n) {
  return typeof n === 'number' && Number.isFinite(n) ? n.toLocaleString('en-US') : '–';
}

/**
 * JSON text indented for reading, or the text itself when it is not JSON (a model's arguments can
 * be broken JSON: shown as they are, exactly).
 * @param {string} text
 */
export function prettyJson(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
