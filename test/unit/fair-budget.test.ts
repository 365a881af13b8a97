/**
 * FairBudget (src/lib/budget.ts): the places of telemetry batches. Waiting requests
 * are served city by city in turn; a city alone uses every place.
 */
import { describe, expect, it } from 'vitest';
import { FairBudget, type Lease } from '../../src/lib/budget.js';

/** Requests of `key` that record the order in which they were granted. */
function requester(budget: FairBudget, granted: string[]) {
  return (key: string, name: string, signal?: AbortSignal): Promise<Lease> =>
    budget.acquire(key, 1, signal).then((lease) => {
      granted.push(name);
      return lease;
    });
}

describe('FairBudget', () => {
  it('serves the waiting cities in turn: a flood from one city delays another by one of its requests, not by all of them', async () => {
    const budget = new FairBudget(1);
    const granted: string[] = [];
    const ask = requester(budget, granted);
    const first = await ask('manaus', 'manaus-1');
    // Manaus queues four more, then Curitiba one: in arrival order Curitiba would be last.
    const manaus = ['manaus-2', 'manaus-3', 'manaus-4', 'manaus-5'].map((n) => ask('manaus', n));
    const curitiba = ask('curitiba', 'curitiba-1');
    expect(budget.waiting).toBe(5);
    let held = first;
    for (const next of [manaus[0]!, curitiba, manaus[1]!, manaus[2]!, manaus[3]!]) {
      held.release();
      held = await next;
      expect(budget.inUse).toBe(1);
    }
    held.release();
    expect(granted).toEqual(['manaus-1', 'manaus-2', 'curitiba-1', 'manaus-3', 'manaus-4', 'manaus-5']);
    expect(budget.inUse).toBe(0);
    expect(budget.waiting).toBe(0);
  });

  it('gives a city alone every place, at once', async () => {
    const budget = new FairBudget(3);
    const granted: string[] = [];
    const ask = requester(budget, granted);
    const leases = await Promise.all([ask('manaus', 'a'), ask('manaus', 'b'), ask('manaus', 'c')]);
    expect(budget.inUse).toBe(3);
    const fourth = ask('manaus', 'd');
    expect(budget.waiting).toBe(1);
    leases[0]!.release();
    (await fourth).release();
    for (const l of leases) l.release();
    expect(granted).toEqual(['a', 'b', 'c', 'd']);
    expect(budget.inUse).toBe(0);
  });

  it('takes an aborted request out of its city’s turn, and the next one moves up', async () => {
    const budget = new FairBudget(1);
    const granted: string[] = [];
    const ask = requester(budget, granted);
    const held = await ask('manaus', 'manaus-1');
    const stop = new AbortController();
    const aborted = ask('belem', 'belem-1', stop.signal);
    const curitiba = ask('curitiba', 'curitiba-1');
    stop.abort(new Error('the client went away'));
    await expect(aborted).rejects.toThrow('the client went away');
    expect(budget.waiting).toBe(1);
    held.release();
    (await curitiba).release();
    expect(granted).toEqual(['manaus-1', 'curitiba-1']);
  });
});
