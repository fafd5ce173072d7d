/**
 * The tool settings of a new session (run and chat): which tools the model is offered, the MCP
 * servers added to the project's `.mcp.json` (read from the files given), whether that file is
 * read, which MCP tools run without approval, and delegation; from the command line's options and,
 * for the options not given, the LOOPWRIGHT_* environment variables: the settings table's `tools`
 * flags (common/settings/session-settings.ts). Only settings that were given are set, so the
 * session's own defaults apply to the rest (the agent's allow-list, the project's servers).
 */
import type { SessionInput } from '../../common/session-types';
import { settingsEnvHelp } from '../setting-flags';
import { settingsFromOptions } from './settings-from-options';

export { readMcpConfigFiles } from './mcp-config-files';

/** The tool flags (run and chat), as commander parsed them (see the settings table's `tools` flags). */
export type ToolSettingOptions = object;

/** The session settings these flags give. */
export type ToolSessionSettings = Pick<SessionInput, 'tools' | 'mcpServers' | 'projectMcpConfig' | 'allowTools' | 'delegation'>;

/** The environment variables that give defaults to the tool flags. */
export const TOOL_SETTINGS_ENV_NAMES: readonly string[] = settingsEnvHelp('tools').map(([name]) => name);

/**
 * The session settings of the options and the environment; only what was given is set. The
 * `--mcp-config` files are read here (relative to `cwd`); a file that cannot be read, is not JSON
 * or holds a bad server is a usage mistake naming the file and the field.
 */
export function toolSessionSettings(options: ToolSettingOptions, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): ToolSessionSettings {
  return settingsFromOptions(options, 'tools', { env, cwd }) as ToolSessionSettings;
}
