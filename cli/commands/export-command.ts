/**
 * `loopwright export <id> [--out file] [--decoded]`: a session's history (every run) as a file
 * `loopwright eval` replays, kept in git as a test case (client/session-export.ts). Payloads stay
 * as the server holds them unless `--decoded`; secrets are redacted either way.
 */
import fs from 'node:fs';
import path from 'node:path';
import { exportSession } from '../../client/session-export';
import { EXIT } from '../exit-codes';
import type { CommandOutput } from '../output';
import { openTemporal } from '../temporal-session';

export interface ExportOptions {
  out?: string;
  decoded?: boolean;
}

export async function exportCommand(workflowId: string, options: ExportOptions, out: CommandOutput): Promise<number> {
  const temporal = await openTemporal(out);
  try {
    const file = await exportSession(temporal.client, workflowId, { payloads: options.decoded ? 'decoded' : 'encoded' });
    const text = `${JSON.stringify(file, null, 1)}\n`;
    if (!options.out) {
      out.log(text.trimEnd());
      return EXIT.OK;
    }
    const target = path.resolve(options.out);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, text);
    const events = file.runs.reduce((n, r) => n + r.history.events.length, 0);
    out.error(`Exported ${workflowId}: ${file.runs.length} run(s), ${events} events, payloads ${file.payloads} → ${target}`);
    return EXIT.OK;
  } finally {
    await temporal.close();
  }
}
