import * as net from 'node:net';

/**
 * Asks the OS for a free TCP port on `host` by binding port 0 and closing again. Another process
 * could take it before the caller binds it; on a developer machine that race is rare enough.
 */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error(`could not read the port bound on ${host}`));
      });
    });
  });
}

/** True when something accepts TCP connections on `host:port` within `timeoutMs`. */
export function isPortOpen(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (open: boolean): void => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    // Refused or unreachable: the answer is simply "closed".
    socket.once('error', () => done(false));
  });
}

/** Splits `host:port` (IPv6 hosts in brackets); port defaults to 7233 like the SDK. */
export function splitAddress(address: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(address);
  if (match === null) throw new Error(`not a host:port address: ${address}`);
  const host = match[1].replace(/^\[|\]$/g, '');
  return { host, port: match[2] === undefined ? 7233 : Number(match[2]) };
}
