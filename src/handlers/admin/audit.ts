import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { listAuditEntries as list } from '../../services/audit/index.js';
import { queryOf } from './context.js';

export const listAuditEntries: Handler<AdminPrincipal> = async (ctx) => ({
  status: 200,
  body: await list(ctx.deps, ctx.principal.access, {
    tenantId: queryOf(ctx, 'tenantId'),
    since: queryOf(ctx, 'since'),
    until: queryOf(ctx, 'until'),
    actor: queryOf(ctx, 'actor'),
    entityType: queryOf(ctx, 'entityType'),
    entityId: queryOf(ctx, 'entityId'),
    after: queryOf(ctx, 'after'),
    limit: queryOf(ctx, 'limit'),
  }),
});
