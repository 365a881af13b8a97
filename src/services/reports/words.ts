import type { Language } from '../../lib/i18n.js';
import { ALERT_STATUS_WORDS, ORDER_STATUS_WORDS } from '../../lib/status-words.js';

/**
 * The words an export writes instead of codes, in the caller's language: a spreadsheet
 * opened by a council clerk says "Atribuída", not ASSIGNED. Unknown codes (a status added
 * later) are written as they are rather than dropped.
 */
type Words = Readonly<Record<string, { 'pt-BR': string; en: string }>>;

export const ORDER_STATUS: Words = ORDER_STATUS_WORDS;

export const ALERT_STATUS: Words = ALERT_STATUS_WORDS;

export const PRIORITY: Words = {
  Critical: { 'pt-BR': 'Crítica', en: 'Critical' },
  High: { 'pt-BR': 'Alta', en: 'High' },
  Medium: { 'pt-BR': 'Média', en: 'Medium' },
  Low: { 'pt-BR': 'Baixa', en: 'Low' },
};

export const AUDIT_ACTION: Words = {
  'admin-token.create': { 'pt-BR': 'Token criado', en: 'Token created' },
  'admin-token.revoke': { 'pt-BR': 'Token revogado', en: 'Token revoked' },
  'alert.create-order': { 'pt-BR': 'Ordem criada a partir do alerta', en: 'Order created from the alert' },
  'alert.discard': { 'pt-BR': 'Alerta descartado', en: 'Alert discarded' },
  'alert.link': { 'pt-BR': 'Alerta vinculado a uma ordem', en: 'Alert linked to an order' },
  'alert.reclassify': { 'pt-BR': 'Alerta reclassificado', en: 'Alert reclassified' },
  'alert.set-location': { 'pt-BR': 'Localização do alerta definida', en: 'Alert location set' },
  'attachment.dismiss': { 'pt-BR': 'Falha de foto dispensada', en: 'Photo failure dismissed' },
  'attachment.retry': { 'pt-BR': 'Foto baixada de novo', en: 'Photo downloaded again' },
  'inbound.dismiss': { 'pt-BR': 'Item recusado dispensado', en: 'Rejected item dismissed' },
  'inbound.retry': { 'pt-BR': 'Item recusado tentado de novo', en: 'Rejected item retried' },
  'operator.create': { 'pt-BR': 'Operador criado', en: 'Operator created' },
  'operator.set-password': { 'pt-BR': 'Senha do operador definida', en: 'Operator password set' },
  'operator.reset-password': { 'pt-BR': 'Senha do operador redefinida pelo Lumen', en: 'Operator password reset by Lumen' },
  'partner.create': { 'pt-BR': 'Parceiro criado', en: 'Partner created' },
  'partner.poll-now': { 'pt-BR': 'Consulta ao parceiro pedida', en: 'Partner poll requested' },
  'partner.rotate-key': { 'pt-BR': 'Chave do parceiro trocada', en: 'Partner key rotated' },
  'partner.rotate-secret': { 'pt-BR': 'Segredo do webhook trocado', en: 'Webhook secret rotated' },
  'partner.update': { 'pt-BR': 'Parceiro alterado', en: 'Partner updated' },
  'reason.apply-mapping': { 'pt-BR': 'Mapeamento aplicado aos pendentes', en: 'Mapping applied to Pending alerts' },
  'reason.create': { 'pt-BR': 'Motivo criado', en: 'Reason created' },
  'reason.map': { 'pt-BR': 'Código do parceiro mapeado', en: 'Partner code mapped' },
  'reason.unmap': { 'pt-BR': 'Mapeamento removido', en: 'Mapping removed' },
  'service-order.assign': { 'pt-BR': 'Ordem atribuída', en: 'Order assigned' },
  'service-order.start': { 'pt-BR': 'Ordem iniciada', en: 'Order started' },
  'service-order.complete': { 'pt-BR': 'Ordem concluída', en: 'Order completed' },
  'service-order.cancel': { 'pt-BR': 'Ordem cancelada', en: 'Order cancelled' },
  'service-order.set-pole': { 'pt-BR': 'Poste da ordem definido', en: 'Order pole set' },
  'service-order.plan-visit': { 'pt-BR': 'Visita planejada', en: 'Visit planned' },
  'service-order.clear-visit': { 'pt-BR': 'Visita planejada removida', en: 'Planned visit removed' },
  'session.password-refused': { 'pt-BR': 'Troca de senha recusada', en: 'Password change refused' },
  'session.sign-in': { 'pt-BR': 'Entrada no console', en: 'Signed in' },
  'session.sign-in-failed': { 'pt-BR': 'Entrada recusada', en: 'Sign-in refused' },
  'session.sign-out': { 'pt-BR': 'Saída do console', en: 'Signed out' },
  'team.create': { 'pt-BR': 'Equipe criada', en: 'Team created' },
  'team.member-add': { 'pt-BR': 'Membro incluído na equipe', en: 'Team member added' },
  'team.member-remove': { 'pt-BR': 'Membro retirado da equipe', en: 'Team member removed' },
  'tenant.create': { 'pt-BR': 'Cidade criada', en: 'City created' },
  'tenant.lamp-out-policy': { 'pt-BR': 'Regra de lâmpada apagada alterada', en: 'Lamp-out rule changed' },
  'tenant.set-intake': { 'pt-BR': 'Triagem da cidade alterada', en: 'City triage changed' },
  'webhook.redeliver': { 'pt-BR': 'Entrega reenviada', en: 'Delivery resent' },
  'webhook.redeliver-dead': { 'pt-BR': 'Entregas desistidas reenviadas', en: 'Given-up deliveries resent' },
  'webhook.redeliver-since': { 'pt-BR': 'Entregas reenviadas desde uma data', en: 'Deliveries resent since a date' },
  'webhook.test-event': { 'pt-BR': 'Evento de teste enviado', en: 'Test event sent' },
};

export const YES_NO = { 'pt-BR': ['sim', 'não'], en: ['yes', 'no'] } as const;

/** A words table as [code, word] pairs in one language (for a CASE in SQL). */
export function pairs(words: Words, lang: Language): [string, string][] {
  return Object.entries(words).map(([code, w]) => [code, w[lang]]);
}
