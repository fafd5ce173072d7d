import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TemporalConfigError } from '../../../client/server/errors';
import { connectionOptions, readTemporalEnv } from '../../../client/server/temporal-env';

describe('readTemporalEnv', () => {
  test('readTemporalEnv: nothing set means no address, the default namespace, plaintext', () => {
    expect(readTemporalEnv({})).toEqual({ address: undefined, namespace: 'default' });
  });

  test('readTemporalEnv: a bad TEMPORAL_TLS value names the variable and the value', () => {
    let error: unknown;
    try {
      readTemporalEnv({ TEMPORAL_ADDRESS: 'example.test:7233', TEMPORAL_TLS: 'maybe' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TemporalConfigError);
    expect((error as TemporalConfigError).field).toBe('TEMPORAL_TLS');
    expect((error as Error).message).toBe('Invalid TEMPORAL_TLS: expected true or false (got "maybe")');
  });

  test('readTemporalEnv: a malformed TEMPORAL_ADDRESS is named', () => {
    expect(() => readTemporalEnv({ TEMPORAL_ADDRESS: 'http://example.test:7233' })).toThrow(/^Invalid TEMPORAL_ADDRESS: expected host:port/);
  });

  test('readTemporalEnv: an API key turns TLS on unless TEMPORAL_TLS=false, and stays out of errors', () => {
    expect(readTemporalEnv({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_API_KEY: 'secret-key' })).toEqual({
      address: 'ns.acct.tmprl.cloud:7233',
      namespace: 'default',
      tls: true,
      apiKey: 'secret-key',
    });
    expect(readTemporalEnv({ TEMPORAL_ADDRESS: 'proxy:7233', TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }).tls).toBeUndefined();
    expect(() => readTemporalEnv({ TEMPORAL_API_KEY: 'secret-key', TEMPORAL_TLS: 'on' })).toThrow(TemporalConfigError);
    expect(() => readTemporalEnv({ TEMPORAL_API_KEY: 'secret-key', TEMPORAL_TLS: 'on' })).not.toThrow(/secret-key/);
  });

  test('readTemporalEnv: certificate files become an mTLS config; a missing file is named', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-tls-'));
    try {
      fs.writeFileSync(path.join(dir, 'client.pem'), 'CERT');
      fs.writeFileSync(path.join(dir, 'client.key'), 'KEY');
      const settings = readTemporalEnv({
        TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
        TEMPORAL_NAMESPACE: 'ns.acct',
        TEMPORAL_TLS_CERT: path.join(dir, 'client.pem'),
        TEMPORAL_TLS_KEY: path.join(dir, 'client.key'),
      });
      expect(settings.namespace).toBe('ns.acct');
      expect(settings.tls).toEqual({ clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') } });
      expect(() =>
        readTemporalEnv({ TEMPORAL_TLS_CERT: path.join(dir, 'client.pem'), TEMPORAL_TLS_KEY: path.join(dir, 'nope.key') }),
      ).toThrow(/^Invalid TEMPORAL_TLS_KEY: cannot read .*nope\.key \(ENOENT\)/);
      expect(() => readTemporalEnv({ TEMPORAL_TLS_CERT: path.join(dir, 'client.pem') })).toThrow(
        'Invalid TEMPORAL_TLS_KEY: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('connectionOptions', () => {
  test('connectionOptions: carries address, tls and apiKey and nothing unset', () => {
    expect(connectionOptions({ address: 'localhost:7233' })).toEqual({ address: 'localhost:7233' });
    expect(connectionOptions({ address: 'a:1', tls: true, apiKey: 'k' })).toEqual({ address: 'a:1', tls: true, apiKey: 'k' });
  });
});
