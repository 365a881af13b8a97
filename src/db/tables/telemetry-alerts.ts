import type { ColumnType, Generated } from 'kysely';

/** The open TELEMETRY_LAMP_OUT alert of a pole (migration 0015). */
export interface TelemetryLampOutTable {
  pole_id: string;
  tenant_id: string;
  alert_id: string;
  out_since: Date;
  opened_at: Generated<Date>;
  recovered_noted_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface TelemetryAlertsTables {
  telemetry_lamp_out: TelemetryLampOutTable;
}
