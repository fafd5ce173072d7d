import { redactSecrets, redactUrl, secretsOfUrl } from '../../../activities/redaction/redact';

describe('redactUrl', () => {
  it.each([
    ['user and password', 'http://alice:s3cretPass@127.0.0.1:9/v1', 'http://127.0.0.1:9/v1'],
    ['a user only', 'https://token123@llm.example.com/v1?x=1#f', 'https://llm.example.com/v1?x=1#f'],
    ['percent-encoded parts', 'http://us%40er:p%40ss@host/v1', 'http://host/v1'],
    ['an empty password', 'http://alice:@host:8080/', 'http://host:8080/'],
  ])('redactUrl: removes %s and keeps host, port, path', (_what, url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it('redactUrl: a URL without credentials comes back exactly as given', () => {
    expect(redactUrl('http://127.0.0.1:9/v1')).toBe('http://127.0.0.1:9/v1');
    // No trailing slash added: hints show what the operator configured.
    expect(redactUrl('https://api.example.com')).toBe('https://api.example.com');
  });

  it('redactUrl: a string the URL class cannot parse still loses its userinfo', () => {
    expect(redactUrl('http://alice:pw@ho st/v1')).toBe('http://ho st/v1');
    expect(redactUrl('//alice:pw@host/v1')).toBe('//host/v1');
  });
});

describe('secretsOfUrl', () => {
  it('secretsOfUrl: the password and username, longest first', () => {
    expect(secretsOfUrl('http://alice:s3cretPass@host/v1')).toEqual(['s3cretPass', 'alice']);
  });

  it('secretsOfUrl: both the encoded and the decoded form', () => {
    expect(secretsOfUrl('http://bob:p%40ss%20word@host')).toEqual(['p%40ss%20word', 'p@ss word', 'bob']);
  });

  it.each([
    ['no URL', undefined],
    ['no credentials', 'http://host/v1'],
    ['an unparseable URL', 'not a url'],
  ])('secretsOfUrl: none for %s', (_what, url) => {
    expect(secretsOfUrl(url)).toEqual([]);
  });

  it('secretsOfUrl: what it returns makes redactSecrets hide them', () => {
    const text = 'auth failed for alice with s3cretPass';
    expect(redactSecrets(text, secretsOfUrl('http://alice:s3cretPass@host'))).toBe('auth failed for [redacted] with [redacted]');
  });
});

describe('redactSecrets', () => {
  it('redactSecrets: strips the userinfo of any URL in the text, even with a short password', () => {
    expect(redactSecrets('GET http://al:pw@proxy.local:3128/x failed')).toBe('GET http://[redacted]@proxy.local:3128/x failed');
    // URL parsers take the last '@' of the authority: an unencoded '@' in the user hides nothing.
    expect(redactSecrets('at http://me@corp.example:pw@host/v1')).toBe('at http://[redacted]@host/v1');
    // An '@' after the path is not userinfo.
    expect(redactSecrets('see http://host/users/@me')).toBe('see http://host/users/@me');
    // And it stays linear on long hostile text.
    const hostile = `${'://a'.repeat(100_000)}${'x'.repeat(100_000)}`;
    const started = performance.now();
    redactSecrets(hostile, ['some-secret']);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
