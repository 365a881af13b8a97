import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { HandlerContext } from '../../http/surface.js';
import type { Actor } from '../../services/audit/index.js';
import { resolveAlert, resolveField, resolveOrder, type Ref, type UndoRequest } from '../../services/operations/index.js';

type Ctx = HandlerContext<AdminPrincipal>;

/** The actor of an admin request, tied to its request id for the audit log. */
export function actorOf(ctx: Ctx): Actor {
  return { ...ctx.principal.actor, requestId: ctx.requestId };
}

/** The parsed, validated JSON body of an operation (the document guarantees its shape). */
export function bodyOf<T>(ctx: Ctx): T {
  return ctx.request.body as T;
}

/** One query value (the document declares none of them as arrays). */
export function queryOf(ctx: Ctx, name: string): string | undefined {
  const v = ctx.request.query[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The alert named by the path (id, `42` or `#42`), among the caller's tenants or `?tenantId`. */
export function alertOf(ctx: Ctx): Promise<Ref> {
  return resolveAlert(ctx.deps.db, ctx.principal.access, ctx.request.params.alertId!, queryOf(ctx, 'tenantId'));
}

/** The service order named by the path (id or `OS-2026-00042`), among the caller's tenants or `?tenantId`. */
export function orderOf(ctx: Ctx): Promise<Ref> {
  return resolveOrder(ctx.deps.db, ctx.principal.access, ctx.request.params.serviceOrderId!, queryOf(ctx, 'tenantId'));
}

/** A team name or order number in a body, looked up in the tenant of the alert or order the path names (422 when it names nothing there). */
export function bodyRef(kind: 'team' | 'service order', ctx: Ctx, value: string, tenantId: string, pointer: string, owner: 'alert' | 'order'): Promise<string> {
  return resolveField(ctx.deps.db, ctx.principal.access, kind, value, tenantId, pointer, owner);
}

/** `Prefer: undo` on the request (RFC 7240): an undo request for the action's service, else undefined. */
export function undoOf(ctx: Ctx): UndoRequest | undefined {
  const prefer = ctx.request.headers.prefer;
  const values = (Array.isArray(prefer) ? prefer.join(',') : (prefer ?? '')).split(/[,;]/).map((v) => v.trim().toLowerCase());
  return values.includes('undo') ? {} : undefined;
}

/** The answer's headers for an action that can be undone: none when it was not asked for (or nothing changed). */
export function undoHeaders(undo: UndoRequest | undefined): Record<string, string> {
  if (!undo?.ticket) return {};
  return { 'preference-applied': 'undo', 'lumen-undo-action': undo.ticket.actionId, 'lumen-undo-until': undo.ticket.until.toISOString() };
}
