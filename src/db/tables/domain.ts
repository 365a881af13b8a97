import type { ColumnType, Generated } from 'kysely';

export type Priority = 'Low' | 'Medium' | 'High' | 'Critical';
export type AlertStatus = 'Pending' | 'Linked' | 'Resolved' | 'Cancelled';
export type ServiceOrderStatus = 'OPEN' | 'ASSIGNED' | 'IN_PROGRESS' | 'COMPLETED' | 'CANCELLED';
export type LocationSource = 'payload' | 'poles' | 'geocoder' | 'operator';

/** Set by the database (trigger or default): never written by the application. */
type DbStamp = ColumnType<Date, never, never>;
type Created = Generated<Date>;

export interface ReasonTable {
  tenant_id: string;
  code: string;
  name_pt: string;
  name_en: string;
  priority: Priority;
  sla_hours: number;
  created_at: Created;
  updated_at: Generated<Date>;
}

export interface ReasonMappingTable {
  external_system_id: string;
  partner_code: string;
  tenant_id: string;
  reason_code: string;
  created_at: Created;
  updated_at: Generated<Date>;
}

export interface TeamTable {
  id: Generated<string>;
  tenant_id: string;
  name: string;
  created_at: Created;
  updated_at: Generated<Date>;
}

export interface PoleTable {
  id: Generated<string>;
  tenant_id: string;
  code: string;
  address: Generated<string>;
  neighborhood: Generated<string>;
  latitude: number;
  longitude: number;
  active: Generated<boolean>;
  /** The electrical circuit feeding the pole (0090), from the import. */
  circuit: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Created;
  updated_at: DbStamp;
}

export interface TelegestorTable {
  id: Generated<string>;
  tenant_id: string;
  identifier: string;
  pole_id: string | null;
  online: boolean | null;
  relay_on: boolean | null;
  last_communication_at: Date | null;
  /** Since when (report time) the device reports itself offline; null while online (0015). */
  offline_since: ColumnType<Date | null, never, never>;
  /** Since when (report time) the device reports its relay off; null while on or unknown (0015). */
  relay_off_since: ColumnType<Date | null, never, never>;
  created_at: Created;
  updated_at: DbStamp;
}

/** A change of a telegestor's reported state, at the report's time (0089). */
export interface TelegestorStateChangeTable {
  id: Generated<string>;
  tenant_id: string;
  telegestor_id: string;
  online: boolean;
  relay_on: boolean | null;
  reported_at: Date;
}

export interface TenantCounterTable {
  tenant_id: string;
  name: string;
  year: number;
  value: Generated<number>;
}

export interface ServiceOrderTable {
  id: Generated<string>;
  tenant_id: string;
  number: string;
  status: ColumnType<ServiceOrderStatus, ServiceOrderStatus | undefined, ServiceOrderStatus>;
  priority: Priority;
  reason_code: string;
  address: string;
  neighborhood: string | null;
  latitude: number | null;
  longitude: number | null;
  pole_id: string | null;
  team_id: string | null;
  sla_due_at: Date;
  opened_at: Generated<Date>;
  closed_at: Date | null;
  event_seq: Generated<number>;
  created_at: Created;
  updated_at: DbStamp;
}

export interface AlertTable {
  id: Generated<string>;
  tenant_id: string;
  external_system_id: string;
  protocol_number: string;
  alert_number: number;
  status: AlertStatus;
  asset_type: Generated<'POLE'>;
  requested_at: Date;
  requester_name: string;
  requester_phone: string | null;
  lamp_type: string | null;
  partner_reason_code: string | null;
  reason_code: string;
  priority: Priority;
  sla_due_at: Date;
  address_street: string;
  address_number: string | null;
  address_neighborhood: string | null;
  address_reference: string | null;
  latitude: number | null;
  longitude: number | null;
  location_source: LocationSource | null;
  description: string;
  additional_notes: string | null;
  service_order_id: string | null;
  cancel_reason: string | null;
  event_seq: Generated<number>;
  created_at: Created;
  updated_at: DbStamp;
}

export interface StatusHistoryTable {
  id: Generated<number>;
  from_status: string | null;
  to_status: string;
  actor: string;
  note: string | null;
  at: Generated<Date>;
}

export interface AlertStatusHistoryTable extends StatusHistoryTable {
  alert_id: string;
}

export interface ServiceOrderStatusHistoryTable extends StatusHistoryTable {
  service_order_id: string;
}

export interface EventTable {
  id: Generated<string>;
  tenant_id: string;
  external_system_id: string;
  event_type: string;
  alert_id: string;
  service_order_id: string | null;
  sequence: number;
  payload: ColumnType<Record<string, unknown>, string, string>;
  occurred_at: Generated<Date>;
  created_at: Created;
}

export interface DomainTables {
  reason: ReasonTable;
  reason_mapping: ReasonMappingTable;
  team: TeamTable;
  pole: PoleTable;
  telegestor: TelegestorTable;
  telegestor_state_change: TelegestorStateChangeTable;
  tenant_counter: TenantCounterTable;
  service_order: ServiceOrderTable;
  alert: AlertTable;
  alert_status_history: AlertStatusHistoryTable;
  service_order_status_history: ServiceOrderStatusHistoryTable;
  event: EventTable;
}
