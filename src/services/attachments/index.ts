/**
 * Attachments of an intake: validated, fetched from URLs or decoded, stored as blobs; the failed-URL queue.
 *
 * This file is the capability's only door: code outside src/services/attachments/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { decodeStrictBase64, EXTENSIONS, MAX_ATTACHMENT_BYTES, sniffImageType } from './content.js';
export { attachmentFailures, type AttachmentFailureView } from './failures.js';
export { attachmentErrorMessage } from './messages.js';
export { attachmentMemory } from './memory.js';
export { prepareAttachments, type AttachmentRowInsert, type PreparedAttachment, type PreparedAttachments } from './prepare.js';
export { attachmentContent, dismissAttachmentFailure, retryAttachmentFailure, type AttachmentContent } from './review.js';
