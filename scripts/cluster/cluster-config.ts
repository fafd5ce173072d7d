/**
 * The configuration files of the test cluster: one Temporal server config per process (the
 * processes differ only in the ports of their own service, so two history hosts can share a
 * machine) and one dynamic config file, all on PostgreSQL with SQL advanced visibility.
 */

/** The server processes of the cluster, each its own `temporal-server start --service <kind>`. */
export const CLUSTER_PROCESSES = ['frontend', 'history-1', 'history-2', 'matching', 'worker'] as const;
export type ClusterProcess = (typeof CLUSTER_PROCESSES)[number];

/** The Temporal service a process runs (`history-1` and `history-2` are both `history`). */
export function serviceOf(process: ClusterProcess): 'frontend' | 'history' | 'matching' | 'worker' {
  return process.startsWith('history') ? 'history' : (process as 'frontend' | 'matching' | 'worker');
}

/** Ports of one process on 127.0.0.1. */
export interface ProcessPorts {
  grpc: number;
  membership: number;
  /** The frontend's HTTP API only. */
  http?: number;
}

/** Everything the configs are rendered from. */
export interface ClusterLayout {
  pgPort: number;
  ports: Record<ClusterProcess, ProcessPorts>;
  numHistoryShards: number;
  dynamicConfigFile: string;
}

/**
 * Shards of the cluster's history: enough that both history hosts own some (a lost host's shards
 * move to the other), few enough that the idle cluster stays light on two cores.
 */
export const DEFAULT_HISTORY_SHARDS = 8;

/** Databases the schema tool creates: the main store and the visibility store. */
export const DATABASES = { main: 'temporal', visibility: 'temporal_visibility' } as const;

/** PostgreSQL's superuser of the cluster (trust authentication on 127.0.0.1 only). */
export const PG_USER = 'temporal';

/**
 * Dynamic config of the cluster: the same fast settings as Loopwright's dev server (task queues
 * read often, eager activities), namespace and search-attribute changes seen within a second (a
 * namespace set up by `loopwright setup-namespace` is used right away), and a shard owner that
 * lost its host found within seconds.
 */
export function renderDynamicConfig(): string {
  const values: [string, string][] = [
    ['history.transferProcessorMaxPollRPS', '1000'],
    ['history.timerProcessorMaxPollRPS', '1000'],
    ['system.enableActivityEagerExecution', 'true'],
    ['system.namespaceCacheRefreshInterval', '1s'],
    ['system.forceSearchAttributesCacheRefreshOnRead', 'true'],
  ];
  return values.map(([key, value]) => `${key}:\n  - value: ${value}\n`).join('');
}

function datastore(database: string, pgPort: number, maxConns: number): string {
  return [
    `      sql:`,
    `        pluginName: postgres12`,
    `        databaseName: ${database}`,
    `        connectAddr: "127.0.0.1:${pgPort}"`,
    `        connectProtocol: tcp`,
    `        user: ${PG_USER}`,
    `        password: ""`,
    `        maxConns: ${maxConns}`,
    `        maxIdleConns: ${maxConns}`,
    `        maxConnLifetime: 1h`,
  ].join('\n');
}

function serviceBlock(name: string, ports: ProcessPorts): string {
  return [
    `  ${name}:`,
    `    rpc:`,
    `      grpcPort: ${ports.grpc}`,
    `      membershipPort: ${ports.membership}`,
    `      bindOnLocalHost: true`,
    ...(ports.http === undefined ? [] : [`      httpPort: ${ports.http}`]),
  ].join('\n');
}

/** The server config of one process: its own service's ports, the others' as the cluster has them. */
export function renderServerConfig(layout: ClusterLayout, process: ClusterProcess): string {
  const history = serviceOf(process) === 'history' ? layout.ports[process] : layout.ports['history-1'];
  const frontend = `127.0.0.1:${layout.ports.frontend.grpc}`;
  return [
    `# ${process} of Loopwright's test cluster (written by scripts/cluster; edits are overwritten).`,
    `log:`,
    `  stdout: true`,
    `  level: warn`,
    `persistence:`,
    `  defaultStore: default`,
    `  visibilityStore: visibility`,
    `  numHistoryShards: ${layout.numHistoryShards}`,
    `  datastores:`,
    `    default:`,
    datastore(DATABASES.main, layout.pgPort, 20),
    `    visibility:`,
    datastore(DATABASES.visibility, layout.pgPort, 10),
    `global:`,
    `  membership:`,
    `    maxJoinDuration: 30s`,
    `    broadcastAddress: "127.0.0.1"`,
    `services:`,
    serviceBlock('frontend', layout.ports.frontend),
    serviceBlock('history', history),
    serviceBlock('matching', layout.ports.matching),
    serviceBlock('worker', layout.ports.worker),
    `clusterMetadata:`,
    `  enableGlobalNamespace: false`,
    `  failoverVersionIncrement: 10`,
    `  masterClusterName: active`,
    `  currentClusterName: active`,
    `  clusterInformation:`,
    `    active:`,
    `      enabled: true`,
    `      initialFailoverVersion: 1`,
    `      rpcName: frontend`,
    `      rpcAddress: "${frontend}"`,
    `dcRedirectionPolicy:`,
    `  policy: noop`,
    `publicClient:`,
    `  hostPort: "${frontend}"`,
    `dynamicConfigClient:`,
    `  filepath: "${layout.dynamicConfigFile}"`,
    `  pollInterval: 10s`,
    '',
  ].join('\n');
}
