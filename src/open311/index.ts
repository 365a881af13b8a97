/**
 * Open311 GeoReport v2 (openapi/open311.yaml): the city's reasons as services, requests
 * through the partner API's intake, and their status, notes and deadlines.
 *
 * This file is the capability's only door: code outside src/open311/ imports from here,
 * never from the files behind it (test/unit/boundaries.test.ts).
 */
export type { Open311Caller } from './caller.js';
export { discovery, listServices, serviceDefinition } from './catalogue.js';
export { MEDIA_PATH, mediaUrl, open311Media } from './media.js';
export { getOpen311Request, listOpen311Requests, tokenAnswer, type MediaLink, type RequestQuery } from './requests.js';
export { submitOpen311Request, type Open311Fields } from './submit.js';
export { toXml } from './xml.js';
