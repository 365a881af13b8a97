import type { Command } from 'commander';
import { PLATFORM_ACCESS } from '../services/operators/index.js';
import { createPartner, DEFAULT_SECRET_OVERLAP_SECONDS, getPartner, listPartners, rotatePartnerKey, rotateWebhookSecret, setPartnerEnabled, updatePartner, type PartnerView, type UpdatePartnerInput } from '../services/partners/index.js';
import { parseDuration } from '../config.js';
import { CliError, jsonOption, printResult, cliActorOf, secretOption, withRuntime, type CliIo, type JsonOption } from './context.js';
import { createSandboxPartner } from '../services/sandbox/index.js';
import { getWebhookDelivery, sendTestEvent, type WebhookDeliveryView } from '../services/events/index.js';

/** How long `test-event --wait` waits for the first attempt's outcome by default, in seconds. */
const TEST_EVENT_WAIT_SECONDS = 30;

const describe = (p: PartnerView): string =>
  `${p.code}  tenant=${p.tenantId}  scopes=${p.scopes.join(',') || '-'}  transport=${p.transport}  ${p.enabled ? 'enabled' : 'DISABLED'}  key=${p.keyPrefix ?? '-'}…`;

/** Every setting, secrets only as set or not. */
const describeSettings = (p: PartnerView): string =>
  [
    describe(p),
    `  webhook:   ${p.webhookUrl ?? '-'}  secret ${p.webhookSecretSet ? 'set' : 'not set'}  signature ${p.signature}${p.previousWebhookSecretUntil ? `  (previous secret signs until ${p.previousWebhookSecretUntil})` : ''}`,
    `  polling:   ${p.pollingUrl ?? '-'}  key ${p.pollingKeySet ? 'set' : 'not set'}  every ${p.pollingIntervalSeconds}s`,
    `  events:    ${p.eventTypes === null ? 'all types' : p.eventTypes.join(',') || 'none'}  min interval ${p.eventsMinIntervalSeconds === null ? 'none' : `${p.eventsMinIntervalSeconds}s`}`,
    `  rate:      ${p.rateLimitPerMinute === null ? 'service default' : `${p.rateLimitPerMinute}/min`}`,
  ].join('\n');

/** "none" (or "all"/"default" where said) clears a nullable setting. */
const orNull = (raw: string | undefined, ...clear: string[]): string | null | undefined => (raw === undefined ? undefined : clear.includes(raw.trim().toLowerCase()) ? null : raw);

const keyNotice = (apiKey: string): string =>
  `API key (shown once, store it now):\n  ${apiKey}\nTry it: curl -H "X-Api-Key: ${apiKey}" http://localhost:8080/api/external/health`;

