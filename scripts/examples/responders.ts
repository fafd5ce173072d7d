/**
 * What the scripted model answers in the examples that the demo's scripts do not cover: the worker
 * plugin's question (it reads a note through the MCP server and looks tickets up with the custom
 * tool) and the batch's items. Canned replies built from what the tools returned, so a reply shows
 * that each tool really ran.
 */
import type { ChatMessage, ToolMessage } from '../../common/messages';
import { type Responder, text, toolCalls } from '../../fake-model/server';

/**
 * The worker plugin: the first request reads kickoff.md with the MCP server and looks up the
 * tickets with the custom tool, all in one reply (they run in parallel); the next one answers.
 */
export const workerPluginResponder: Responder = (request) => {
  const messages = request.body?.messages ?? [];
  const offered = new Set((request.body?.tools ?? []).map((tool) => tool.function.name));
  for (const name of ['notes__read_text_file', 'get_ticket']) if (!offered.has(name)) return text(`(scripted model) I was not offered ${name}.`);
  const results = messages.filter((m): m is ToolMessage => m.role === 'tool');
  if (results.length === 0) {
    return toolCalls([
      { name: 'notes__read_text_file', arguments: { path: 'kickoff.md' } },
      { name: 'get_ticket', arguments: { id: 'TL-7' } },
      { name: 'get_ticket', arguments: { id: 'TL-9' } },
    ]);
  }
  const note = results.map((m) => m.content).find((content) => content.includes('Kick-off')) ?? '';
  const tickets = results
    .map((m) => JSON.parse(m.content) as { result?: { id?: string; title?: string; status?: string } })
    .flatMap((r) => (r.result?.id ? [`${r.result.id} "${r.result.title}" (${r.result.status})`] : []));
  const saturday = note.includes('Saturday') ? 'The shed opens on Saturday mornings, ' : '';
  return text(`(scripted model) ${saturday}so build ${tickets[0] ?? 'the first ticket'} first.\nThen ${tickets[1] ?? 'the second'}.`);
};

/** The batch: each item gets one line that quotes its message. */
export const batchResponder: Responder = (request) => {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const user = [...messages].reverse().find((m) => m.role === 'user');
  const asked = user && typeof user.content === 'string' ? user.content : '';
  return text(`(scripted model) On "${asked.slice(0, 60)}": write down who needs it and why, then start small.`);
};
