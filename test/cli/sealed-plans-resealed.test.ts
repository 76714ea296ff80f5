/**
 * Sealed plans (docs/safety.md): each tamper of a saved plan (test/support/sealed-plans.ts) with
 * its id recomputed is refused before any write, by apply and by rehearse: the re-plan from the
 * verified spec and the cluster disagrees (exit 3).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cli } from '../support/cli.ts';
import { TAMPERS, resealed, sealedRepo } from '../support/sealed-plans.ts';

const s = suite('sealed plans: tampered, id recomputed');
const { repo, reviewedPlan, applyAgainstSim, write } = sealedRepo();

for (const [what, tamper] of TAMPERS) {
  s(`tampered (${what}), id recomputed: refused before any write`, async () => {
    const plan = await reviewedPlan();
    tamper(plan);
    write('resealed.json', resealed(plan));
    const r = await applyAgainstSim('resealed.json');
    assert.is(r.code, 3, r.err);
    assert.match(r.err, /stale plan: (plan \w+ is not what the spec and the cluster give now|the spec changed since the plan was made)/);
    assert.not.ok(r.wrote);
    const rehearsal = await cli(['rehearse', 'resealed.json'], { cwd: repo });
    assert.is(rehearsal.code, 3, `rehearse: ${rehearsal.err}`);
  });
}

s.run();
