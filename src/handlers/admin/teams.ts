import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { addTeamMember as addMember, createTeam as createTeamService, listOperatorTeams as operatorTeams, listTeamMembers as members, listTeams as listTeamsService, myTeamOrders, removeTeamMember as removeMember } from '../../services/operations/index.js';
import { actorOf, bodyOf, queryOf } from './context.js';

export const listTeams: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: { items: await listTeamsService(ctx.deps, ctx.principal.access, queryOf(ctx, 'tenantId')!) } });

export const createTeam: Handler<AdminPrincipal> = async (ctx) => {
  const { tenantId, name } = bodyOf<{ tenantId: string; name: string }>(ctx);
  return { status: 201, body: await createTeamService(ctx.deps, actorOf(ctx), tenantId, name) };
};

export const listTeamMembers: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: { items: await members(ctx.deps, ctx.principal.access, ctx.request.params.teamId!) } });

export const addTeamMember: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await addMember(ctx.deps, actorOf(ctx), ctx.request.params.teamId!, ctx.request.params.operatorId!) });

export const removeTeamMember: Handler<AdminPrincipal> = async (ctx) => {
  await removeMember(ctx.deps, actorOf(ctx), ctx.request.params.teamId!, ctx.request.params.operatorId!);
  return { status: 204 };
};

export const listOperatorTeams: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: { items: await operatorTeams(ctx.deps, actorOf(ctx), ctx.request.params.operatorId!, queryOf(ctx, 'tenantId')) } });

export const listMyTeamOrders: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await myTeamOrders(ctx.deps, actorOf(ctx), queryOf(ctx, 'tenantId')!) });
