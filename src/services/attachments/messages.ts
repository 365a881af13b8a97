import { format, type Language, type Localized } from '../../lib/i18n.js';

/**
 * Why one attachment failed: a stable code kept with the attachment, rendered in the
 * reader's language when a response is built (a resend in English shows earlier
 * failures in English too).
 */
export const ATTACHMENT_ERRORS = {
  'data-uri': {
    'pt-BR': 'Envie o conteúdo em base64 puro, sem o prefixo data: (data URI).',
    en: 'Send the content as plain base64, without a data: URI prefix.',
  },
  'invalid-base64': {
    'pt-BR': 'O conteúdo não é base64 válido (RFC 4648, com preenchimento correto e sem espaços ou quebras de linha).',
    en: 'The content is not valid base64 (RFC 4648, correctly padded, without spaces or line breaks).',
  },
  empty: { 'pt-BR': 'O anexo está vazio.', en: 'The attachment is empty.' },
  'too-large': {
    'pt-BR': 'O anexo excede o limite de 5 MiB (5.242.880 bytes).',
    en: 'The attachment exceeds the 5 MiB limit (5,242,880 bytes).',
  },
  'content-mismatch': {
    'pt-BR': 'O conteúdo do anexo não é {contentType} ({detected}).',
    en: 'The attachment content is not {contentType} ({detected}).',
  },
  'invalid-url': { 'pt-BR': 'A URL do anexo é inválida.', en: 'The attachment URL is invalid.' },
  'insecure-url': { 'pt-BR': 'A URL do anexo deve usar HTTPS.', en: 'The attachment URL must use HTTPS.' },
  'blocked-address': {
    'pt-BR': 'A URL do anexo leva a um endereço não permitido (rede privada, loopback, link-local ou metadados de nuvem).',
    en: 'The attachment URL leads to an address that is not allowed (private network, loopback, link-local or cloud metadata).',
  },
  'download-failed': {
    'pt-BR': 'Não foi possível baixar o anexo após {attempts} tentativa(s): {cause}.',
    en: 'The attachment could not be downloaded after {attempts} attempt(s): {cause}.',
  },
  'storage-failed': {
    'pt-BR': 'O anexo não pôde ser armazenado; reenvie a solicitação para tentar de novo.',
    en: 'The attachment could not be stored; resend the request to try again.',
  },
} as const satisfies Record<string, Localized>;

export type AttachmentErrorCode = keyof typeof ATTACHMENT_ERRORS;

/** Causes of a failed download, localised inside the download-failed message. */
const CAUSES = {
  timeout: { 'pt-BR': 'tempo esgotado', en: 'timed out' },
  network: { 'pt-BR': 'falha de conexão', en: 'connection failed' },
  tls: { 'pt-BR': 'falha de TLS', en: 'TLS failure' },
  redirects: { 'pt-BR': 'redirecionamentos demais', en: 'too many redirects' },
  http: { 'pt-BR': 'o servidor respondeu HTTP {status}', en: 'the server answered HTTP {status}' },
} as const satisfies Record<string, Localized>;

export type DownloadCause = keyof typeof CAUSES;

const DETECTED = {
  none: { 'pt-BR': 'não é uma imagem JPEG, PNG ou WebP', en: 'not a JPEG, PNG or WebP image' },
} as const;

export type AttachmentErrorParams = Record<string, string | number>;

export function attachmentErrorMessage(code: string, params: AttachmentErrorParams | null, lang: Language): string {
  const template = (ATTACHMENT_ERRORS as Record<string, Localized>)[code];
  if (!template) return code;
  const p: Record<string, unknown> = { ...(params ?? {}) };
  if (typeof p.cause === 'string') p.cause = format((CAUSES as Record<string, Localized>)[p.cause]?.[lang] ?? p.cause, p);
  if (code === 'content-mismatch') p.detected = p.detected ? format(lang === 'en' ? 'it is {type}' : 'é {type}', { type: p.detected }) : DETECTED.none[lang];
  return format(template[lang], p);
}
