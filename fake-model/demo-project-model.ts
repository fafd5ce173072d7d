/**
 * A scripted stand-in for a model for `loopwright demo <project>` when no OPENAI_API_KEY is set:
 * it plays any BMAD agent the way a model would, by reading what the session sent it. It runs the
 * first menu item (an agent skill's item activates its skill; a compiled agent's item loads its
 * `exec` or `workflow` file), reads the first reference or asset the skill lists by its bare path,
 * saves a short document in the output folder, and answers. Its replies are canned: it exists so
 * the quick start runs on a project made by the BMAD installer without a model. (It never writes
 * the word its server's API key is, `scripted`: replies are redacted of the key.)
 */
import type { ChatMessage, ToolMessage } from '../common/messages';
import type { RecordedRequest } from './recorded-request';
import { type Responder, text, toolCalls } from './steps';

/** The name of the document the scripted run saves (relative: it lands in the session's output folder). */
export const DEMO_DOCUMENT = 'loopwright-demo.md';

/** The responder the fake model server uses for `demo <project>`. */
export const projectDemoResponder: Responder = (request: RecordedRequest) => {
  const messages = (request.body?.messages ?? []) as ChatMessage[];
  const last = messages[messages.length - 1];
  if (!last) return text('No messages were sent.');
  const system = String(messages[0]?.content ?? '');
  if (last.role === 'user') return firstItem(system);
  if (last.role === 'tool') return afterTool(messages, last, system);
  return text('(demo model) Ready for your next message.');
};

/** The first menu item: an agent skill's `→ skill name`, or a compiled agent's `Exec:`/`Workflow:` file. */
function firstItem(system: string): ReturnType<Responder> {
  const skill = /^\d+\. \[[^\]]+\] .*? → skill (\S+)$/m.exec(system)?.[1];
  if (skill) return toolCalls([{ name: 'activate_skill', arguments: { name: skill } }]);
  const file = /^ {2}(?:Exec|Workflow): (\S+)$/m.exec(system)?.[1];
  if (file) return toolCalls([{ name: 'read_file', arguments: { file_path: file } }]);
  return text('(demo model) Hello! This agent has no menu item to run; ask me anything.');
}

function afterTool(messages: ChatMessage[], last: ToolMessage, system: string): ReturnType<Responder> {
  const result = JSON.parse(last.content) as Record<string, unknown>;
  const call = findCall(messages, last.tool_call_id);
  if (!result.success) return text(`(demo model) The ${call?.function.name ?? 'tool'} call failed: ${String(result.error)}`);
  if (call?.function.name === 'activate_skill') {
    // Tier 3: the first reference or asset the activation lists, by its bare path.
    const file = /<file>((?:references|assets)\/[^<]+)<\/file>/.exec(String(result.content ?? ''))?.[1];
    if (file) return toolCalls([{ name: 'read_file', arguments: { file_path: file } }]);
  }
  if (call?.function.name === 'read_file' || call?.function.name === 'activate_skill') {
    const agent = /^You are (.+?)\.$/m.exec(system)?.[1] ?? 'the agent';
    const loaded = messages
      .filter((m): m is ToolMessage => m.role === 'tool')
      .map((m) => (JSON.parse(m.content) as { path?: unknown }).path)
      .filter((p): p is string => typeof p === 'string');
    const document = [
      `# Demo run of ${agent}`,
      '',
      "Loopwright's demo model (canned replies, not a real model) ran the agent's first menu item. A real model would now follow its instructions with you.",
      '',
      'Loaded:',
      ...loaded.map((p) => `- ${p}`),
      '',
    ].join('\n');
    return toolCalls([{ name: 'save_output', arguments: { file_path: DEMO_DOCUMENT, content: document } }]);
  }
  if (call?.function.name === 'save_output') {
    return text(`(demo model) I ran the first menu item and saved a note of what I loaded to ${String(result.path)}. With a real model, I would now follow its steps with you.`);
  }
  return text('(demo model) Done.');
}

function findCall(messages: ChatMessage[], id: string): { function: { name: string } } | undefined {
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    const call = message.tool_calls?.find((c) => c.id === id);
    if (call) return call;
  }
  return undefined;
}
