import { format, type Language, type Localized } from './i18n.js';

/**
 * The error catalogue: every problem Lumen can answer with, its HTTP status and its
 * pt-BR/en texts. Codes are stable and form the problem `type` URI
 * (urn:lumen:problem:<code>), so partners can switch on them.
 */
export const PROBLEMS = {
  'malformed-json': { status: 400, title: { 'pt-BR': 'JSON malformado', en: 'Malformed JSON' }, detail: { 'pt-BR': 'O corpo da requisição não é um JSON válido: {reason}', en: 'The request body is not valid JSON: {reason}' } },
  'malformed-request': { status: 400, title: { 'pt-BR': 'Requisição ilegível', en: 'Malformed request' }, detail: { 'pt-BR': 'A requisição HTTP não pôde ser lida ({reason}).', en: 'The HTTP request could not be read ({reason}).' } },
  'invalid-parameter': { status: 400, title: { 'pt-BR': 'Parâmetro inválido', en: 'Invalid parameter' }, detail: { 'pt-BR': 'Um ou mais parâmetros ou cabeçalhos são inválidos.', en: 'One or more parameters or headers are invalid.' } },
  'invalid-idempotency-key': { status: 400, title: { 'pt-BR': 'Idempotency-Key inválida', en: 'Invalid Idempotency-Key' }, detail: { 'pt-BR': 'O cabeçalho Idempotency-Key deve ser um UUID.', en: 'The Idempotency-Key header must be a UUID.' } },
  'invalid-cursor': { status: 400, title: { 'pt-BR': 'Cursor inválido', en: 'Invalid cursor' }, detail: { 'pt-BR': 'O cursor informado não foi emitido por este serviço ou não corresponde a esta consulta.', en: 'The cursor was not issued by this service or does not belong to this query.' } },
  unauthorized: { status: 401, title: { 'pt-BR': 'Não autenticado', en: 'Unauthenticated' }, detail: { 'pt-BR': 'Chave de API ausente, inválida, revogada ou expirada.', en: 'API key missing, invalid, rotated away or expired.' } },
  'invalid-admin-token': { status: 401, title: { 'pt-BR': 'Token de administração inválido', en: 'Invalid admin token' }, detail: { 'pt-BR': 'Token de administração ausente, inválido ou revogado.', en: 'Admin token missing, invalid or revoked.' } },
  'invalid-credentials': { status: 401, title: { 'pt-BR': 'Credenciais inválidas', en: 'Invalid credentials' }, detail: { 'pt-BR': 'E-mail ou senha incorretos.', en: 'Wrong e-mail or password.' } },
  'csrf-failed': { status: 403, title: { 'pt-BR': 'Requisição de outra origem', en: 'Cross-site request refused' }, detail: { 'pt-BR': 'Uma requisição que altera dados com o cookie de sessão precisa vir da origem do serviço e trazer o cabeçalho X-CSRF-Token da sessão.', en: 'A request that changes data with the session cookie must come from the service\'s own origin and carry the session\'s X-CSRF-Token header.' } },
  forbidden: { status: 403, title: { 'pt-BR': 'Acesso negado', en: 'Forbidden' }, detail: { 'pt-BR': 'A chave é válida, mas não tem o escopo exigido: {scopes}.', en: 'The key is valid but lacks the required scope: {scopes}.' } },
  'operator-beyond-your-cities': { status: 403, title: { 'pt-BR': 'Operador de outras cidades também', en: 'Operator of other cities too' }, detail: { 'pt-BR': 'Este operador também tem papel em uma cidade que você não administra: só quem administra todas as cidades dele (ou um administrador da plataforma) pode desativá-lo, reativá-lo ou redefinir a senha dele.', en: 'This operator also holds a role in a city you do not administer: only someone who administers all of their cities (or a platform admin) may disable, re-enable or reset their password.' } },
  'platform-admin-only': { status: 403, title: { 'pt-BR': 'Só para administradores da plataforma', en: 'Platform admins only' }, detail: { 'pt-BR': 'Só um administrador da plataforma pode {action}.', en: 'Only a platform admin may {action}.' } },
  'partner-disabled': { status: 403, title: { 'pt-BR': 'Sistema externo desativado', en: 'External system disabled' }, detail: { 'pt-BR': 'O sistema externo desta chave está desativado.', en: 'The external system of this key is disabled.' } },
  'not-found': { status: 404, title: { 'pt-BR': 'Não encontrado', en: 'Not found' }, detail: { 'pt-BR': 'O recurso {resource} não existe.', en: 'The resource {resource} does not exist.' } },
  'method-not-allowed': { status: 405, title: { 'pt-BR': 'Método não permitido', en: 'Method not allowed' }, detail: { 'pt-BR': 'O método {method} não é aceito em {path}.', en: 'Method {method} is not allowed on {path}.' } },
  'request-timeout': { status: 408, title: { 'pt-BR': 'Tempo de envio esgotado', en: 'Request timeout' }, detail: { 'pt-BR': 'A requisição não chegou completa em {seconds} s; envie-a de novo.', en: 'The request did not arrive in full within {seconds} s; send it again.' } },
  'invalid-transition': { status: 409, title: { 'pt-BR': 'Transição inválida', en: 'Invalid transition' }, detail: { 'pt-BR': 'Não é possível {action}: o estado atual é {state}.', en: 'Cannot {action}: the current state is {state}.' } },
  ambiguous: { status: 409, title: { 'pt-BR': 'Referência ambígua', en: 'Ambiguous reference' }, detail: { 'pt-BR': '{ref} identifica mais de um {kind} nos municípios visíveis; informe tenantId.', en: '{ref} names more than one {kind} in the visible tenants; give tenantId.' } },
  'bulk-refused': { status: 409, title: { 'pt-BR': 'Ação em lote recusada', en: 'Bulk action refused' }, detail: { 'pt-BR': 'Alertas fora do estado Pending: {refused} de {count}; nada foi alterado (veja results).', en: 'Alerts not Pending: {refused} of {count}; nothing was changed (see results).' } },
  'undo-expired': { status: 409, title: { 'pt-BR': 'Não dá mais para desfazer', en: 'Too late to undo' }, detail: { 'pt-BR': 'O prazo para desfazer esta ação passou (ou ela já foi desfeita); o parceiro já foi ou está sendo avisado.', en: 'The time to undo this action has passed (or it was undone already); the partner has been or is being told.' } },
  'undo-changed': { status: 409, title: { 'pt-BR': 'Não dá para desfazer', en: 'Cannot undo' }, detail: { 'pt-BR': 'Um alerta ou ordem desta ação mudou depois dela; a mudança posterior fica.', en: 'An alert or order of this action changed after it; the later change stands.' } },
  conflict: { status: 409, title: { 'pt-BR': 'Conflito', en: 'Conflict' }, detail: { 'pt-BR': '{reason}', en: '{reason}' } },
  'payload-too-large': { status: 413, title: { 'pt-BR': 'Corpo grande demais', en: 'Payload too large' }, detail: { 'pt-BR': 'O corpo da requisição excede o limite de {limit} bytes.', en: 'The request body exceeds the limit of {limit} bytes.' } },
  'unsupported-media-type': { status: 415, title: { 'pt-BR': 'Tipo de conteúdo não suportado', en: 'Unsupported media type' }, detail: { 'pt-BR': 'Envie o corpo como {accepted}.', en: 'Send the body as {accepted}.' } },
  'validation-failed': { status: 422, title: { 'pt-BR': 'Falha de validação', en: 'Validation failed' }, detail: { 'pt-BR': 'O corpo da requisição tem {count} problema(s); veja errors.', en: 'The request body has {count} problem(s); see errors.' } },
  'bulk-unknown-alerts': { status: 422, title: { 'pt-BR': 'Alertas desconhecidos no lote', en: 'Unknown alerts in the batch' }, detail: { 'pt-BR': 'Alertas que não existem neste município: {refused} de {count}; nada foi alterado (veja results).', en: 'Alerts that do not exist in this city: {refused} of {count}; nothing was changed (see results).' } },
  'location-unconfirmed': { status: 422, title: { 'pt-BR': 'Local a confirmar', en: 'Location to confirm' }, detail: { 'pt-BR': '{where}. Confirme para gravar assim mesmo.', en: '{where}. Confirm to save it anyway.' } },
  'idempotency-key-reused': { status: 422, title: { 'pt-BR': 'Idempotency-Key reutilizada', en: 'Idempotency-Key reused' }, detail: { 'pt-BR': 'Esta Idempotency-Key já foi usada com outro corpo de requisição.', en: 'This Idempotency-Key was already used with a different request body.' } },
  'rate-limited': { status: 429, title: { 'pt-BR': 'Muitas requisições', en: 'Too many requests' }, detail: { 'pt-BR': 'Limite de requisições atingido; tente novamente em {retryAfter} s.', en: 'Rate limit reached; retry in {retryAfter} s.' } },
  'headers-too-large': { status: 431, title: { 'pt-BR': 'Cabeçalhos grandes demais', en: 'Request headers too large' }, detail: { 'pt-BR': 'Os cabeçalhos da requisição excedem o limite do serviço.', en: 'The request headers exceed the service limit.' } },
  'internal-error': { status: 500, title: { 'pt-BR': 'Erro interno', en: 'Internal error' }, detail: { 'pt-BR': 'Ocorreu um erro inesperado. Informe o requestId ao suporte.', en: 'An unexpected error occurred. Quote the requestId to support.' } },
  'service-unavailable': { status: 503, title: { 'pt-BR': 'Serviço indisponível', en: 'Service unavailable' }, detail: { 'pt-BR': 'O banco de dados do Lumen não responde no momento; tente novamente em {retryAfter} s. Nada foi gravado.', en: "Lumen's database does not answer right now; retry in {retryAfter} s. Nothing was stored." } },
  unavailable: { status: 503, title: { 'pt-BR': 'Serviço indisponível', en: 'Service unavailable' }, detail: { 'pt-BR': 'O serviço está temporariamente indisponível.', en: 'The service is temporarily unavailable.' } },
} as const satisfies Record<string, { status: number; title: Localized; detail: Localized }>;

