import type { ColumnType, Generated } from 'kysely';

export type AttachmentContentType = 'image/jpeg' | 'image/png' | 'image/webp';

export interface IdempotencyKeyTable {
  external_system_id: string;
  key: string;
  request_hash: Buffer;
  alert_id: string;
  response_status: 200 | 201;
  response_body: string;
  created_at: Generated<Date>;
}

export interface AlertAttachmentTable {
  id: string;
  seq: ColumnType<number, never, never>;
  alert_id: string;
  tenant_id: string;
  source_kind: 'url' | 'inline';
  source_url: string | null;
  source_hash: Buffer;
  filename: string | null;
  content_type: AttachmentContentType;
  success: boolean;
  blob_path: string | null;
  size_bytes: number | null;
  content_sha256: Buffer | null;
  error_code: string | null;
  error_params: ColumnType<Record<string, string | number> | null, string | null, string | null>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface AttachmentFailureTable {
  id: Generated<string>;
  tenant_id: string;
  external_system_id: string;
  alert_id: string;
  attachment_id: string;
  protocol_number: string;
  url: string;
  filename: string | null;
  content_type: string;
  error_code: string;
  detail: string;
  attempts: number;
  created_at: Generated<Date>;
  /** Set when an operator dismissed it (0024). */
  dismissed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  dismissed_by: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface IntakeTables {
  idempotency_key: IdempotencyKeyTable;
  alert_attachment: AlertAttachmentTable;
  attachment_failure: AttachmentFailureTable;
}
