import { createHash, randomUUID } from 'node:crypto';
import type { ServiceDeps } from '../../src/services/deps.js';

/**
 * Rows of the queues operators clear by hand, written directly: a stored attachment and
 * a failed attachment URL of an alert, and a rejected inbound item of a partner.
 */
export async function makeQueueRows(deps: ServiceDeps, o: { tenantId: string; externalSystemId: string; alertId: string; protocolNumber: string }): Promise<{ attachmentId: string; failureId: string; itemId: string }> {
  const attachmentId = randomUUID();
  await deps.db
    .insertInto('alert_attachment')
    .values({
      id: attachmentId,
      alert_id: o.alertId,
      tenant_id: o.tenantId,
      source_kind: 'url',
      source_url: 'https://fotos.example.gov.br/1.jpg',
      source_hash: createHash('sha256').update(attachmentId).digest(),
      filename: '1.jpg',
      content_type: 'image/jpeg',
      success: false,
      blob_path: null,
      size_bytes: null,
      content_sha256: null,
      error_code: 'download-failed',
      error_params: null,
    })
    .execute();
  const failure = await deps.db
    .insertInto('attachment_failure')
    .values({ tenant_id: o.tenantId, external_system_id: o.externalSystemId, alert_id: o.alertId, attachment_id: attachmentId, protocol_number: o.protocolNumber, url: 'https://fotos.example.gov.br/1.jpg', filename: '1.jpg', content_type: 'image/jpeg', error_code: 'download-failed', detail: 'HTTP 404', attempts: 3 })
    .returning('id')
    .executeTakeFirstOrThrow();
  const item = { protocolNumber: `${o.protocolNumber}-R`, assetType: 'TREE' };
  const rejected = await deps.db
    .insertInto('rejected_inbound_item')
    .values({ external_system_id: o.externalSystemId, tenant_id: o.tenantId, protocol_number: item.protocolNumber, item: JSON.stringify(item), item_hash: createHash('sha256').update(JSON.stringify(item)).digest(), problem_code: 'validation-failed', reasons: JSON.stringify([{ pointer: '/assetType', message: 'must be POLE' }]), since: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { attachmentId, failureId: failure.id, itemId: rejected.id };
}
