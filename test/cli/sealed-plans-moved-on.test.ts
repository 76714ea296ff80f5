/**
 * Sealed plans (docs/safety.md): once the cluster has moved on (an apply resumes), each tamper of
 * a saved plan (test/support/sealed-plans.ts) with its id recomputed is still refused before any
 * write, but for the two not compared then (MOVED_EXEMPT, with why).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClusterBuilder, nodes } from '../support/cluster.ts';
import { MOVED_EXEMPT, TAMPERS, resealed, sealedRepo } from '../support/sealed-plans.ts';

const s = suite('sealed plans: tampered, id recomputed, cluster moved on');
const { repo, reviewedPlan, applyAgainstSim, write } = sealedRepo();

const later = nodes('w', 6);
later[1].cordoned = true;
later[5].current = true;
writeFileSync(join(repo, 'moved-on.yaml'), new ClusterBuilder().bootcPool('worker', later).yaml());

for (const [what, tamper] of TAMPERS.filter(([w]) => !MOVED_EXEMPT.includes(w))) {
  s(`tampered (${what}), id recomputed, cluster moved on: refused before any write`, async () => {
    const plan = await reviewedPlan();
    tamper(plan);
    write('resealed-moved.json', resealed(plan));
    const r = await applyAgainstSim('resealed-moved.json', 'moved-on.yaml');
    assert.ok(r.code === 3 || r.code === 1, `exit ${r.code}: ${r.err}`);
    assert.not.ok(r.wrote);
  });
}

s.run();
