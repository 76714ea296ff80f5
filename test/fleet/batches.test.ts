/**
 * Fleet batches (docs/fleets.md "Batches", docs/design.md §10): canaries first, each alone, in the order listed; then
 * the others that roll, ordered by labels then name, in batches of maxConcurrency ("N%" of
 * them, floor, minimum 1); clusters with nothing to change or an error in no batch.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { planFleetBatches, resolveMaxConcurrency, parseMaxConcurrency, labelKey, fleetEstimateSeconds } from '../../src/fleet/batches.ts';
import { seeded } from '../support/seeds.ts';

const s = suite('fleet batches');
const c = (name: string, labels: Record<string, string> = {}, rolls = true) => ({ name, labels, rolls });

s('canaries first, each a batch of its own in the order listed; then label order, then name', () => {
  const clusters = [
    c('z-1', { region: 'us' }),
    c('a-1', { region: 'us' }),
    c('m-1', { region: 'eu' }),
    c('k', { region: 'eu', tier: 'prod' }),
    c('can-2'),
    c('can-1'),
  ];
  const batches = planFleetBatches(['can-2', 'can-1'], clusters, 2);
  assert.equal(batches, [
    { kind: 'canary', clusters: ['can-2'] },
    { kind: 'canary', clusters: ['can-1'] },
    { kind: 'batch', clusters: ['m-1', 'k'] }, // "region=eu" < "region=eu,tier=prod"
    { kind: 'batch', clusters: ['a-1', 'z-1'] },
  ]);
});

s('clusters that do not roll sit in no batch, canaries too', () => {
  const batches = planFleetBatches(['can'], [c('can', {}, false), c('a'), c('b', {}, false), c('c')], 5);
  assert.equal(batches, [{ kind: 'batch', clusters: ['a', 'c'] }]);
});

s('maxConcurrency: a count as it is; "N%" of the non-canary clusters, floor, minimum 1', () => {
  const pct = (v: number) => ({ kind: 'percent' as const, value: v });
  assert.is(resolveMaxConcurrency({ kind: 'count', value: 3 }, 1).resolved, 3);
  assert.is(resolveMaxConcurrency(pct(25), 10).resolved, 2);
  assert.is(resolveMaxConcurrency(pct(25), 3).resolved, 1);
  assert.is(resolveMaxConcurrency(pct(100), 7).resolved, 7);
  assert.is(resolveMaxConcurrency(pct(50), 0).resolved, 1);
  assert.equal(resolveMaxConcurrency(pct(10), 500), { value: '10%', resolved: 50, rule: 'floor(percent x non-canary clusters), minimum 1' });
  assert.equal(parseMaxConcurrency('010%'), { ok: true, value: pct(10) });
});

s('labelKey sorts keys and compares as plain strings, whatever the locale', () => {
  assert.is(labelKey({ tier: 'prod', Region: 'eu', region: 'us' }), 'Region=eu,region=us,tier=prod');
});

s('fleet estimate: batches one after another, soak between them (not after the last)', () => {
  assert.is(fleetEstimateSeconds([100, 300, 50], 60), 570);
  assert.is(fleetEstimateSeconds([], 60), 0);
});

s('property: every rolling cluster in exactly one batch, none larger than maxConcurrency, canaries alone and first', () => {
  const arb = fc.record({
    n: fc.integer({ min: 0, max: 40 }),
    max: fc.integer({ min: 1, max: 9 }),
    canaries: fc.integer({ min: 0, max: 5 }),
    rolls: fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
    region: fc.array(fc.constantFrom('eu', 'us', 'ap'), { minLength: 40, maxLength: 40 }),
  });
  fc.assert(
    fc.property(arb, ({ n, max, canaries, rolls, region }) => {
      const clusters = Array.from({ length: n }, (_, i) => c(`c${i}`, { region: region[i] }, rolls[i]));
      const can = clusters.slice(0, Math.min(canaries, n)).map((x) => x.name);
      const batches = planFleetBatches(can, clusters, max);
      const placed = batches.flatMap((b) => b.clusters);
      assert.equal(
        [...placed].sort(),
        clusters
          .filter((x) => x.rolls)
          .map((x) => x.name)
          .sort(),
      );
      assert.is(new Set(placed).size, placed.length);
      const firstBatch = batches.findIndex((b) => b.kind === 'batch');
      for (const [i, b] of batches.entries()) {
        if (b.kind === 'canary') {
          assert.is(b.clusters.length, 1);
          assert.ok(firstBatch < 0 || i < firstBatch);
        } else assert.ok(b.clusters.length <= max);
      }
    }),
    seeded(3102, 100),
  );
});

s.run();
