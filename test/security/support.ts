import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { setOutboundResolver } from '../../src/lib/outbound-http.js';

/**
 * A TCP listener on 127.0.0.1 that only counts who connects to it. It stands where
 * an attacker would want Lumen to go (an internal service): any connection is a
 * failure of the guard.
 */
export interface Trap {
  readonly port: number;
  readonly connections: number;
  close(): Promise<void>;
}

export async function startTrap(): Promise<Trap> {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 7\r\nconnection: close\r\n\r\nreached');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Answers of the played DNS: a fixed list, or one list per successive question. */
export type Answer = string[] | (() => string[]);

/**
 * DNS played by the test (no DNS server, no traffic): names map to answers, every
 * question is recorded, unknown names do not exist. Installed as the outbound
 * client's resolver until `restore()`.
 */
export function playDns(initial: Record<string, Answer> = {}) {
  const answers = new Map<string, Answer>(Object.entries(initial));
  const asked: string[] = [];
  setOutboundResolver(async (hostname) => {
    asked.push(hostname);
    const answer = answers.get(hostname.toLowerCase());
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const list = typeof answer === 'function' ? answer() : answer;
    return list.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
  });
  return {
    asked,
    set(name: string, answer: Answer) {
      answers.set(name.toLowerCase(), answer);
    },
    /** How often a name was asked for. */
    count: (name: string) => asked.filter((n) => n === name).length,
    restore: () => setOutboundResolver(null),
  };
}

/** The first answer, then the second one for every later question: a DNS rebinding. */
export function rebinding(first: string, then: string): () => string[] {
  let n = 0;
  return () => (n++ === 0 ? [first] : [then]);
}
