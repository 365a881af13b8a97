import type { SandboxEventRequest } from '../../generated/sandbox/types.gen.js';
import type { PartnerPrincipal } from '../http/auth.js';
import type { Handler } from '../http/surface.js';
import { triggerSandboxEvent as trigger } from '../services/sandbox/index.js';

/** POST /api/external/sandbox/events (openapi/sandbox.yaml). */
export const triggerSandboxEvent: Handler<PartnerPrincipal> = async ({ deps, principal, request, lang }) => ({
  status: 200,
  body: await trigger(deps, principal, request.body as SandboxEventRequest, lang),
});
