import type { ColumnType, Generated } from 'kysely';

/** Why the last poll of a partner failed (partner_poll_state.last_error_kind). */
export type PollErrorKind =
  | 'http-status'
  | 'timeout'
  | 'network'
  | 'tls'
  | 'blocked-address'
  | 'too-large'
  | 'invalid-json'
  | 'invalid-envelope'
  | 'redirect'
  | 'configuration'
  | 'intake'
  | 'cursor-stalled';

type Counter = ColumnType<number, number | undefined, number>;

export interface PartnerPollStateTable {
  external_system_id: string;
  cursor: Date | null;
  cursor_updated_at: Date | null;
  last_attempt_at: Date | null;
  last_success_at: Date | null;
  last_caught_up_at: Date | null;
  last_error_at: Date | null;
  last_error_kind: PollErrorKind | null;
  last_error: string | null;
  consecutive_failures: Counter;
  next_poll_at: Date | null;
  poll_requested_at: Date | null;
  last_batch_at: Date | null;
  last_batch_items: number | null;
  last_batch_accepted: number | null;
  last_batch_rejected: number | null;
  items_accepted: Counter;
  items_rejected: Counter;
  polls_succeeded: Counter;
  polls_failed: Counter;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** One reason intake gave for refusing an item. */
export interface RejectionReason {
  pointer: string;
  message: string;
}

export interface RejectedInboundItemTable {
  id: Generated<string>;
  external_system_id: string;
  tenant_id: string;
  protocol_number: string | null;
  item: ColumnType<unknown, string, string>;
  item_hash: Buffer;
  problem_code: string;
  reasons: ColumnType<RejectionReason[], string, string>;
  since: Date | null;
  first_seen_at: Generated<Date>;
  last_seen_at: Generated<Date>;
  times_seen: Generated<number>;
  resolved_at: Date | null;
  /** Set when an operator dismissed it (0024). */
  dismissed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  dismissed_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** The operator's reason for dismissing it (0092). */
  dismiss_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** The fields an operator corrected before accepting it (0092). */
  corrections: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** Who accepted it, corrected (0092). */
  accepted_by: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface PollingTables {
  partner_poll_state: PartnerPollStateTable;
  rejected_inbound_item: RejectedInboundItemTable;
}
