/** This machine's host id: `LOOPWRIGHT_HOST_ID`, else the host name (see common/files-host.ts). */
import os from 'node:os';
import { HOST_ID_PATTERN, toHostId } from '../common/files-host';

/** The host id workers on this machine serve files for, and sessions started here record. */
export function localHostId(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.LOOPWRIGHT_HOST_ID?.trim();
  if (given) {
    if (!HOST_ID_PATTERN.test(given)) throw new Error(`LOOPWRIGHT_HOST_ID must be letters, digits, '.', '_' or '-' (at most 100), got "${given}"`);
    return given;
  }
  return toHostId(os.hostname());
}