export function registerPartnerCommands(program: Command, io: CliIo): void {
  const partner = program.command('partner').description('partner external systems and their API keys');

  jsonOption(
    partner
      .command('create')
      .description('register an external system and issue its API key (--sandbox: in a demo city of its own, to try the integration)')
      .option('--tenant <id>', 'tenant id (required unless --sandbox)')
      .option('--sandbox', 'create a sandbox city (demo data, manual triage) for the partner; its key is lmn_test_ and it may cause events (POST /api/external/sandbox/events)')
      .requiredOption('--code <code>', 'unique partner code')
      .requiredOption('--scopes <list>', 'comma list: canCreateServiceOrders, canCreateAlerts, canReadCityData, canManageIntegration (PascalCase accepted)')
      .option('--transport <mode>', 'event transport: webhook or polling', 'webhook')
      .option('--webhook-url <url>', 'where events are posted (webhook mode)')
      .option('--webhook-secret-file <path>', 'read the webhook secret (at least 16 characters) from a file, or - for standard input; without one, Lumen makes a secret and shows it once')
      .option('--webhook-secret <secret>', 'the webhook secret on the command line (visible in process lists: prefer --webhook-secret-file)')
      .option('--signature <scheme>', 'webhook signature headers: lumen (X-Lumen-Signature), standard (Standard Webhooks) or both', 'both')
      .option('--polling-url <url>', "the partner's endpoint Lumen polls for new requests")
      .option('--polling-key-file <path>', 'read the key the partner issued to Lumen for its polling endpoint from a file, or - for standard input')
      .option('--polling-key <key>', 'that key on the command line (visible in process lists: prefer --polling-key-file)')
      .option('--polling-interval <seconds>', 'polling interval, 1..180 seconds', '180'),
  ).action(async (opts: JsonOption & Record<string, string | undefined> & { sandbox?: boolean }) => {
    if (opts.sandbox && opts.tenant) throw new CliError('--sandbox creates its own tenant: leave out --tenant', 2);
    if (!opts.sandbox && !opts.tenant) throw new CliError("required option '--tenant <id>' not specified (or use --sandbox)", 2);
    const settings = {
      code: opts.code!,
      scopes: opts.scopes!,
      transport: opts.transport,
      webhookUrl: opts.webhookUrl ?? null,
      webhookSecret: (await secretOption(io, opts.webhookSecret, opts.webhookSecretFile, 'webhook-secret')) ?? null,
      signature: opts.signature,
      pollingUrl: opts.pollingUrl ?? null,
      pollingKey: (await secretOption(io, opts.pollingKey, opts.pollingKeyFile, 'polling-key')) ?? null,
      pollingIntervalSeconds: opts.pollingInterval,
    };
    if (opts.sandbox) {
      const s = await withRuntime(io, (rt) => createSandboxPartner(rt, settings, cliActorOf(rt)));
      printResult(io, opts, s, () =>
        [`Created the sandbox city "${s.tenant.name}" (${s.tenant.id}: ${s.city.poles} poles, manual triage) and partner ${describe(s.partner)}`, keyNotice(s.partner.apiKey), 'Cause events on your requests: POST /api/external/sandbox/events (docs at /docs/sandbox).'].join('\n'),
      );
      return;
    }
    const p = await withRuntime(io, (rt) => createPartner(rt, { tenantId: opts.tenant!, ...settings }, cliActorOf(rt)));
    printResult(io, opts, p, () =>
      [`Created partner ${describe(p)}`, keyNotice(p.apiKey), ...(p.webhookSecret ? [`Webhook secret made by Lumen (shown once, give it to the partner now):\n  ${p.webhookSecret}`] : [])].join('\n'),
    );
  });

  jsonOption(partner.command('list').description('list partners').option('--tenant <id>', 'only this tenant')).action(async (opts: JsonOption & { tenant?: string }) => {
    const partners = await withRuntime(io, (rt) => listPartners(rt, PLATFORM_ACCESS, opts.tenant));
    printResult(io, opts, { partners }, () => (partners.length ? partners.map(describe).join('\n') : 'No partners yet.'));
  });

  jsonOption(partner.command('show').description('show one partner').argument('<code>', 'partner code')).action(async (code: string, opts: JsonOption) => {
    const p = await withRuntime(io, (rt) => getPartner(rt, PLATFORM_ACCESS, code));
    printResult(io, opts, p, () => describeSettings(p));
  });

  jsonOption(
    partner
      .command('update')
      .description('change settings of a partner; only the options given change ("none" clears a value)')
      .argument('<code>', 'partner code')
      .option('--scopes <list>', 'the complete new set: canCreateServiceOrders, canCreateAlerts, canReadCityData, canManageIntegration (PascalCase accepted)')
      .option('--transport <mode>', 'event transport: webhook or polling')
      .option('--webhook-url <url>', 'where events are posted; none to clear')
      .option('--webhook-secret-file <path>', 'read a new webhook secret (at least 16 characters) from a file, or - for standard input')
      .option('--webhook-secret <secret>', 'a new webhook secret on the command line (visible in process lists: prefer --webhook-secret-file); none to clear')
      .option('--signature <scheme>', 'webhook signature headers: lumen (X-Lumen-Signature), standard (Standard Webhooks) or both')
      .option('--event-types <list>', 'comma list of subscribed event types, or all')
      .option('--rate-limit <perMinute>', 'requests per minute for the key, or default')
      .option('--events-min-interval <seconds>', 'minimum seconds between events polls that found nothing more (1..180), or none')
      .option('--polling-url <url>', "the partner's endpoint Lumen polls for new requests; none to clear")
      .option('--polling-key-file <path>', 'read the key the partner issued to Lumen for its polling endpoint from a file, or - for standard input')
      .option('--polling-key <key>', 'that key on the command line (visible in process lists: prefer --polling-key-file); none to clear')
      .option('--polling-interval <seconds>', 'polling interval, 1..180 seconds'),
  ).action(async (code: string, opts: JsonOption & Record<string, string | undefined>) => {
    const input: UpdatePartnerInput = {
      scopes: opts.scopes,
      transport: opts.transport,
      webhookUrl: orNull(opts.webhookUrl, 'none'),
      webhookSecret: orNull(await secretOption(io, opts.webhookSecret, opts.webhookSecretFile, 'webhook-secret'), 'none'),
      signature: opts.signature,
      eventTypes: orNull(opts.eventTypes, 'all'),
      rateLimitPerMinute: orNull(opts.rateLimit, 'default'),
      eventsMinIntervalSeconds: orNull(opts.eventsMinInterval, 'none'),
      pollingUrl: orNull(opts.pollingUrl, 'none'),
      pollingKey: orNull(await secretOption(io, opts.pollingKey, opts.pollingKeyFile, 'polling-key'), 'none'),
      pollingIntervalSeconds: opts.pollingInterval,
    };
    const p = await withRuntime(io, (rt) => updatePartner(rt, code, input, cliActorOf(rt)));
    printResult(io, opts, p, () => `Updated ${describeSettings(p)}`);
  });

  jsonOption(
    partner
      .command('rotate-key')
      .description('issue a new API key; the previous one stops working at once, or after --overlap')
      .argument('<code>', 'partner code')
      .option('--overlap <duration>', 'keep the previous key working this long (90s, 30m, 24h, 7d at most; default none)'),
  ).action(async (code: string, opts: JsonOption & { overlap?: string }) => {
    const ms = opts.overlap === undefined ? 0 : /^\s*\d+\s*$/.test(opts.overlap) ? Number(opts.overlap) * 1000 : parseDuration(opts.overlap);
    const overlapSeconds = ms === null ? null : Math.round(ms / 1000);
    if (overlapSeconds === null) throw new CliError(`--overlap: "${opts.overlap}" is not a duration (for example 90s, 30m, 24h or 7d)`);
    const p = await withRuntime(io, (rt) => rotatePartnerKey(rt, code, cliActorOf(rt), { overlapSeconds }));
    printResult(io, opts, p, () =>
      [
        `Rotated the key of ${p.code}; ${p.previousKey ? `the previous key (${p.previousKey.keyPrefix}…) keeps working until ${p.previousKey.expiresAt}` : 'the previous key no longer works'}.`,
        keyNotice(p.apiKey),
      ].join('\n'),
    );
  });

  jsonOption(
    partner
      .command('rotate-secret')
      .description('give a partner a new webhook secret (shown once); the replaced one keeps signing beside it for the overlap')
      .argument('<code>', 'partner code')
      .option('--overlap <seconds>', 'how long the replaced secret keeps signing, 0..604800 seconds', String(DEFAULT_SECRET_OVERLAP_SECONDS))
      .option('--webhook-secret-file <path>', 'read the new secret from a file, or - for standard input; without one, Lumen makes a whsec_ secret'),
  ).action(async (code: string, opts: JsonOption & { overlap?: string; webhookSecretFile?: string }) => {
    const webhookSecret = await secretOption(io, undefined, opts.webhookSecretFile, 'webhook-secret');
    const p = await withRuntime(io, (rt) => rotateWebhookSecret(rt, code, { overlapSeconds: opts.overlap, ...(webhookSecret !== undefined ? { webhookSecret } : {}) }, cliActorOf(rt)));
    printResult(io, opts, p, () =>
      [
        `Rotated the webhook secret of ${p.code}; ${p.previousWebhookSecretUntil ? `the replaced secret keeps signing until ${p.previousWebhookSecretUntil}` : 'the replaced secret no longer signs'}.`,
        `New webhook secret (shown once, give it to the partner now):\n  ${p.webhookSecret}`,
      ].join('\n'),
    );
  });

  jsonOption(partner.command('disable').description('disable a partner: its key answers 403').argument('<code>', 'partner code')).action(async (code: string, opts: JsonOption) => {
    const p = await withRuntime(io, (rt) => setPartnerEnabled(rt, code, false, cliActorOf(rt)));
    printResult(io, opts, p, () => `Disabled ${p.code}`);
  });

  jsonOption(partner.command('enable').description('enable a disabled partner').argument('<code>', 'partner code')).action(async (code: string, opts: JsonOption) => {
    const p = await withRuntime(io, (rt) => setPartnerEnabled(rt, code, true, cliActorOf(rt)));
    printResult(io, opts, p, () => `Enabled ${p.code}`);
  });

  jsonOption(
    partner
      .command('test-event')
      .description("send a Test.Ping to a partner's webhook, signed like real events; it shows in the delivery log (`lumen webhook deliveries`)")
      .argument('<code>', 'partner code')
      .option('--wait', "wait for the first attempt's outcome (a serving process delivers it) and print it")
      .option('--timeout <seconds>', `with --wait, give up after this many seconds (1..600)`, String(TEST_EVENT_WAIT_SECONDS)),
  ).action(async (code: string, opts: JsonOption & { wait?: boolean; timeout: string }) => {
    const timeout = Number(opts.timeout);
    if (!Number.isInteger(timeout) || timeout < 1 || timeout > 600) throw new CliError('--timeout must be a whole number of seconds from 1 to 600', 2);
    const result = await withRuntime(io, async (rt) => {
      const sent = await sendTestEvent(rt, code, cliActorOf(rt));
      if (!opts.wait) return { ...sent };
      // The delivery goes out from a serving process (woken as the send committed); this only reads the log.
      const deadline = Date.now() + timeout * 1000;
      let d: WebhookDeliveryView = await getWebhookDelivery(rt, PLATFORM_ACCESS, sent.deliveryId);
      while (d.attempts === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        d = await getWebhookDelivery(rt, PLATFORM_ACCESS, sent.deliveryId);
      }
      return { ...sent, delivery: d };
    });
    printResult(io, opts, result, () => {
      const lines = [`Test event ${result.eventId} (Test.Ping) queued for ${result.partnerCode}: delivery ${result.deliveryId}`];
      const d = 'delivery' in result ? result.delivery : undefined;
      if (d) {
        const last = d.attemptLog.at(-1);
        if (!last) lines.push(`No attempt within ${timeout} s: is a serving process (lumen serve) running? Follow it with lumen webhook show ${d.id}`);
        else lines.push(`Attempt ${last.attempt}: ${last.succeeded ? 'succeeded' : 'FAILED'}${last.statusCode !== null ? ` HTTP ${last.statusCode}` : ''} in ${last.latencyMs} ms${last.error ? `  ${last.error}` : ''}; delivery ${d.status}${d.nextAttemptAt ? `, next attempt at ${d.nextAttemptAt}` : ''}`);
      }
      return lines.join('\n');
    });
  });
}
