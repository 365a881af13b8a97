import type { ColumnType, Generated } from 'kysely';

export type CityResource = 'pole' | 'service_order';

/** Maintained by triggers (0004_city_data.sql): read-only for the application. */
export interface CityDataCountTable {
  tenant_id: ColumnType<string, never, never>;
  resource: ColumnType<CityResource, never, never>;
  row_count: ColumnType<number, never, never>;
  deleted_count: ColumnType<number, never, never>;
}

export interface CityReadWalkTable {
  id: Generated<string>;
  external_system_id: string;
  resource: CityResource;
  updated_since: Date;
  page_size: number;
  total_count: number | null;
  total_rows: number | null;
  total_deleted: number | null;
  total_horizon: ColumnType<Date | null, string | null, string | null>;
  started_at: Generated<Date>;
  used_at: Generated<Date>;
}

export interface CityReadCheckpointTable {
  walk_id: string;
  page: number;
  last_updated_at: ColumnType<Date | null, string | null, string | null>;
  last_id: string | null;
}

export interface TelemetryKeyTable {
  id: Generated<string>;
  tenant_id: string;
  name: string;
  key_id: string;
  key_prefix: string;
  key_hash: Buffer;
  created_at: Generated<Date>;
  revoked_at: Date | null;
}

export interface CityDataTables {
  city_data_count: CityDataCountTable;
  city_read_walk: CityReadWalkTable;
  city_read_checkpoint: CityReadCheckpointTable;
  telemetry_key: TelemetryKeyTable;
}
