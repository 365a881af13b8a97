import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import type { AttachmentContentType } from '../../db/tables/intake.js';
import { createMaterial as create, listMaterials as list, orderCompletion, orderPhotoContent, updateMaterial as update, uploadOrderPhoto as upload, type MaterialInput } from '../../services/completion/index.js';
import { ATTACHMENT_HEADERS, attachmentDisposition } from './attachments.js';
import { actorOf, bodyOf, orderOf, queryOf } from './context.js';

export const listMaterials: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: { items: await list(ctx.deps, ctx.principal.access, ctx.request.params.tenantId!, queryOf(ctx, 'includeRetired') === 'true') },
});

export const createMaterial: Handler<AdminPrincipal> = async (ctx) => ({
  status: 201,
  body: await create(ctx.deps, actorOf(ctx), ctx.request.params.tenantId!, bodyOf<Required<Pick<MaterialInput, 'kind' | 'name'>> & MaterialInput>(ctx)),
});

export const updateMaterial: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await update(ctx.deps, actorOf(ctx), ctx.request.params.tenantId!, ctx.request.params.materialId!, bodyOf<MaterialInput>(ctx)),
});

export const getServiceOrderCompletion: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await orderCompletion(ctx.deps.db, ctx.principal.access, await orderOf(ctx)) });

export const uploadServiceOrderPhoto: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await upload(ctx.deps, actorOf(ctx), await orderOf(ctx), ctx.request.params.photoId!, bodyOf<{ contentType: AttachmentContentType; data: string }>(ctx)),
});

/** Served as an alert's attachment is: the same caching and the same headers against sniffing and running. */
export const getServiceOrderPhoto: Handler<AdminPrincipal> = async (ctx) => {
  const id = ctx.request.params.photoId!;
  const got = await orderPhotoContent(ctx.deps, ctx.principal.access, await orderOf(ctx), id);
  return {
    status: 200,
    body: got.bytes,
    contentType: got.contentType,
    headers: { 'cache-control': 'private, max-age=86400', etag: `"${got.sha256}"`, ...ATTACHMENT_HEADERS, 'content-disposition': attachmentDisposition(id, got.contentType) },
  };
};
