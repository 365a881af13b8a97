/**
 * Operators and their access: accounts, roles per tenant (access.ts), console sessions
 * and admin tokens.
 *
 * This file is the capability's only door: code outside src/services/operators/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export {
  createAdminToken,
  listAdminTokensFor,
  listAllAdminTokens,
  revokeAdminTokenById,
  type AdminTokenView,
  type CreateAdminTokenInput,
} from './tokens.js';
export {
  PLATFORM_ACCESS,
  TENANT_ROLES,
  canSee,
  holdsRoleSomewhere,
  inScope,
  isTenantRole,
  narrowAccess,
  requirePlatformAdmin,
  requireTenantRole,
  roleOn,
  visibleTenants,
  type AdminAccess,
  type TenantRole,
} from './access.js';
export {
  createOperator,
  disableOperator,
  enableOperator,
  getOperator,
  grantRole,
  listOperators,
  normalizeEmail,
  operatorForCli,
  resetOperatorPassword,
  revokeRole,
  setOperatorPassword,
  setPlatformAdmin,
  type CreateOperatorInput,
  type OperatorView,
} from './accounts.js';
export { accessOfToken } from './principal.js';
export { checkPassword, generatePassword, PASSWORD_MIN_LENGTH, setPasswordCost, setPasswordHashConcurrency } from './password.js';
export { changeOwnPassword, currentSession, resumeSession, SESSION_ABSOLUTE_SECONDS, SESSION_COOKIE, SESSION_IDLE_SECONDS, SIGN_IN_WINDOW_SECONDS, signIn, signOut, sessionOperatorView, type SessionView } from './sessions.js';
