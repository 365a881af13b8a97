import type { Localized } from './i18n.js';

/**
 * Statuses in words, in both languages: what a person reads wherever Lumen writes a
 * status into text (problem details, exports). Codes stay codes in fields.
 */
export const ORDER_STATUS_WORDS: Readonly<Record<string, Localized>> = {
  OPEN: { 'pt-BR': 'Aberta', en: 'Open' },
  ASSIGNED: { 'pt-BR': 'Atribuída', en: 'Assigned' },
  IN_PROGRESS: { 'pt-BR': 'Em execução', en: 'In progress' },
  COMPLETED: { 'pt-BR': 'Concluída', en: 'Completed' },
  CANCELLED: { 'pt-BR': 'Cancelada', en: 'Cancelled' },
};

export const ALERT_STATUS_WORDS: Readonly<Record<string, Localized>> = {
  Pending: { 'pt-BR': 'Pendente', en: 'Pending' },
  Linked: { 'pt-BR': 'Vinculado a uma ordem', en: 'Linked to an order' },
  Resolved: { 'pt-BR': 'Resolvido', en: 'Resolved' },
  Cancelled: { 'pt-BR': 'Descartado', en: 'Discarded' },
};

/** A status of an alert or an order in words; an unknown one as it is. */
export function statusWords(status: string): Localized | string {
  return ORDER_STATUS_WORDS[status] ?? ALERT_STATUS_WORDS[status] ?? status;
}
