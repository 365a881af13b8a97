import type { AddressInfo } from 'node:net';
import { createHttpServer, type HttpServer } from './http/server.js';
import { createPartnerSurface } from './http/partner-surface.js';
import { createAdminSurface } from './http/admin-surface.js';
import { createTelemetrySurface } from './http/telemetry-surface.js';
import { createSandboxSurface } from './http/sandbox-surface.js';
import { createOpen311Surface } from './http/open311-surface.js';
import type { ApiSurface } from './http/surface.js';
import type { Runtime } from './runtime.js';
import { startMetricsServer, type MetricsServer } from './metrics/index.js';
import { undecryptableSecrets } from './services/partners/index.js';

export interface RunningApp {
  readonly http: HttpServer;
  readonly address: AddressInfo;
  /** Where GET /metrics is served when LUMEN_METRICS_PORT is set; null: on `address`. */
  readonly metricsAddress: AddressInfo | null;
  /** Graceful stop: stop accepting, drain in-flight requests, stop workers, close the pool. */
  stop(): Promise<void>;
}

/** Everything served over HTTP, one surface per OpenAPI document. */
export async function createSurfaces(): Promise<ApiSurface<unknown>[]> {
  // The sandbox first: its base path lies inside the partner API's.
  return [(await createSandboxSurface()) as ApiSurface<unknown>, (await createPartnerSurface()) as ApiSurface<unknown>, (await createAdminSurface()) as ApiSurface<unknown>, (await createTelemetrySurface()) as ApiSurface<unknown>, (await createOpen311Surface()) as ApiSurface<unknown>];
}

/** HTTP and job workers on an open runtime. */
export async function startApp(rt: Runtime): Promise<RunningApp> {
  const surfaces = await createSurfaces();
  // Stored secrets the configured keys cannot open make /readyz fail (checked at start and every minute).
  let secretsProblem: string | null = null;
  const checkSecrets = async () => {
    const found = await undecryptableSecrets(rt).catch(() => secretsProblem);
    if (found && found !== secretsProblem) rt.log.error({ problem: found }, 'stored secrets cannot be decrypted: webhooks and partner polling of these partners fail');
    secretsProblem = found;
  };
  await checkSecrets();
  const secretsTimer = setInterval(() => void checkSecrets(), 60_000);
  secretsTimer.unref();
  const http = createHttpServer({ ...rt, secretsProblem: () => secretsProblem }, surfaces);
  await rt.jobs.startWorkers(rt);
  const address = await http.listen();
  let metricsServer: MetricsServer | null = null;
  if (rt.config.metricsPort !== null) {
    try {
      metricsServer = await startMetricsServer(rt.metrics, rt.config.host, rt.config.metricsPort, rt.log, http.health);
    } catch (err) {
      await http.close();
      throw err;
    }
  }
  let stopping: Promise<void> | null = null;
  return {
    http,
    address,
    metricsAddress: metricsServer?.address ?? null,
    stop: () =>
      (stopping ??= (async () => {
        clearInterval(secretsTimer);
        await metricsServer?.close();
        await http.close();
        await rt.close();
      })()),
  };
}
