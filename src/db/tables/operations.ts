import type { ColumnType, Generated } from 'kysely';

export type AuditEntityType = 'tenant' | 'team' | 'alert' | 'service_order' | 'partner' | 'admin_token' | 'operator';

type Json = ColumnType<unknown, string | null, string | null>;

export interface AuditLogTable {
  id: Generated<number>;
  at: Generated<Date>;
  tenant_id: string | null;
  actor: string;
  admin_token_id: string | null;
  action: string;
  entity_type: AuditEntityType;
  entity_id: string;
  before: Json;
  after: Json;
  note: string | null;
  request_id: string | null;
  /** The operator behind the action (0021): a session, an operator's token, `lumen --as`. */
  operator_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface OperationsTables {
  audit_log: AuditLogTable;
}