export type ProblemCode = keyof typeof PROBLEMS;

export interface FieldError {
  /** JSON Pointer into the request body, or /query/<name>, /header/<name>. */
  pointer: string;
  message: string;
}

/** A parameter given in both languages ({ 'pt-BR': ..., en: ... }) is read in the answer's language. */
/** What the partner API and the admin API read as a body. */
export const JSON_ONLY = { accepted: 'application/json' } as const;

function localizeParams(params: Record<string, unknown>, lang: Language): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) {
    out[k] = v !== null && typeof v === 'object' && 'pt-BR' in v && 'en' in v ? (v as Localized)[lang] : v;
  }
  return out;
}

/** The one error type of Lumen. Anything else thrown is an opaque 500. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ProblemCode,
    readonly params: Record<string, unknown> = {},
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
    /** Members added to the problem document (RFC 9457 extensions), as the operation's document declares them. */
    readonly extensions?: Record<string, unknown>,
  ) {
    super(format(PROBLEMS[code].detail.en, localizeParams(params, 'en')));
    this.name = 'AppError';
    this.status = PROBLEMS[code].status;
  }

  /** The same problem with more response headers (its own win on a clash). */
  withHeaders(extra: Record<string, string>): AppError {
    const copy = new AppError(this.code, this.params, this.errors, { ...extra, ...this.headers }, this.extensions);
    copy.name = this.name;
    copy.stack = this.stack;
    return copy;
  }

  title(lang: Language): string {
    return PROBLEMS[this.code].title[lang];
  }

  detail(lang: Language): string {
    return format(PROBLEMS[this.code].detail[lang], localizeParams(this.params, lang));
  }
}

export const problemType = (code: ProblemCode): string => `urn:lumen:problem:${code}`;
