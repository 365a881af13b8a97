import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { attachmentContent, attachmentFailures, dismissAttachmentFailure as dismiss, retryAttachmentFailure as retry } from '../../services/attachments/index.js';
import { actorOf, alertOf, queryOf } from './context.js';

/** A stored attachment never changes: clients and the console may keep it for a day. */
const CACHE = 'private, max-age=86400';

/**
 * A stored photo, with the headers that keep a browser from reading it as anything else:
 * its bytes passed the image check at intake, but a JPEG header can front an HTML page
 * (a polyglot). No sniffing, shown inline under a name Lumen makes (never the partner's
 * filename, which could carry quotes or a path), and a sandbox policy that runs nothing
 * even if it were opened as a page.
 */
export const ATTACHMENT_HEADERS = { 'x-content-type-options': 'nosniff', 'content-security-policy': "sandbox; default-src 'none'" } as const;

export function attachmentDisposition(id: string, contentType: string): string {
  const ext = contentType === 'image/png' ? 'png' : contentType === 'image/webp' ? 'webp' : 'jpg';
  return `inline; filename="photo-${id.replace(/[^0-9a-f]/gi, '').slice(0, 12)}.${ext}"`;
}

export const getAlertAttachment: Handler<AdminPrincipal> = async (ctx) => {
  const id = ctx.request.params.attachmentId!;
  const got = await attachmentContent(ctx.deps, ctx.principal.access, await alertOf(ctx), id);
  return { status: 200, body: got.bytes, contentType: got.contentType, headers: { 'cache-control': CACHE, etag: `"${got.sha256}"`, ...ATTACHMENT_HEADERS, 'content-disposition': attachmentDisposition(id, got.contentType) } };
};

export const listAttachmentFailures: Handler<AdminPrincipal> = async (ctx) => {
  const limit = queryOf(ctx, 'limit');
  return {
    status: 200,
    body: {
      items: await attachmentFailures(ctx.deps, ctx.request.params.tenantId!, { limit: limit === undefined ? undefined : Math.min(Number(limit), 1000), includeDismissed: queryOf(ctx, 'includeDismissed') === 'true' }, ctx.principal.access),
    },
  };
};

export const retryAttachmentFailure: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await retry(ctx.deps, actorOf(ctx), ctx.request.params.failureId!, ctx.signal) });

export const dismissAttachmentFailure: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await dismiss(ctx.deps, actorOf(ctx), ctx.request.params.failureId!) });
