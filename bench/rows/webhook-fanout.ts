import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CpuSampler, describeCpu, medianCpu, perRequest, type CpuPerRequest } from '../harness/cpu.js';
import { runDriver } from '../harness/drivers.js';
import { hasCommand, lumenJson } from '../harness/lumen.js';
import { autovacuumDue, describeAutovacuum } from '../harness/postgres.js';
import { Receiver } from '../harness/receiver.js';
import { DEFAULT_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER } from '../../src/config.js';
import { check, ratioOf, series, type Line } from '../harness/results.js';
import { eventBodies, seedEvents } from '../harness/seed.js';
import { median } from '../harness/stats.js';
import { Pending, type RowDefinition } from '../harness/context.js';
import type { AnchorInput, AnchorResult } from '../drivers/webhook-anchor.js';

/** Events per second between the first and the last arrival at the receiver. */
function rate(count: number, first: number, last: number): number {
  return count <= 1 || last <= first ? NaN : ((count - 1) * 1000) / (last - first);
}

/**
 * Webhook fan-out: N events (one per service order, so no two wait on each other's
 * ordering) delivered by Lumen to a loopback receiver that verifies every signature.
 * The events are written with SQL and handed to Lumen's delivery path by
 * `lumen webhook redeliver --partner CODE --since T` (the operators' "everything
 * since T"), which enqueues them as the outbox does. Anchor: a plain Node script
 * signing and POSTing the same bodies over as many keep-alive connections as Lumen
 * opened.
 */
