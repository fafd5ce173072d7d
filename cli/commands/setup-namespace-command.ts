/**
 * `loopwright setup-namespace`: prepares the namespace of the Temporal server the environment names
 * (TEMPORAL_ADDRESS, a temporal.toml profile, TLS or an API key) for sessions: creates it when
 * missing and registers Loopwright's search attributes, so `loopwright list` and the Web UI's
 * filters work on a cluster as on the embedded server.
 */
import { NamespaceSetupError, setupNamespace } from '../../client/server/namespace-setup';
import type { CommandOutput } from '../output';
import { openTemporal } from '../temporal-session';

/** Options of `loopwright setup-namespace`, as commander parsed them. */
export interface SetupNamespaceOptions {
  json?: boolean;
  /** `--retention <days>`: retention of closed sessions, for a namespace this creates. */
  retention?: number;
  /** `--no-create`: fail rather than create a missing namespace. */
  create?: boolean;
}

export async function setupNamespaceCommand(options: SetupNamespaceOptions, out: CommandOutput): Promise<number> {
  const temporal = await openTemporal(out);
  try {
    const result = await setupNamespace(temporal.client.connection, {
      namespace: temporal.namespace,
      create: options.create !== false,
      ...(options.retention === undefined ? {} : { retentionDays: options.retention }),
    });
    if (options.json) {
      out.log(JSON.stringify({ address: temporal.target.address, ...result }));
    } else {
      out.log(`Namespace ${result.namespace} at ${temporal.target.address}: ${result.created ? 'created' : 'exists'}`);
      out.log(`Search attributes added: ${result.added.join(', ') || 'none'}${result.present.length > 0 ? `; already there: ${result.present.join(', ')}` : ''}`);
    }
    return 0;
  } catch (error) {
    if (!(error instanceof NamespaceSetupError)) throw error;
    if (options.json) out.log(JSON.stringify({ error: error.message, type: error.name }));
    else out.error(error.message);
    return 1;
  } finally {
    await temporal.close();
  }
}
