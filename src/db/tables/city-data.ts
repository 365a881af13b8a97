import type { ColumnType, Generated } from 'kysely';

export type CityResource = 'pole' | 'service_order';

/**
 * Maintained by triggers (0004_city_data.sql, striped by 0009_count_slots.sql):
 * read-only for the application. A tenant's count is the sum of its slots.
 */
export interface CityDataCountTable {
  tenant_id: ColumnType<string, never, never>;
  resource: ColumnType<CityResource, never, never>;
  /** pg_backend_pid() % 16 of the writers; a slot's row_count may be negative. */
  slot: ColumnType<number, never, never>;
  row_count: ColumnType<number, never, never>;
  deleted_count: ColumnType<number, never, never>;
}

export interface CityReadWalkTable {
  id: Generated<string>;
  external_system_id: string;
  tenant_id: string;
  resource: CityResource;
  updated_since: Date;
  page_size: number;
  started_at: Generated<Date>;
  used_at: Generated<Date>;
}

export interface CityReadCheckpointTable {
  walk_id: string;
  page: number;
  last_updated_at: ColumnType<Date | null, string | null, string | null>;
  last_id: string | null;
  /** Items of the filter up to this checkpoint, exact while rank_below rows stay below rank_horizon (0010). */
  rank: number | null;
  rank_horizon: ColumnType<Date | null, string | null, string | null>;
  rank_below: number | null;
  /** The horizon the page was read at: its walk's next page reads at no lower one on the primary (0110). */
  read_horizon: ColumnType<Date | null, string | null, string | null>;
}

/** Cached `total` of an updatedSince filter (0010_city_read_positions.sql). */
export interface CityReadTotalTable {
  tenant_id: string;
  resource: CityResource;
  updated_since: ColumnType<Date, string, string>;
  matching_below: number;
  horizon: ColumnType<Date, string, string>;
  below: number;
  used_at: Generated<Date>;
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
  city_read_total: CityReadTotalTable;
  telemetry_key: TelemetryKeyTable;
}