export const webhookFanoutRow: RowDefinition = {
  id: 'webhook-fanout',
  title: 'Webhook fan-out',
  async run(ctx) {
    if (!(await hasCommand(ctx.setup, ['webhook', 'redeliver']))) throw new Pending('webhook delivery (lumen webhook redeliver) not built yet');
    const server = await ctx.lumen();
    const n = ctx.sizes.fanoutEvents;
    const waitMs = ctx.sizes.fanoutWaitSeconds * 1000;
    const lumenRates: number[] = [];
    const totalSeconds: number[] = [];
    const anchorRates: number[] = [];
    const concurrency: number[] = [];
    const connections: number[] = [];
    const cpus: CpuPerRequest[] = [];
    /** CPU per event (ms) of the receiver while Lumen delivered, and of the anchor's sender and the receiver while it sent. */
    const receiverCpu: number[] = [];
    const anchorSenderCpu: number[] = [];
    const anchorReceiverCpu: number[] = [];
    /** Each side's wait for a core per event (ms): the receiver's thread in Lumen's part, the anchor's sender and the receiver in the anchor's. */
    const receiverWait: number[] = [];
    const anchorSenderWait: number[] = [];
    const anchorReceiverWait: number[] = [];
    const incomplete: string[] = [];
    // A warm-up round first, on both sides, not counted: Lumen's process spends about 70%
    // more CPU per event on its first 10,000 deliveries than from its third on (the
    // delivery path compiled by V8, its heap grown), as a long-running service does not;
    // the anchor's script runs in a new process every round, warm-up or not.
    const rounds = ctx.opts.runs + 1;
    for (let run = 0; run < rounds; run++) {
      const name = run === 0 ? 'warm-up' : `run ${run}/${ctx.opts.runs}`;
      // A receiver of its own per round, which counts the requests it has open at once.
      // The rounds before left thousands of finished deliveries and their attempts: what
      // autovacuum would have done with them within the minute, done now, untimed.
      if (run > 0) ctx.log(`fan-out ${name}: ${describeAutovacuum(await autovacuumDue(ctx.pool))}`);
      const receiver = await Receiver.start(ctx.repo, ctx.webhookSecret);
      try {
        const tenant = await ctx.createTenant(`Bench fan-out ${run}`, 'manual');
        const partner = await ctx.createPartner({ tenantId: tenant.id, scopes: ['canCreateAlerts'], webhookUrl: receiver.url(`/hooks/${run}`) });
        const seeded = await seedEvents(ctx.pool, { tenantId: tenant.id, partnerId: partner.id, orders: n, perOrder: 1, eventType: 'ServiceOrder.Completed' });

        ctx.log(`fan-out ${name}: ${n} events through Lumen`);
        // The receiver's CPU counts from here (its start and the compile of its script excluded).
        await receiver.reset();
        const t0 = Date.now();
        const sampler = new CpuSampler(ctx.db.name, server.pid).start();
        const queued = await lumenJson<{ count: number }>(ctx.setup, ['webhook', 'redeliver', '--partner', partner.code, '--since', seeded.since]);
        if (queued.count !== n) throw new Error(`redelivery queued ${queued.count} events, expected ${n}`);
        const stats = await receiver.waitForCount(n, waitMs);
        cpus.push(perRequest(sampler.stop(), null, stats.count));
        receiverCpu.push(stats.cpuMs / stats.count);
        if (stats.waitMs !== null) receiverWait.push(stats.waitMs / stats.count);
        if (stats.badSignatures > 0) throw new Error(`${stats.badSignatures} webhook signatures did not verify`);
        if (stats.count < 2) throw new Error(`only ${stats.count} of ${n} events reached the receiver within ${waitMs / 1000} s`);
        if (stats.count < n) incomplete.push(`${name}: ${stats.count.toLocaleString('en-US')} of ${n.toLocaleString('en-US')} events within ${waitMs / 1000} s`);
        lumenRates.push(rate(stats.count, stats.first, stats.last));
        const runCpu = cpus[cpus.length - 1]!;
        const perEvent = (ms: number | null) => (ms === null ? 'n/a' : `${Math.round(ms * 1000)} µs`);
        ctx.log(
          `fan-out ${name}: ${Math.round(lumenRates[lumenRates.length - 1]!)} events/s; per event Lumen ${perEvent(runCpu.serverMs)}, PostgreSQL ${perEvent(runCpu.postgresMs)}, receiver ${perEvent(stats.cpuMs / stats.count)}; ` +
            `waiting for a core: Lumen's thread ${perEvent(runCpu.serverWaitMs)}, PostgreSQL ${perEvent(runCpu.postgresWaitMs)}, receiver ${perEvent(stats.waitMs === null ? null : stats.waitMs / stats.count)}`,
        );
        totalSeconds.push((stats.last - t0) / 1000);
        // Lumen never has more than its per-partner limit on the wire to one receiver (the bench runs with the default).
        concurrency.push(DEFAULT_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER);
        connections.push(stats.connectionsOpened);

        const bodiesFile = path.join(ctx.tmpDir, `fanout-${run}.ndjson`);
        writeFileSync(bodiesFile, await eventBodies(ctx.pool, partner.id));
        await receiver.reset();
        ctx.log(`fan-out ${name}: anchor with ${concurrency[run]} request(s) in flight`);
        const input: AnchorInput = { url: receiver.url(`/hooks/anchor-${run}`), secret: ctx.webhookSecret, concurrency: concurrency[run]!, bodiesFile };
        const a = await runDriver<AnchorResult>(ctx.repo, 'webhook-anchor.ts', input);
        if (a.failed > 0) throw new Error(`the anchor script had ${a.failed} failed POSTs`);
        const as = await receiver.stats();
        anchorRates.push(rate(as.count, as.first, as.last));
        anchorSenderCpu.push(a.cpuMs / as.count);
        anchorReceiverCpu.push(as.cpuMs / as.count);
        if (a.waitMs !== null) anchorSenderWait.push(a.waitMs / as.count);
        if (as.waitMs !== null) anchorReceiverWait.push(as.waitMs / as.count);
        ctx.log(
          `fan-out ${name}: anchor ${Math.round(anchorRates[anchorRates.length - 1]!)} events/s; per event sender ${perEvent(a.cpuMs / as.count)}, receiver ${perEvent(as.cpuMs / as.count)}; ` +
            `waiting for a core: sender ${perEvent(a.waitMs === null ? null : a.waitMs / as.count)}, receiver ${perEvent(as.waitMs === null ? null : as.waitMs / as.count)}`,
        );
      } finally {
        receiver.stop();
      }
      if (incomplete.length > 0 && run + 1 < rounds) {
        // Its deliveries are still queued, ahead of the next run's: that run would measure this backlog.
        incomplete.push(`the remaining runs were not made: the backlog left by an incomplete run would delay theirs`);
        break;
      }
    }
    // The warm-up's figures are dropped (an incomplete warm-up is still reported).
    for (const figures of [lumenRates, totalSeconds, anchorRates, concurrency, connections, cpus, receiverCpu, anchorSenderCpu, anchorReceiverCpu, receiverWait, anchorSenderWait, anchorReceiverWait]) figures.splice(0, 1);
    if (lumenRates.length === 0) throw new Error(`the fan-out made no measured run: ${incomplete.join('; ')}`);
    const lumen = series('events/s', lumenRates, median);
    const anchor = series('events/s', anchorRates, median);
    const ratio = ratioOf(lumen, anchor);
    // Where an event's CPU goes on each side, and the rate the machine's cores would allow
    // if they did nothing else: the bound behind the ratio (bench/FINDINGS.md).
    const cores = os.cpus().length;
    const cpu = medianCpu(cpus);
    const us = (ms: number) => `${Math.round(ms * 1000)} µs`;
    const lumenPerEvent = cpu.serverMs !== null && cpu.postgresMs !== null && receiverCpu.length ? cpu.serverMs + cpu.postgresMs + median(receiverCpu) : null;
    const anchorPerEvent = anchorSenderCpu.length ? median(anchorSenderCpu) + median(anchorReceiverCpu) : null;
    const bound = (perEventMs: number | null) => (perEventMs ? `${Math.round((cores * 1000) / perEventMs).toLocaleString('en-US')} events/s` : 'n/a');
    const cpuLine =
      lumenPerEvent !== null && anchorPerEvent !== null
        ? `; CPU per event: Lumen ${us(cpu.serverMs!)}, PostgreSQL ${us(cpu.postgresMs!)}, receiver ${us(median(receiverCpu))} (${us(lumenPerEvent)} in all: ${cores} cores allow ${bound(lumenPerEvent)}; PostgreSQL's records and the receiver alone, ${bound(cpu.postgresMs! + median(receiverCpu))}); anchor: sender ${us(median(anchorSenderCpu))}, receiver ${us(median(anchorReceiverCpu))} (${us(anchorPerEvent)}: ${bound(anchorPerEvent)})`
        : `; CPU per event: ${describeCpu(cpu, null)}`;
    const waitLine =
      cpu.serverWaitMs !== null && cpu.postgresWaitMs !== null && receiverWait.length && anchorSenderWait.length && anchorReceiverWait.length
        ? `; waiting for a core per event: Lumen's thread ${us(cpu.serverWaitMs)}, PostgreSQL ${us(cpu.postgresWaitMs)}, receiver ${us(median(receiverWait))}; anchor: sender ${us(median(anchorSenderWait))}, receiver ${us(median(anchorReceiverWait))}`
        : '';
    const lines: Line[] = [
      {
        label: `${n.toLocaleString('en-US')} events to a loopback receiver`,
        lumen,
        detail: incomplete.length
          ? `INCOMPLETE, rate over what arrived (${incomplete.join('; ')}); ${Math.max(...concurrency)} in flight at most`
          : `all delivered ${median(totalSeconds).toFixed(1)} s after the redelivery command started; ${Math.max(...concurrency)} in flight at most (the per-partner limit) over ${Math.max(...connections)} connection(s)${cpuLine}${waitLine}`,
        anchor: { label: 'plain Node script, keep-alive, same bodies, as many requests in flight', series: anchor },
        ratio,
        checks: [check('≥ 70% of the anchor', ratio === null ? null : ratio >= 0.7), ...(incomplete.length ? [check('every event delivered within the wait', false)] : [])],
      },
    ];
    return {
      lines,
      notes: [
        'Rate = events between the first and the last arrival at the receiver, which verifies every HMAC signature (constant-time) and answers 204; the same receiver process serves Lumen and the anchor.',
        `Each figure is the median of ${ctx.opts.runs} run(s) after a warm-up round of as many events on both sides, not counted: Lumen's process spends more CPU per event on its first ten thousand deliveries than later (its delivery path compiled, its heap grown), and a service that delivers every day is past that; the anchor's script starts in a new process every round.`,
        "Same concurrency: the anchor keeps as many requests in flight, over as many keep-alive connections, as Lumen may have on the wire to one partner (LUMEN_WEBHOOK_MAX_IN_FLIGHT_PER_PARTNER, default 8; and its pool opens no more connections than that to one partner). Same requests: the anchor signs each body for both signature schemes, as Lumen does for a partner on the default scheme.",
        "CPU per event: Lumen's process and the PostgreSQL backends of the bench database with its WAL and buffer writers, from /proc, over the Lumen run; the receiver's and the anchor's own, from process.cpuUsage(), over their parts. The cores' bound is the rate at which the processes of a side would use every core of the machine and nothing else: the receiver shares the cores with both senders, and Lumen's side also records every attempt in PostgreSQL, which the anchor does not.",
        "Waiting for a core per event: how long each process's main thread (all of PostgreSQL's processes together) was ready to run while both cores were busy, from /proc/<pid>/schedstat, over the same parts as the CPU: where the anchor's side is two processes on two cores, Lumen's side is three.",
        'The row runs last: deliveries still queued when its wait ends would otherwise delay the rows after it. Before every round but the first, the bench does what autovacuum would have done with the rounds before (VACUUM and ANALYZE of the tables past its thresholds), untimed, as before every row: the bench\'s server may run without autovacuum, a deployment\'s does not.',
      ],
      params: { events: n, runs: lumenRates.length, waitSeconds: ctx.sizes.fanoutWaitSeconds, inFlight: concurrency.join(','), connections: connections.join(',') },
    };
  },
};
