import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler } from '../../http/surface.js';
import { createAdminToken as create, listAdminTokensFor, revokeAdminTokenById, type CreateAdminTokenInput } from '../../services/operators/index.js';
import { actorOf, bodyOf } from './context.js';

export const listAdminTokens: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: { items: await listAdminTokensFor(ctx.deps, ctx.principal.access, ctx.principal.operator?.id) } });

export const createAdminToken: Handler<AdminPrincipal> = async (ctx) => ({ status: 201, body: await create(ctx.deps, actorOf(ctx), bodyOf<CreateAdminTokenInput>(ctx)), headers: { 'cache-control': 'no-store' } });

export const revokeAdminToken: Handler<AdminPrincipal> = async (ctx) => ({ status: 200, body: await revokeAdminTokenById(ctx.deps, actorOf(ctx), ctx.request.params.tokenId!) });
