import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TemporalConfigError } from '../../../client/server/errors';
import { connectionOptions, readTemporalEnv } from '../../../client/server/temporal-env';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-envconfig-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Writes a file in the test folder and returns its path. */
function write(name: string, text: string): string {
  fs.writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
}

/** The error `read` throws, as a TemporalConfigError. */
function configError(read: () => unknown): TemporalConfigError {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(TemporalConfigError);
    return error as TemporalConfigError;
  }
  throw new Error('expected a TemporalConfigError');
}

const TWO_PROFILES = `
[profile.default]
address = "localhost:7233"

[profile.cloud]
address = "ns.acct.tmprl.cloud:7233"
namespace = "ns.acct"
api_key = "cloud-key"

[profile.cloud.grpc_meta]
x-team = "agents"
`;

describe('readTemporalEnv', () => {
  test('readTemporalEnv: nothing set and no config file means no address, the default namespace, plaintext', () => {
    expect(readTemporalEnv({})).toEqual({ namespace: 'default' });
    // HOME without a temporal.toml: the default file is simply absent. Empty variables count as unset.
    expect(readTemporalEnv({ HOME: dir, TEMPORAL_ADDRESS: '', TEMPORAL_NAMESPACE: ' ' })).toEqual({ namespace: 'default' });
  });

  test('readTemporalEnv: temporal.toml with two profiles; the default one, then TEMPORAL_PROFILE selecting the other', () => {
    const file = write('temporal.toml', TWO_PROFILES);
    expect(readTemporalEnv({ TEMPORAL_CONFIG_FILE: file })).toEqual({ address: 'localhost:7233', addressSource: `profile "default" of ${file}`, namespace: 'default' });
    expect(readTemporalEnv({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud' })).toEqual({
      address: 'ns.acct.tmprl.cloud:7233',
      addressSource: `profile "cloud" of ${file}`,
      namespace: 'ns.acct',
      // An API key turns TLS on (Temporal Cloud refuses plaintext).
      tls: true,
      apiKey: 'cloud-key',
      metadata: { 'x-team': 'agents' },
    });
  });

  test('readTemporalEnv: the default file is temporalio/temporal.toml in the user config folder', () => {
    fs.mkdirSync(path.join(dir, 'config', 'temporalio'), { recursive: true });
    write('config/temporalio/temporal.toml', TWO_PROFILES);
    expect(readTemporalEnv({ XDG_CONFIG_HOME: path.join(dir, 'config'), TEMPORAL_PROFILE: 'cloud' }).address).toBe('ns.acct.tmprl.cloud:7233');
  });

  test('readTemporalEnv: variables override the file, gRPC metadata included', () => {
    const file = write('temporal.toml', TWO_PROFILES);
    const env = { TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud', TEMPORAL_ADDRESS: 'proxy.internal:7233', TEMPORAL_NAMESPACE: 'other', TEMPORAL_GRPC_META_X_TEAM: 'ops' };
    expect(readTemporalEnv(env)).toMatchObject({ address: 'proxy.internal:7233', namespace: 'other', apiKey: 'cloud-key', metadata: { 'x-team': 'ops' } });
    // TEMPORAL_TLS=false turns the API key's TLS default off (a local proxy).
    expect(readTemporalEnv({ ...env, TEMPORAL_TLS: 'false' }).tls).toBeUndefined();
  });

  test('readTemporalEnv: a missing profile, a missing file and a malformed file are named, without quoting the file', () => {
    const file = write('temporal.toml', TWO_PROFILES);
    const missing = configError(() => readTemporalEnv({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' }));
    expect(missing.field).toBe('TEMPORAL_PROFILE');
    expect(missing.message).toBe(`TEMPORAL_PROFILE is "prod", but ${file} has no such profile (it has: default, cloud)`);
    const noFile = configError(() => readTemporalEnv({ TEMPORAL_CONFIG_FILE: path.join(dir, 'nope.toml') }));
    expect(noFile.field).toBe('TEMPORAL_CONFIG_FILE');
    expect(configError(() => readTemporalEnv({ HOME: dir, TEMPORAL_PROFILE: 'prod' })).message).toMatch(/^TEMPORAL_PROFILE is "prod", but .*temporal\.toml does not exist$/);

    const broken = write('broken.toml', '[profile.default]\naddress = "a:1"\napi_key = "sekrit\n');
    const error = configError(() => readTemporalEnv({ TEMPORAL_CONFIG_FILE: broken }));
    expect(error.field).toBe(broken);
    expect(error.message).toMatch(new RegExp(`^Invalid ${broken}: .* \\(line 3, column \\d+\\)$`));
    expect(error.message).not.toContain('sekrit');
  });

  test('readTemporalEnv: a bad TEMPORAL_TLS or address is named with the value, never the API key', () => {
    const tls = configError(() => readTemporalEnv({ TEMPORAL_ADDRESS: 'example.test:7233', TEMPORAL_TLS: 'maybe', TEMPORAL_API_KEY: 'secret-key' }));
    expect(tls.field).toBe('TEMPORAL_TLS');
    expect(tls.message).toBe('Invalid TEMPORAL_TLS: expected true or false (got "maybe")');
    expect(configError(() => readTemporalEnv({ TEMPORAL_ADDRESS: 'http://example.test:7233' })).message).toMatch(/^Invalid TEMPORAL_ADDRESS: expected host:port/);
    const file = write('temporal.toml', '[profile.default]\naddress = "https://x:1"\napi_key = "secret-key"\n');
    const inFile = configError(() => readTemporalEnv({ TEMPORAL_CONFIG_FILE: file }));
    expect(inFile.field).toBe(file);
    expect(inFile.message).toContain(`Invalid address in ${file}`);
    expect(inFile.message).not.toContain('secret-key');
  });

  test('readTemporalEnv: certificate files become an mTLS config, from variables (old names too) or the file; a missing one is named', () => {
    const cert = write('client.pem', 'CERT');
    const key = write('client.key', 'KEY');
    const ca = write('ca.pem', 'CA');
    // envconfig reads files as Uint8Array; the client and the worker's native connection both take those.
    const text = (tls: unknown): unknown => JSON.parse(JSON.stringify(tls, (_key, value: unknown) => (value instanceof Uint8Array ? Buffer.from(value).toString() : value)));
    const fromVars = readTemporalEnv({
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_TLS_CLIENT_CERT_PATH: cert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: key,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: ca,
      TEMPORAL_TLS_SERVER_NAME: 'ns.acct',
    });
    const mtls = { clientCertPair: { crt: 'CERT', key: 'KEY' }, serverRootCACertificate: 'CA' };
    expect(text(fromVars.tls)).toEqual({ ...mtls, serverNameOverride: 'ns.acct' });
    expect(text(readTemporalEnv({ TEMPORAL_TLS_CERT: cert, TEMPORAL_TLS_KEY: key, TEMPORAL_TLS_CA: ca }).tls)).toEqual(mtls);
    const file = write('temporal.toml', `[profile.default]\naddress = "h:1"\n[profile.default.tls]\nclient_cert_path = "${cert}"\nclient_key_path = "${key}"\n`);
    expect(text(readTemporalEnv({ TEMPORAL_CONFIG_FILE: file }).tls)).toEqual({ clientCertPair: mtls.clientCertPair });

    const unreadable = configError(() => readTemporalEnv({ TEMPORAL_TLS_CLIENT_CERT_PATH: cert, TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'nope.key') }));
    expect(unreadable.field).toBe('TEMPORAL_TLS_CLIENT_KEY_PATH');
    expect(unreadable.message).toMatch(/^Invalid TEMPORAL_TLS_CLIENT_KEY_PATH: ENOENT.*nope\.key/);
    expect(configError(() => readTemporalEnv({ TEMPORAL_TLS_CLIENT_CERT_PATH: cert })).message).toMatch(/^Invalid TEMPORAL_TLS_CLIENT_KEY_PATH: a TLS client certificate and its key go together/);
  });
});

describe('connectionOptions', () => {
  test('connectionOptions: carries address, TLS, API key and metadata, and nothing unset', () => {
    expect(connectionOptions({ address: 'localhost:7233' })).toEqual({ address: 'localhost:7233' });
    const full = { address: 'a:1', tls: true, apiKey: 'k', metadata: { 'x-team': 'agents' } };
    expect(connectionOptions({ ...full, namespace: 'ns' } as typeof full)).toEqual(full);
  });
});
