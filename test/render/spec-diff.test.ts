/**
 * The title over the spec diff (src/render/spec-diff.ts): none without `plan --base`, unchanged,
 * or the added and removed lines against the base commit (shortened to 12 characters).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { specChangesTitle } from '../../src/render/spec-diff.ts';
import type { SpecChanges } from '../../src/plan/specdiff.ts';
import { demoPlan } from '../support/render.ts';

const plan = demoPlan();
const title = (specChanges: SpecChanges | null) => specChangesTitle({ ...plan, specChanges });
const changes: SpecChanges = {
  base: 'origin/main',
  baseCommit: '0123456789abcdef0123',
  path: 'rollout.yaml',
  unified: '--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n',
  added: 1,
  removed: 1,
};

test('no spec diff asked for: no title', () => {
  assert.is(title(null), null);
});

test('a changed spec: added and removed lines since the base, its commit shortened', () => {
  assert.is(title(changes), 'Spec changes since origin/main (0123456789ab): 1 added, 1 removed lines in rollout.yaml.');
});

test('an unchanged spec says so', () => {
  assert.is(title({ ...changes, unified: '', added: 0, removed: 0 }), 'Spec unchanged since origin/main (0123456789ab).');
});

test.run();
