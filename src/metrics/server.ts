import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../lib/logger.js';
import type { Metrics } from './registry.js';

export interface MetricsServer {
  readonly address: AddressInfo;
  close(): Promise<void>;
}

/**
 * GET /metrics on a port of its own (LUMEN_METRICS_PORT), so it can stay off the public
 * one; `/livez` and `/readyz` are answered there too, outside the public port's
 * connection caps, so an orchestrator's probes get through even a connection flood.
 * Nothing else is served there.
 */
export async function startMetricsServer(metrics: Metrics, host: string, port: number, log: Logger, health?: (path: string) => Promise<{ status: number; body?: unknown }> | null): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const probe = req.method === 'GET' || req.method === 'HEAD' ? health?.(path) : null;
    if (probe) {
      probe.then(
        (r) => res.writeHead(r.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(r.body ?? {})),
        () => res.writeHead(503).end(),
      );
      return;
    }
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    metrics.scrape().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : body),
      (err: unknown) => {
        log.error({ err }, 'metrics scrape failed');
        res.writeHead(500).end();
      },
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    address: server.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
