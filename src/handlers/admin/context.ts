import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { HandlerContext } from '../../http/surface.js';
import type { Actor } from '../../services/audit/index.js';

/** The actor of an admin request, tied to its request id for the audit log. */
export function actorOf(ctx: HandlerContext<AdminPrincipal>): Actor {
  return { ...ctx.principal.actor, requestId: ctx.requestId };
}

/** The parsed, validated JSON body of an operation (the document guarantees its shape). */
export function bodyOf<T>(ctx: HandlerContext<AdminPrincipal>): T {
  return ctx.request.body as T;
}

/** One query value (the document declares none of them as arrays). */
export function queryOf(ctx: HandlerContext<AdminPrincipal>, name: string): string | undefined {
  const v = ctx.request.query[name];
  return Array.isArray(v) ? v[0] : v;
}
