import type { AdminPrincipal } from '../../http/admin-auth.js';
import type { Handler, HandlerContext } from '../../http/surface.js';
import { sameOrigin } from '../../http/admin-auth.js';
import { AppError } from '../../lib/errors.js';
import { changeOwnPassword, currentSession, SESSION_ABSOLUTE_SECONDS, SESSION_COOKIE, signIn, signOut } from '../../services/operators/index.js';
import { actorOf, bodyOf } from './context.js';

/** Secure when the browser reaches Lumen over TLS: served over TLS, or LUMEN_PUBLIC_URL is https. */
function cookie(ctx: HandlerContext<unknown>, value: string, maxAge: number): string {
  const secure = ctx.request.client.secure || ctx.deps.config.publicOrigin?.startsWith('https:') === true;
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
}

/** Public (x-lumen-role: public): the principal is null here. */
export const createSession: Handler<AdminPrincipal> = async (ctx) => {
  // A sign-in form posted from another site (login CSRF) is refused; scripts send no Origin.
  if (ctx.request.headers.origin !== undefined && !sameOrigin(ctx.deps.config, ctx.request.headers, ctx.request.client)) throw new AppError('csrf-failed');
  const { email, password } = bodyOf<{ email: string; password: string }>(ctx);
  const { sessionId, ...view } = await signIn(ctx.deps, { email, password, address: ctx.request.client.address, requestId: ctx.requestId });
  return { status: 200, body: view, headers: { 'set-cookie': cookie(ctx, sessionId, SESSION_ABSOLUTE_SECONDS), 'cache-control': 'no-store' } };
};

function requireSession(ctx: HandlerContext<AdminPrincipal>): { id: string; csrfToken: string } {
  if (!ctx.principal.session || !ctx.principal.operator) throw new AppError('invalid-admin-token', {}, undefined, { 'www-authenticate': 'Bearer realm="lumen-admin"' });
  return ctx.principal.session;
}

export const getSession: Handler<AdminPrincipal> = async (ctx) => {
  const session = requireSession(ctx);
  return { status: 200, body: await currentSession(ctx.deps, ctx.principal.operator!.id, session.csrfToken), headers: { 'cache-control': 'no-store' } };
};

export const deleteSession: Handler<AdminPrincipal> = async (ctx) => {
  const session = requireSession(ctx);
  await signOut(ctx.deps, actorOf(ctx), session.id);
  return { status: 204, headers: { 'set-cookie': cookie(ctx, '', 0) } };
};

export const changeSessionPassword: Handler<AdminPrincipal> = async (ctx) => {
  const session = requireSession(ctx);
  const { currentPassword, newPassword } = bodyOf<{ currentPassword: string; newPassword: string }>(ctx);
  await changeOwnPassword(ctx.deps, actorOf(ctx), session.id, { currentPassword, newPassword, address: ctx.request.client.address });
  return { status: 204 };
};
