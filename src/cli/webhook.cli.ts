import { PLATFORM_ACCESS } from '../services/operators/index.js';
import type { Command } from 'commander';
import { getWebhookDelivery, listWebhookDeliveries, redeliver, redeliverDead, redeliverSince, type WebhookDeliveryView } from '../services/events/index.js';
import { CliError, jsonOption, printResult, cliActorOf, withRuntime, type CliIo, type JsonOption } from './context.js';

const line = (d: WebhookDeliveryView): string =>
  [
    d.id,
    d.status.toUpperCase().padEnd(9),
    `${d.eventType} ${d.eventId}`,
    `attempts=${d.attempts}`,
    d.lastStatusCode !== null ? `last=HTTP ${d.lastStatusCode}` : d.lastError ? 'last=error' : '',
    d.nextAttemptAt ? `next=${d.nextAttemptAt}` : '',
    d.redeliveryOf ? `redelivery of ${d.redeliveryOf}` : '',
  ]
    .filter(Boolean)
    .join('  ');

const attemptLines = (d: WebhookDeliveryView): string[] =>
  d.attemptLog.map((a) => `    #${a.attempt} ${a.at}  ${a.succeeded ? 'ok' : 'FAILED'}  ${a.statusCode !== null ? `HTTP ${a.statusCode}` : '-'}  ${a.latencyMs} ms${a.error ? `  ${a.error}` : ''}`);

export function registerWebhookCommands(program: Command, io: CliIo): void {
  const webhook = program.command('webhook').description('webhook deliveries of events to partners: the delivery log and redelivery');

  jsonOption(
    webhook
      .command('deliveries')
      .description("a partner's webhook deliveries, newest first, with every attempt (time, status, latency, error)")
      .requiredOption('--partner <code>', 'partner code')
      .option('--status <status>', 'only deliveries in this state: pending, failed (retrying), succeeded or dead')
      .option('--since <timestamp>', 'only deliveries created at or after this ISO 8601 time')
      .option('--order <id>', "only deliveries of this service order's events (its id)")
      .option('--limit <n>', 'at most this many deliveries (1..500)', '50'),
  ).action(async (opts: JsonOption & { partner: string; status?: string; since?: string; order?: string; limit: string }) => {
    const limit = Number(opts.limit);
    const result = await withRuntime(io, (rt) =>
      listWebhookDeliveries(rt, PLATFORM_ACCESS, { partnerCode: opts.partner, status: opts.status, since: opts.since, serviceOrderId: opts.order, limit }),
    );
    printResult(io, opts, result, () =>
      result.deliveries.length === 0 ? `No webhook deliveries for ${result.partnerCode}${opts.status ? ` with status ${opts.status}` : ''}.` : result.deliveries.flatMap((d) => [line(d), ...attemptLines(d)]).join('\n'),
    );
  });

  jsonOption(webhook.command('show').description('one delivery with its attempts').argument('<deliveryId>', 'delivery id')).action(async (id: string, opts: JsonOption) => {
    const d = await withRuntime(io, (rt) => getWebhookDelivery(rt, PLATFORM_ACCESS, id));
    printResult(io, opts, d, () => [line(d), ...attemptLines(d)].join('\n'));
  });

  jsonOption(
    webhook
      .command('redeliver')
      .description('deliver again one delivery (by id), every dead delivery of a partner (--partner and --dead), or every event of a partner since a time (--partner and --since)')
      .argument('[deliveryId]', 'the delivery to repeat')
      .option('--partner <code>', 'partner code (with --dead or --since)')
      .option('--dead', 'redeliver every event whose last delivery is dead (with --partner)')
      .option('--since <timestamp>', 'redeliver every event written at or after this ISO 8601 time, delivered or not (with --partner)'),
  ).action(async (deliveryId: string | undefined, opts: JsonOption & { partner?: string; since?: string; dead?: boolean }) => {
    if (deliveryId && (opts.partner || opts.since || opts.dead)) throw new CliError('give either a delivery id or --partner with --dead or --since, not both', 2);
    if (opts.dead && opts.since) throw new CliError('give --dead or --since, not both', 2);
    if (opts.dead) {
      if (!opts.partner) throw new CliError('--dead needs --partner CODE', 2);
      const partner = opts.partner;
      const result = await withRuntime(io, (rt) => redeliverDead(rt, partner, cliActorOf(rt)));
      printResult(io, opts, result, () => `${result.count} dead deliver${result.count === 1 ? 'y' : 'ies'} of ${result.partnerCode} queued again.`);
      return;
    }
    if (deliveryId) {
      const d = await withRuntime(io, (rt) => redeliver(rt, deliveryId, cliActorOf(rt)));
      printResult(io, opts, d, () => `Redelivery queued: ${line(d)}`);
      return;
    }
    if (!opts.partner || !opts.since) throw new CliError('give a delivery id, or --partner CODE with --since TIMESTAMP', 2);
    const { partner, since } = opts;
    const result = await withRuntime(io, (rt) => redeliverSince(rt, partner, since, cliActorOf(rt)));
    printResult(io, opts, result, () => `${result.count} event(s) of ${result.partnerCode} since ${result.since} queued for redelivery.`);
  });
}
