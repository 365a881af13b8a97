import type { ColumnType, Generated } from 'kysely';

/** An operator action that may be undone within its window (0092). */
export interface UndoableActionTable {
  id: Generated<string>;
  tenant_id: string;
  kind: string;
  actor: string;
  created_at: Generated<Date>;
  release_at: Date;
  settled: 'released' | 'undone' | null;
  settled_at: Date | null;
  before: ColumnType<unknown, string, string>;
  after: ColumnType<unknown, string, string>;
}

/** A partner event held back while its action may still be undone (0092). */
export interface HeldEventTable {
  id: string;
  action_id: string;
  write_seq: ColumnType<number, never, never>;
  tenant_id: string;
  external_system_id: string;
  event_type: string;
  alert_id: string;
  service_order_id: string | null;
  sequence: number;
  body: string;
  occurred_at: Date;
}

export interface UndoTables {
  undoable_action: UndoableActionTable;
  held_event: HeldEventTable;
}
