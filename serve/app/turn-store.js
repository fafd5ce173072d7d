/**
 * What the page keeps across a reload (sessionStorage, this tab only): per session, the id of the
 * last stream event it handled and the running turn as shown so far. A reload mid-turn shows that
 * turn again from here and asks the stream for what follows the id, so nothing is lost or shown
 * twice. Nothing secret is kept: only what the page showed.
 */

const PREFIX = 'loopwright.stream.';

/**
 * @typedef {{lastEventId?: string, runId?: string, items?: unknown[]}} SavedStream
 */

/**
 * @param {string} sessionId
 * @returns {SavedStream | undefined}
 */
export function loadStream(sessionId) {
  try {
    const raw = sessionStorage.getItem(PREFIX + sessionId);
    return raw ? JSON.parse(raw) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Save; false when the browser refused (storage full: a turn with very large tool output). The
 * page then forgets the id too, and a reload reads the running turn from its start.
 * @param {string} sessionId
 * @param {SavedStream} saved
 */
export function saveStream(sessionId, saved) {
  try {
    sessionStorage.setItem(PREFIX + sessionId, JSON.stringify(saved));
    return true;
  } catch {
    try {
      sessionStorage.removeItem(PREFIX + sessionId);
    } catch {
      // Storage unusable: nothing to undo.
    }
    return false;
  }
}

/**
 * Forget what was kept of a session (its transcript changed under it: a rewind).
 * @param {string} sessionId
 */
export function forgetStream(sessionId) {
  try {
    sessionStorage.removeItem(PREFIX + sessionId);
  } catch {
    // Nothing kept.
  }
}
