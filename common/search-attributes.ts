/**
 * Custom search attributes of a session, so the Web UI's list and `loopwright list` can find
 * sessions by agent, bundle and status. Prefixed so they do not clash with a namespace's own. The
 * embedded server registers them at start; on another server, register them once with
 * `loopwright setup-namespace` (client/server/namespace-setup.ts; see docs/guides/deployment.md). A session upserts them only when its
 * client found them registered (`SessionInput.searchAttributes`): an undefined attribute would fail
 * every workflow task.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const AGENT_ATTRIBUTE = defineSearchAttributeKey('LoopwrightAgent', SearchAttributeType.KEYWORD);
export const BUNDLE_ATTRIBUTE = defineSearchAttributeKey('LoopwrightBundle', SearchAttributeType.KEYWORD);
export const STATUS_ATTRIBUTE = defineSearchAttributeKey('LoopwrightStatus', SearchAttributeType.KEYWORD);
export const TURNS_ATTRIBUTE = defineSearchAttributeKey('LoopwrightTurns', SearchAttributeType.INT);
export const TOKENS_ATTRIBUTE = defineSearchAttributeKey('LoopwrightTotalTokens', SearchAttributeType.INT);

/** Every attribute, with the type name the `temporal` CLI and the operator API use. */
export const SESSION_SEARCH_ATTRIBUTES: readonly { name: string; type: 'Keyword' | 'Int' }[] = [
  { name: AGENT_ATTRIBUTE.name, type: 'Keyword' },
  { name: BUNDLE_ATTRIBUTE.name, type: 'Keyword' },
  { name: STATUS_ATTRIBUTE.name, type: 'Keyword' },
  { name: TURNS_ATTRIBUTE.name, type: 'Int' },
  { name: TOKENS_ATTRIBUTE.name, type: 'Int' },
];
