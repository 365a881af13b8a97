/**
 * The demo city seeded on a first start of the embedded database.
 *
 * This file is the capability's only door: code outside src/services/demo/ imports
 * from here, never from the files behind it (test/unit/boundaries.test.ts).
 */
export { DEMO_OPERATOR_EMAIL, isEmpty, seedDemo, seedDemoOperator } from './seed.js';
