import { statusWords } from '../../lib/status-words.js';
import type { SandboxEventRequest, SandboxEventResult } from '../../../generated/sandbox/types.gen.js';
import { findAlertByProtocol } from '../../db/repositories/intake/alert.repository.js';
import { AppError } from '../../lib/errors.js';
import type { Language } from '../../lib/i18n.js';
import type { Actor } from '../audit/index.js';
import type { ServiceDeps } from '../deps.js';
import { assignServiceOrder, cancelServiceOrder, completeServiceOrder, createOrderFromAlert, discardAlert, getServiceOrder, listTeams, startServiceOrder } from '../operations/index.js';
import { getTenant } from '../tenants/index.js';

/** The action named when an order event is asked for a request that has no order. */
const NO_ORDER = { 'pt-BR': 'mudar a ordem de serviço da solicitação, que ainda não tem uma', en: "change the request's service order, which it does not have yet" };

/** Who calls: a partner key's principal. */
export interface SandboxCaller {
  externalSystemId: string;
  externalSystemCode: string;
  tenantId: string;
}

/**
 * Causes `eventType` on the caller's own request by doing, in the sandbox, what a city
 * operator does in production (operations' own functions, so the events, their
 * payloads, ordering and delivery are the real ones), and answers the events written.
 * A tenant that is not a sandbox answers not-found: the operation does not exist there.
 */
export async function triggerSandboxEvent(deps: ServiceDeps, caller: SandboxCaller, input: SandboxEventRequest, lang: Language): Promise<SandboxEventResult> {
  const tenant = await getTenant(deps, caller.tenantId);
  if (!tenant.sandbox) throw new AppError('not-found', { resource: '/api/external/sandbox/events' });
  const alert = await findAlertByProtocol(deps.db, caller.externalSystemId, input.protocolNumber);
  if (!alert) throw new AppError('not-found', { resource: `request ${input.protocolNumber}` });

  // A sandbox partner acts on its own sandbox tenant only, as a triager would.
  const actor: Actor = { kind: 'sandbox', name: caller.externalSystemCode, access: { platformAdmin: false, grants: new Map([[caller.tenantId, 'triager']]) } };
  const note = input.note;
  const mark = await lastWriteSeq(deps, caller.externalSystemId);
  const orderId = alert.service_order_id;
  const needOrder = (): string => {
    if (!orderId) throw new AppError('invalid-transition', { action: NO_ORDER, state: statusWords(alert.status) });
    return orderId;
  };
  const firstTeam = async (): Promise<string> => {
    const team = (await listTeams(deps, actor.access, caller.tenantId))[0];
    if (!team) throw new AppError('conflict', { reason: 'the sandbox has no team to assign orders to' });
    return team.id;
  };

  switch (input.eventType) {
    case 'ServiceOrder.Created':
      await createOrderFromAlert(deps, actor, alert.id, {});
      break;
    case 'Alert.Cancelled':
      await discardAlert(deps, actor, alert.id, note, lang);
      break;
    case 'ServiceOrder.StatusChanged': {
      const order = await getServiceOrder(deps, actor.access, needOrder());
      if (order.status === 'OPEN') await assignServiceOrder(deps, actor, order.id, await firstTeam(), note);
      else await startServiceOrder(deps, actor, order.id, note);
      break;
    }
    case 'ServiceOrder.Completed': {
      const order = await getServiceOrder(deps, actor.access, needOrder());
      if (order.status === 'OPEN') await assignServiceOrder(deps, actor, order.id, await firstTeam());
      await completeServiceOrder(deps, actor, order.id, note);
      break;
    }
    case 'ServiceOrder.Cancelled':
      await cancelServiceOrder(deps, actor, needOrder(), note);
      break;
  }

  const events = await deps.db
    .selectFrom('event')
    .select(['id as eventId', 'event_type as eventType'])
    .where('external_system_id', '=', caller.externalSystemId)
    .where('alert_id', '=', alert.id)
    .where('write_seq', '>', mark)
    .orderBy('write_seq')
    .execute();
  return { events };
}

async function lastWriteSeq(deps: ServiceDeps, externalSystemId: string): Promise<number> {
  const row = await deps.db
    .selectFrom('event')
    .select((eb) => eb.fn.coalesce(eb.fn.max('write_seq'), eb.val(0)).as('seq'))
    .where('external_system_id', '=', externalSystemId)
    .executeTakeFirstOrThrow();
  return Number(row.seq);
}
