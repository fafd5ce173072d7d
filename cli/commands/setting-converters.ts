/**
 * What the command line makes of a flag's value besides parsing it, by the name the settings table
 * gives (`convert`, common/settings/setting.ts): folders made absolute, the project root checked,
 * this machine as the files host, `--mcp-config` files read. A converter runs whether or not its
 * flag was given (the project root is this folder unless one is), and returns undefined to leave
 * the setting out.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FlagConverters } from '../../common/settings/setting';
import { UsageError } from '../output';
import { filesHostSetting } from './files-host-option';
import { readMcpConfigFiles } from './mcp-config-files';

/** What a converter may read besides its flag's value. */
export interface ConvertContext {
  env: NodeJS.ProcessEnv;
  /** The folder relative paths are read from. */
  cwd: string;
  /** The value another setting gets from these options (`projectRoot` for `--output`). */
  valueOf(path: string): unknown;
}

/** A converter: the flag's parsed value (undefined when not given) to the setting's value. */
export type Converter<T> = (given: unknown, context: ConvertContext) => T | undefined;

/** The converters the settings table's flags name, by name. */
export const SETTING_CONVERTERS: { readonly [C in keyof FlagConverters]: Converter<FlagConverters[C]> } = {
  // `{project-root}` is the folder the command runs in (or --project-root), recorded as an absolute,
  // symlink-free path so that the worker's own folder never matters and replay sees the same value.
  projectRoot: (given, { cwd }) => {
    const root = path.resolve(cwd, (given as string | undefined) ?? '.');
    if (!fs.existsSync(root)) throw new UsageError(`--project-root ${given as string}: no such folder`);
    return fs.realpathSync(root);
  },
  projectPaths: (given, { valueOf }) => nonEmpty(given)?.map((dir) => path.resolve(valueOf('projectRoot') as string, dir)),
  absolutePaths: (given, { cwd }) => nonEmpty(given)?.map((dir) => path.resolve(cwd, dir)),
  filesHost: (given, { env }) => filesHostSetting(given as string | undefined, env).filesHost,
  mcpConfigFiles: (given, { cwd }) => {
    const servers = readMcpConfigFiles((given as string[] | undefined) ?? [], cwd);
    return Object.keys(servers).length > 0 ? servers : undefined;
  },
};

function nonEmpty(given: unknown): string[] | undefined {
  return Array.isArray(given) && given.length > 0 ? (given as string[]) : undefined;
}
