import type { ColumnType, Generated } from 'kysely';

export type TenantRoleColumn = 'viewer' | 'triager' | 'city-admin';

/** People who run Lumen (migration 0021). */
export interface OperatorTable {
  id: Generated<string>;
  /** Lower-case; unique. */
  email: string;
  name: string;
  /** scrypt$<log2 N>$<r>$<p>$<salt>$<hash>; null until a password is set. */
  password_hash: string | null;
  platform_admin: ColumnType<boolean, boolean | undefined, boolean>;
  disabled_at: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface OperatorGrantTable {
  operator_id: string;
  tenant_id: string;
  role: TenantRoleColumn;
  created_at: Generated<Date>;
}

export interface AdminTokenGrantTable {
  admin_token_id: string;
  tenant_id: string;
  role: TenantRoleColumn;
}

/** A console session; only the SHA-256 of its id (the cookie) is stored. */
export interface OperatorSessionTable {
  id: Generated<string>;
  id_hash: Buffer;
  operator_id: string;
  csrf_token: string;
  created_at: Generated<Date>;
  last_seen_at: Generated<Date>;
  expires_at: Date;
  ended_at: Date | null;
  client_address: string | null;
}

/** Failed sign-ins per account or client address, in a fixed window. */
export interface SignInFailureTable {
  key: string;
  window_start: Date;
  failures: number;
}

/** An operator's membership of a team of its city (migration 0094). */
export interface TeamMemberTable {
  team_id: string;
  operator_id: string;
  tenant_id: string;
  added_at: Generated<Date>;
}

export interface OperatorsTables {
  operator: OperatorTable;
  team_member: TeamMemberTable;
  operator_grant: OperatorGrantTable;
  admin_token_grant: AdminTokenGrantTable;
  operator_session: OperatorSessionTable;
  sign_in_failure: SignInFailureTable;
}
