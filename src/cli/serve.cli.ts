import type { Command } from 'commander';
import { startApp } from '../app.js';
import { createLogger } from '../lib/logger.js';
import { loadConfig } from '../config.js';
import { openRuntime } from '../runtime.js';
import { isEmpty, seedDemo, seedDemoOperator } from '../services/demo/index.js';
import { versionLine } from '../version.js';
import { releaseStartupMemory } from '../lib/startup-memory.js';
import type { CliIo } from './context.js';

export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('run the HTTP API and the job workers (embedded database when DATABASE_URL is unset)')
    .action(async () => {
      const config = loadConfig(io.env);
      const log = createLogger(config.logLevel, io.stdout);
      log.info({ version: versionLine(), environment: config.environment, database: config.databaseUrl ? 'DATABASE_URL' : `embedded (${config.dataDir})` }, 'starting');
      if (config.secretKeySource === 'data-dir') log.warn({ file: `${config.dataDir}/secret.key` }, 'LUMEN_SECRET_KEY is not set; using a key generated in the data directory');
      const rt = await openRuntime(config, log, { migrate: true, work: true });
      let app;
      try {
        // Never in production: no demo city, no key or password printed to a log.
        if (rt.embedded && !config.isProduction && (await isEmpty(rt))) {
          const demo = await seedDemo(rt);
          const operator = await seedDemoOperator(rt, demo.tenant.id);
          io.stderr.write(
            `\nFirst start on the embedded database: created the demo city "${demo.tenant.name}" (poles, telegestors, orders) and the partner "${demo.partner.code}".\n` +
              `Its API key (shown once): ${demo.partner.apiKey}\n` +
              `Try: curl -H "X-Api-Key: ${demo.partner.apiKey}" http://localhost:${config.port}/api/external/health\n` +
              `     curl -H "X-Api-Key: ${demo.partner.apiKey}" "http://localhost:${config.port}/api/external/poles?pageSize=5"\n` +
              `The demo operator (city-admin of the demo city) signs in to the operators' console at http://localhost:${config.port}/console (or POST /api/admin/session):\n` +
              `  e-mail ${operator.email}, password (shown once): ${operator.password}\n` +
              `Docs: http://localhost:${config.port}/docs   More keys: npm run lumen -- partner create --help (or: lumen partner create --help)\n\n`,
          );
        }
        app = await startApp(rt);
      } catch (err) {
        await rt.close();
        throw err;
      }
      const scheme = config.tls ? 'https' : 'http';
      log.info({ url: `${scheme}://${app.address.address}:${app.address.port}`, docs: '/docs' }, 'listening');
      releaseStartupMemory();
      await new Promise<void>((resolve) => {
        const shutdown = (signal: string) => {
          log.info({ signal }, 'shutting down');
          app.stop().then(resolve, (err: unknown) => {
            log.error({ err }, 'shutdown failed');
            resolve();
          });
        };
        process.once('SIGTERM', () => shutdown('SIGTERM'));
        process.once('SIGINT', () => shutdown('SIGINT'));
      });
      log.info('stopped');
    });
}
