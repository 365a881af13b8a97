import type { Generated } from 'kysely';
import type { AttachmentContentType } from './intake.js';

export type MaterialKind = 'lamp' | 'driver' | 'reactor' | 'photocell' | 'other';

export interface CompletionMaterialTable {
  id: Generated<string>;
  tenant_id: string;
  kind: MaterialKind;
  name: string;
  wattage: number | null;
  active: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ServiceOrderCompletionTable {
  service_order_id: string;
  tenant_id: string;
  completion_id: string;
  note: string | null;
  completed_by: string;
  completed_at: Generated<Date>;
}

export interface ServiceOrderCompletionMaterialTable {
  service_order_id: string;
  material_id: string;
  quantity: number;
}

export interface ServiceOrderPhotoTable {
  id: string;
  tenant_id: string;
  service_order_id: string;
  content_type: AttachmentContentType;
  blob_path: string;
  size_bytes: number;
  content_sha256: Buffer;
  uploaded_by: string;
  uploaded_at: Generated<Date>;
}

export interface CompletionTables {
  completion_material: CompletionMaterialTable;
  service_order_completion: ServiceOrderCompletionTable;
  service_order_completion_material: ServiceOrderCompletionMaterialTable;
  service_order_photo: ServiceOrderPhotoTable;
}
