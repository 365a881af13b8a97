import type { ColumnType, Generated } from 'kysely';

export type DeliveryStatus = 'pending' | 'failed' | 'succeeded' | 'dead';

// The outbox table itself is declared with the domain (tables/domain.ts); 0006_events
// adds the exact envelope bytes and the polling position to it.
declare module './domain.js' {
  interface EventTable {
    /** The envelope as delivered, byte for byte (the webhook body; its signature covers it). */
    body: ColumnType<string | null, string | null | undefined, string | null>;
    /** Position in the partner's polling stream; null until a poll first exposes the event. */
    published_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
    /** Write order, also within one transaction (whose events share created_at). */
    write_seq: ColumnType<number, never, never>;
  }
}

export interface EventCursorTable {
  external_system_id: string;
  confirmed_at: Date | null;
  last_published_at: Date | null;
  last_poll_at: Date | null;
  last_has_more: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface WebhookDeliveryTable {
  id: Generated<string>;
  position: ColumnType<number, never, never>;
  event_id: string;
  external_system_id: string;
  ordering_key: string;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  lease_until: Date | null;
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

export interface EventsTables {
  event_cursor: EventCursorTable;
  webhook_delivery: WebhookDeliveryTable;
  webhook_attempt: WebhookAttemptTable;
}
