/** `--files-host`: which host's workers run a session's file tools (see common/files-host.ts). */
import { HOST_ID_PATTERN } from '../../common/files-host';
import { localHostId } from '../../worker/host-id';
import { UsageError } from '../output';

/**
 * The files host a session records: this machine (LOOPWRIGHT_HOST_ID, else its host name) unless
 * `--files-host` names another, or `any` for any worker (a shared file system).
 */
export function filesHostSetting(given: string | undefined, env: NodeJS.ProcessEnv = process.env): { filesHost?: string } {
  if (given === 'any') return {};
  if (given === undefined) {
    try {
      return { filesHost: localHostId(env) };
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  if (!HOST_ID_PATTERN.test(given)) throw new UsageError(`--files-host ${given}: expected a host id (letters, digits, '.', '_', '-') or 'any'`);
  return { filesHost: given };
}
