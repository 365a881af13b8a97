/**
 * Completing an order in the street: the city's list of materials, after-repair photos
 * and the completion record (note, materials, photos) kept beside the order.
 *
 * This file is the capability's only door: code outside src/services/completion/
 * imports from here, never from the files behind it.
 */
export { createMaterial, listMaterials, updateMaterial, type MaterialInput } from './materials.js';
export { MAX_PHOTOS_PER_ORDER, orderPhotoContent, uploadOrderPhoto, type OrderRef, type PhotoContent } from './photos.js';
export { alreadyCompleted, orderCompletion, recordCompletion, type CompletionInput } from './record.js';
