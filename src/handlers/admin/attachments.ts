import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { attachmentContent, attachmentFailures, dismissAttachmentFailure as dismiss, retryAttachmentFailure as retry } from '../../services/attachments/index.js';
import { actorOf, alertOf, queryOf } from './context.js';

/** A stored attachment never changes: clients and the console may keep it for a day. */
const CACHE = 'private, max-age=86400';

export const getAlertAttachment: Handler<AdminPrincipal> = async (ctx) => {
  const got = await attachmentContent(ctx.deps, ctx.principal.access, await alertOf(ctx), ctx.request.params.attachmentId!);
  return { status: 200, body: got.bytes, contentType: got.contentType, headers: { 'cache-control': CACHE, etag: `"${got.sha256}"` } };
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
