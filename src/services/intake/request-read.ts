import type { IntakeResponse } from '../../../generated/partner/types.gen.js';
import { findAlertByProtocol } from '../../db/repositories/intake/alert.repository.js';
import { listAlertAttachments } from '../../db/repositories/intake/attachment.repository.js';
import { AppError } from '../../lib/errors.js';
import type { Language } from '../../lib/i18n.js';
import type { ServiceDeps } from '../deps.js';
import { attachmentResult, buildIntakeResponse } from './response.js';

/**
 * A request this partner sent, by its own `protocolNumber`, as it stands now: the
 * intake answer's shape (the alert, and its service order once it has one; a Pending
 * alert as RECEIVED). Only the partner's own requests: another partner's protocol, or
 * an unknown one, is 404 alike.
 */
export async function readPartnerRequest(deps: ServiceDeps, caller: { readonly externalSystemId: string }, protocolNumber: string, lang: Language): Promise<IntakeResponse> {
  const alert = await findAlertByProtocol(deps.db, caller.externalSystemId, protocolNumber);
  if (!alert) throw new AppError('not-found', { resource: `request ${protocolNumber}` });
  const rows = await listAlertAttachments(deps.db, alert.id);
  return buildIntakeResponse(deps.db, alert, lang, rows.map((r) => attachmentResult(r, lang)));
}
