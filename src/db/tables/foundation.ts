import type { ColumnType, Generated } from 'kysely';

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type IntakePolicy = 'automatic' | 'manual';
export type Transport = 'webhook' | 'polling';
/** Which signature headers a partner's webhooks carry (migration 0027). */
export type WebhookSignatureScheme = 'lumen' | 'standard' | 'both';
export type Scope = 'canCreateServiceOrders' | 'canCreateAlerts' | 'canReadCityData' | 'canManageIntegration';

export interface TenantTable {
  id: Generated<string>;
  name: string;
  ibge_code: string | null;
  intake_policy: ColumnType<IntakePolicy, IntakePolicy | undefined, IntakePolicy>;
  /** A partner's sandbox (migration 0014): demo data, lmn_test_ keys, sandbox events. */
  sandbox: ColumnType<boolean, boolean | undefined, boolean>;
  /** Minutes a lamp may be reported out before a TELEMETRY_LAMP_OUT alert; null = never (0015). */
  lamp_out_after_minutes: ColumnType<number | null, number | null | undefined, number | null>;
  /** Groups of Pending alerts (0090). */
  duplicate_radius_meters: Generated<number>;
  duplicate_window_hours: Generated<number>;
  supply_fault_radius_meters: Generated<number>;
  supply_fault_window_minutes: Generated<number>;
  /** Local night window (HH:MM:SS) in which a relay reported off means a dark street. */
  night_starts: ColumnType<string, string | undefined, string>;
  night_ends: ColumnType<string, string | undefined, string>;
  /** IANA time zone of the night window. */
  timezone: ColumnType<string, string | undefined, string>;
  /** The extent an operator configured (0084): all four or none. */
  extent_south: ColumnType<number | null, number | null | undefined, number | null>;
  extent_west: ColumnType<number | null, number | null | undefined, number | null>;
  extent_north: ColumnType<number | null, number | null | undefined, number | null>;
  extent_east: ColumnType<number | null, number | null | undefined, number | null>;
  /** The bounding box of the active poles, kept by triggers on pole (0084). */
  pole_extent_south: ColumnType<number | null, never, never>;
  pole_extent_west: ColumnType<number | null, never, never>;
  pole_extent_north: ColumnType<number | null, never, never>;
  pole_extent_east: ColumnType<number | null, never, never>;
  /** A location set farther than this from every pole needs a confirmation (default 200). */
  location_check_meters: ColumnType<number, number | undefined, number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ExternalSystemTable {
  id: Generated<string>;
  tenant_id: string;
  code: string;
  scopes: ColumnType<Scope[], Scope[] | undefined, Scope[]>;
  transport: ColumnType<Transport, Transport | undefined, Transport>;
  webhook_url: string | null;
  webhook_secret_enc: string | null;
  polling_url: string | null;
  polling_key_enc: string | null;
  polling_interval_seconds: ColumnType<number, number | undefined, number>;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  event_types: string[] | null;
  rate_limit_per_minute: number | null;
  events_min_interval_seconds: number | null;
  webhook_signature: ColumnType<WebhookSignatureScheme, WebhookSignatureScheme | undefined, WebhookSignatureScheme>;
  /** The secret a rotation replaced, still signing until webhook_previous_secret_until. */
  webhook_previous_secret_enc: string | null;
  webhook_previous_secret_until: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ApiKeyTable {
  id: Generated<string>;
  external_system_id: string;
  key_id: string;
  key_prefix: string;
  key_hash: Buffer;
  created_at: Generated<Date>;
  revoked_at: Date | null;
  expires_at: Date | null;
}

export interface AdminTokenTable {
  id: Generated<string>;
  name: string;
  key_id: string;
  key_prefix: string;
  key_hash: Buffer;
  created_at: Generated<Date>;
  revoked_at: Date | null;
  /** The operator the token belongs to (0021); null for a service token. */
  operator_id: string | null;
  /** Its reach (0021): platform-wide, its owner's access, or its own grants (admin_token_grant). */
  scope: AdminTokenScope;
  expires_at: Date | null;
  /** The operator who made a service token (0082): its reach never exceeds theirs now. */
  made_by: ColumnType<string | null, string | null | undefined, string | null>;
}

export type AdminTokenScope = 'platform' | 'owner' | 'grants';

export interface FoundationTables {
  tenant: TenantTable;
  external_system: ExternalSystemTable;
  api_key: ApiKeyTable;
  admin_token: AdminTokenTable;
}
