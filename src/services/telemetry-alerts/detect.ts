import type { RuntimeDeps } from '../deps.js';
import { addAlertHistory } from '../../db/repositories/operations/triage.repository.js';
import { lampOutCandidates, markRecoveryNoted, recordLampOut, recoveredLampOuts, tenantsWatchingLamps, type LampOutCandidate } from '../../db/repositories/telemetry-alerts.repository.js';
import { submitIntake } from '../intake/index.js';
import { ensureTelemetrySource, LAMP_OUT_REASON } from './source.js';

/** Status-history actor of everything telemetry does to an alert. */
export const TELEMETRY_ACTOR = 'telemetry';

export interface LampOutRun {
  /** Alerts raised (a pole whose lamp went out). */
  raised: number;
  /** Pending alerts that got a note because the lamp was reported good again. */
  noted: number;
}

/**
 * One pass of the lamp-out rule over every tenant that has a threshold, as of `now`
 * (the job passes the clock; tests pass the instants they need). For each pole whose
 * lamp is out for longer than the tenant allows and which has no open alert, an alert
 * is registered through the intake path, like a partner's request: reason
 * TELEMETRY_LAMP_OUT, status history by `telemetry`, the tenant's policy deciding
 * between Pending and an automatic order, which then names the pole. While that alert
 * is open no other is raised for the pole; once it is closed, only a new outage raises
 * another. A good report while the alert is still Pending adds a note to it, once; it
 * never closes it.
 */
export async function detectLampOuts(deps: RuntimeDeps, opts: { now?: Date } = {}): Promise<LampOutRun> {
  const now = opts.now ?? new Date();
  const run: LampOutRun = { raised: 0, noted: 0 };
  for (const tenantId of await tenantsWatchingLamps(deps.db)) {
    const candidates = await lampOutCandidates(deps.db, tenantId, now);
    if (candidates.length > 0) {
      const source = await ensureTelemetrySource(deps.db, tenantId);
      for (const pole of candidates) {
        if (await raise(deps, tenantId, source.externalSystemId, pole)) run.raised++;
      }
    }
    for (const r of await recoveredLampOuts(deps.db, tenantId)) {
      const at = await cityTime(deps, tenantId, r.reported_at);
      const noted = await deps.db.transaction().execute(async (tx) => {
        if (!(await markRecoveryNoted(tx, r.pole_id, r.alert_id))) return false;
        const note = `Telemetria: o dispositivo ${r.identifier} voltou a informar a lâmpada acesa em ${at}. Confirme em campo antes de encerrar.`;
        await addAlertHistory(tx, { alert_id: r.alert_id, from_status: 'Pending', to_status: 'Pending', actor: TELEMETRY_ACTOR, note });
        return true;
      });
      if (noted) run.noted++;
    }
  }
  if (run.raised + run.noted > 0) deps.log.info(run, 'telemetry lamp-out pass');
  return run;
}

/** A moment as the city's operators read it: "26/11/2026, 13:54 (horário de America/Sao_Paulo)". */
async function cityTime(deps: RuntimeDeps, tenantId: string, at: Date): Promise<string> {
  const row = await deps.db.selectFrom('tenant').select('timezone').where('id', '=', tenantId).executeTakeFirst();
  const timeZone = row?.timezone ?? 'America/Sao_Paulo';
  try {
    return `${new Intl.DateTimeFormat('pt-BR', { timeZone, dateStyle: 'short', timeStyle: 'short' }).format(at)} (horário de ${timeZone})`;
  } catch {
    return `${new Intl.DateTimeFormat('pt-BR', { timeZone: 'UTC', dateStyle: 'short', timeStyle: 'short' }).format(at)} (UTC)`;
  }
}

async function raise(deps: RuntimeDeps, tenantId: string, externalSystemId: string, pole: LampOutCandidate): Promise<boolean> {
  const since = pole.out_since.toISOString();
  const sinceWords = await cityTime(deps, tenantId, pole.out_since);
  const cause = pole.cause === 'offline' ? 'sem comunicação' : 'relé desligado à noite';
  // One protocol number per outage: a pass that runs again (a crash, a second instance) resends it.
  const protocolNumber = `TLM-${pole.pole_code.slice(0, 60)}-${Math.floor(pole.out_since.getTime() / 1000)}`;
  const { body } = await submitIntake(
    deps,
    { externalSystemId, tenantId, scopes: ['canCreateServiceOrders'] },
    {
      protocolNumber,
      assetType: 'POLE',
      requestedAt: since,
      requester: { name: 'Telemetria Lumen' },
      address: { street: (pole.address ?? pole.pole_code).slice(0, 200), ...(pole.neighborhood ? { neighborhood: pole.neighborhood } : {}), latitude: pole.latitude, longitude: pole.longitude },
      problem: { description: `Lâmpada apagada segundo a telemetria: poste ${pole.pole_code}, dispositivo ${pole.telegestor_identifier}, ${cause} desde ${sinceWords}.` },
      reasonCode: LAMP_OUT_REASON,
    },
    { idempotencyKey: null, lang: 'pt-BR', actor: TELEMETRY_ACTOR },
  );
  const orderId = body.status === 'OPEN' ? body.id : null;
  return deps.db.transaction().execute(async (tx) => {
    if (orderId) await tx.updateTable('service_order').set({ pole_id: pole.pole_id }).where('id', '=', orderId).where('pole_id', 'is', null).execute();
    return recordLampOut(tx, { pole_id: pole.pole_id, tenant_id: tenantId, alert_id: body.alert.id, out_since: pole.out_since });
  });
}
