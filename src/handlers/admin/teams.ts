import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { createTeam as createTeamService, listTeams as listTeamsService } from '../../services/operations/index.js';
import { actorOf, bodyOf, queryOf } from './context.js';

export const listTeams: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: { items: await listTeamsService(ctx.deps, ctx.principal.access, queryOf(ctx, 'tenantId')!) } });

export const createTeam: Handler<AdminPrincipal> = async (ctx) => {
  const { tenantId, name } = bodyOf<{ tenantId: string; name: string }>(ctx);
  return { status: 201, body: await createTeamService(ctx.deps, actorOf(ctx), tenantId, name) };
};
