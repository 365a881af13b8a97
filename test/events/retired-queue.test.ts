import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Jobs } from '../../src/jobs/index.js';
import { RETIRED_QUEUES } from '../../src/jobs/registry.js';
import { createLogger } from '../../src/lib/logger.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

describe('queues of earlier releases', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('are deleted, with the jobs left in them, when the queues are created at start', async () => {
    const boss = new PgBoss({ connectionString: db.url, schema: 'pgboss', max: 1, supervise: false, schedule: false });
    await boss.start();
    for (const name of RETIRED_QUEUES) {
      await boss.createQueue(name);
      await boss.send(name, { v: 1, deliveryId: '00000000-0000-0000-0000-000000000000' });
      expect(await boss.getQueue(name)).not.toBeNull();
    }

    const jobs = await Jobs.start({ url: db.url, log: createLogger('silent'), work: false });
    await jobs.stop();

    for (const name of RETIRED_QUEUES) expect(await boss.getQueue(name)).toBeNull();
    await boss.stop({ graceful: false, close: true });
  });
});
