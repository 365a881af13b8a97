import type { ColumnType, Generated } from 'kysely';

export type DeliveryStatus = 'pending' | 'failed' | 'succeeded' | 'dead';

// The outbox table itself is declared with the domain (tables/domain.ts); 0006_events
// adds the exact envelope bytes and the write order to it, 0011 the writer's id.
declare module './domain.js' {
  interface EventTable {
    /** The envelope as delivered, byte for byte (the webhook body; its signature covers it). */
    body: ColumnType<string | null, string | null | undefined, string | null>;
    /** Write order, also within one transaction (whose events share created_at). */
    write_seq: ColumnType<number, never, never>;
    /** Top-level transaction id of the writer (xid8 as text): how a late commit is found (0011). */
    write_xid: ColumnType<string, never, never>;
  }
}

/** An event's position in its partner's polling stream (0011; given by a poll, never changed). */
export interface EventPositionTable {
  external_system_id: string;
  published_at: Date;
  /** The event's write_seq. */
  write_seq: number;
}

export interface EventCursorTable {
  external_system_id: string;
  confirmed_at: Date | null;
  last_published_at: Date | null;
  /** Greatest position returned; `since` confirms no further (0011). */
  last_returned_at: Date | null;
  /** Greatest write_seq positioned; the next positioning starts after it (0011). */
  positioned_seq: number | null;
  /** pg_snapshot as text: events of writers it does not see may still lack a position (0011). */
  positioned_snapshot: string | null;
  last_poll_at: Date | null;
  last_has_more: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface WebhookDeliveryTable {
  id: Generated<string>;
  position: ColumnType<number, never, never>;
  /** The event delivered; null for a test event's delivery (exactly one of the two is set, 0031). */
  event_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The test event delivered (0031); null for an event's delivery. */
  test_event_id: ColumnType<string | null, string | null | undefined, string | null>;
  external_system_id: string;
  ordering_key: string;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  lease_until: Date | null;
  /** Waits behind an earlier delivery of the same ordering key that failed and waits for its retry (0012; a hint for the claim). */
  blocked: Generated<boolean>;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  redelivery_of: string | null;
  requested_by: Generated<string>;
  created_at: Generated<Date>;
  finished_at: Date | null;
}

export interface WebhookAttemptTable {
  id: Generated<number>;
  delivery_id: string;
  attempt: number;
  started_at: Date;
  latency_ms: number;
  succeeded: boolean;
  status_code: number | null;
  error: string | null;
  next_attempt_at: Date | null;
}

/** A `Test.Ping` an operator sent to a partner's webhook (0031); never in events polling. */
export interface TestEventTable {
  id: string;
  tenant_id: string;
  external_system_id: string;
  /** The envelope as delivered, byte for byte. */
  body: string;
  requested_by: string;
  created_at: Generated<Date>;
}

/** One of a partner's webhook send permits, shared by every instance (0098). */
export interface WebhookSendPermitTable {
  external_system_id: string;
  slot: number;
  /** The instance holding it (its pump's id), or null when free. */
  holder: string | null;
  held_until: Date | null;
}

export interface EventsTables {
  test_event: TestEventTable;
  event_cursor: EventCursorTable;
  event_position: EventPositionTable;
  webhook_delivery: WebhookDeliveryTable;
  webhook_attempt: WebhookAttemptTable;
  webhook_send_permit: WebhookSendPermitTable;
}
