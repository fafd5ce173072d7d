/**
 * The names the model sees for MCP tools, and the patterns of allow-lists. A tool `search` of the
 * server `github` is offered as `github__search`; a name the model API would refuse (characters
 * outside letters, digits, `_` and `-`, or longer than 64) is made valid, with a short hash of the
 * original so two tools never end up with the same name.
 */
import { createHash } from 'node:crypto';
import { MCP_NAME_SEPARATOR, TOOL_NAME_PATTERN } from '../../common/offered-tools';
import { MCP_SERVER_NAME_PATTERN } from './mcp-config';

/** Longest function name the model API accepts. */
const MAX_NAME_LENGTH = 64;
/** Hex digits of the hash added to a name that had to be changed. */
const HASH_LENGTH = 6;

/**
 * The name the model calls `tool` of `server` by: `${server}__${tool}` when that is a valid
 * function name. Otherwise invalid characters become `_` and the name is cut to fit, followed by
 * `_` and six hex digits of a hash of the original (so `a.b` and `a_b` stay apart); the server's
 * part is never changed, so the name still says which server a tool is from. Undefined only when
 * no name can be made: an empty tool name, or a server name that is not a valid one.
 */
export function mcpToolName(server: string, tool: string): string | undefined {
  if (tool === '' || !MCP_SERVER_NAME_PATTERN.test(server)) return undefined;
  const prefix = `${server}${MCP_NAME_SEPARATOR}`;
  const plain = `${prefix}${tool}`;
  if (TOOL_NAME_PATTERN.test(plain)) return plain;
  const hash = createHash('sha256').update(server).update('\0').update(tool).digest('hex').slice(0, HASH_LENGTH);
  const room = MAX_NAME_LENGTH - prefix.length - 1 - HASH_LENGTH;
  // Whole code points, so a cut never leaves half a character behind (it would become `_` anyway).
  const sanitized = Array.from(tool, (ch) => (/^[A-Za-z0-9_-]$/.test(ch) ? ch : '_'))
    .slice(0, room)
    .join('');
  return `${prefix}${sanitized}_${hash}`;
}
