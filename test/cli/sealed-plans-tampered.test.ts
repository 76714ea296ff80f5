/**
 * Sealed plans (docs/safety.md): each tamper of a saved plan (test/support/sealed-plans.ts), the
 * id left as it was, is refused by apply (exit 3 "plan file was modified", nothing written) and by
 * show, with the same message and nothing rendered.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cli } from '../support/cli.ts';
import { TAMPERS, sealedRepo } from '../support/sealed-plans.ts';

const s = suite('sealed plans: tampered, id left as it was');
const { repo, reviewedPlan, applyAgainstSim, write } = sealedRepo();

/** The diagnostic lines of a stderr. */
const errorLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => /^(error| {2})/.test(l))
    .join('\n');

for (const [what, tamper] of TAMPERS) {
  s(`tampered (${what}), id left as it was: exit 3 "plan file was modified", nothing written`, async () => {
    const plan = await reviewedPlan();
    tamper(plan);
    write('tampered.json', plan);
    const r = await applyAgainstSim('tampered.json');
    assert.is(r.code, 3, r.err);
    assert.match(r.err, /the plan file was modified after it was made/);
    assert.not.ok(r.wrote);
    // show verifies as apply does: nothing rendered under the id the file claims, the same message.
    for (const format of ['text', 'json']) {
      const shown = await cli(['show', 'tampered.json', '-o', format], { cwd: repo });
      assert.is(shown.code, 3, `show -o ${format}: ${shown.err}`);
      assert.is(shown.out, '', 'nothing is rendered');
      assert.is(errorLines(shown.err), errorLines(r.err));
    }
  });
}

s.run();
