/**
 * `scripts/cluster.sh start | stop | status | destroy`: a real Temporal cluster on this machine
 * (PostgreSQL, frontend, two history hosts, matching, worker; see scripts/cluster/), for the
 * cluster test suite and for trying Loopwright against something other than the dev server. `start`
 * builds the server the first time (scripts/setup-cluster.sh), prepares the namespace and prints the
 * address to point TEMPORAL_ADDRESS at.
 */
import { defaultClusterDir, TemporalCluster } from './cluster/temporal-cluster';

const USAGE = 'usage: scripts/cluster.sh start | stop | status | destroy   (LOOPWRIGHT_CLUSTER_DIR: state folder, default tmp/cluster)';

async function main(action: string | undefined): Promise<number> {
  const cluster = new TemporalCluster(defaultClusterDir(), process.env.TEMPORAL_NAMESPACE || 'default');
  switch (action) {
    case 'start': {
      const started = Date.now();
      const setup = await cluster.start(undefined, (line) => console.error(`cluster: ${line}`));
      console.error(`cluster: namespace ${setup.namespace}${setup.created ? ' created' : ''}; search attributes added: ${setup.added.join(', ') || 'none (all present)'}`);
      console.error(`cluster: ready in ${((Date.now() - started) / 1000).toFixed(1)} s; state and logs in ${cluster.dir}`);
      console.log(`TEMPORAL_ADDRESS=${cluster.address}`);
      console.log(`TEMPORAL_NAMESPACE=${setup.namespace}`);
      return 0;
    }
    case 'stop':
      await cluster.stop();
      console.error('cluster: stopped (data kept; `destroy` removes it)');
      return 0;
    case 'destroy':
      await cluster.destroy();
      console.error(`cluster: stopped and ${cluster.dir} removed`);
      return 0;
    case 'status': {
      const processes = cluster.status();
      if (processes.length === 0) {
        console.log(`no cluster in ${cluster.dir}`);
        return 1;
      }
      for (const p of processes) console.log(`${p.name.padEnd(10)} ${p.running ? 'running' : 'stopped'}  port ${p.port}${p.pid === undefined ? '' : `  pid ${p.pid}`}`);
      if (processes.every((p) => p.running)) console.log(`TEMPORAL_ADDRESS=${cluster.address}`);
      return processes.every((p) => p.running) ? 0 : 1;
    }
    default:
      console.error(USAGE);
      return 2;
  }
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`cluster: ${(error as Error).message}`);
    process.exit(1);
  },
);
