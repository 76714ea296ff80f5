import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { budgetNeed, disruptionsAllowed, evictionNeed, neverAllows, scaledValue } from '../../src/domain/disruption-budget.ts';

const s = suite('PodDisruptionBudget arithmetic (disruption controller, Eviction API)');

const status = (currentHealthy: number, desiredHealthy: number) => ({
  observedGeneration: 1,
  currentHealthy,
  desiredHealthy,
  disruptionsAllowed: 0,
  expectedPods: 3,
});

s('percentages scale as intstr.GetScaledValueFromIntOrPercent, rounded as the caller asks', () => {
  assert.is(scaledValue('34%', 3, true), 2);
  assert.is(scaledValue('34%', 3, false), 1);
  assert.is(scaledValue(2, 10, true), 2);
  assert.is(scaledValue('0%', 5, true), 0);
  assert.is(scaledValue('half', 5, true), null);
  assert.is(scaledValue(-1, 5, true), null);
});

s('desired healthy: maxUnavailable and a minAvailable percentage against the controller scale, a count minAvailable as is', () => {
  // maxUnavailable 1 of a Deployment of 3: 2 must stay healthy.
  assert.equal(budgetNeed({ minAvailable: null, maxUnavailable: 1 }, 3, 3), { expectedPods: 3, desiredHealthy: 2 });
  // maxUnavailable "50%" of 3 rounds the unavailable count up (2), so 1 must stay.
  assert.equal(budgetNeed({ minAvailable: null, maxUnavailable: '50%' }, 3, 3), { expectedPods: 3, desiredHealthy: 1 });
  // minAvailable "50%" of 3 rounds the available count up (2).
  assert.equal(budgetNeed({ minAvailable: '50%', maxUnavailable: null }, 3, 3), { expectedPods: 3, desiredHealthy: 2 });
  // A count minAvailable counts the pods the selector matches, not the scale.
  assert.equal(budgetNeed({ minAvailable: 2, maxUnavailable: null }, 4, 3), { expectedPods: 4, desiredHealthy: 2 });
  assert.is(budgetNeed({ minAvailable: 'x', maxUnavailable: null }, 3, 3), null);
});

s('disruptions allowed are the healthy pods above the desired count, 0 for a budget that matches nothing', () => {
  assert.is(disruptionsAllowed(3, 2, 3), 1);
  assert.is(disruptionsAllowed(2, 2, 3), 0);
  assert.is(disruptionsAllowed(1, 2, 3), 0);
  assert.is(disruptionsAllowed(0, 0, 0), 0);
});

s('what an eviction asks of the budget: Pending, terminal and deleting pods are free; unready ones by the policy', () => {
  const b = { unhealthyPodEvictionPolicy: null, status: status(3, 2) };
  assert.is(evictionNeed({ phase: 'Running', ready: true, deleting: false }, b), 'budget');
  assert.is(evictionNeed({ phase: 'Pending', ready: false, deleting: false }, b), 'free');
  assert.is(evictionNeed({ phase: 'Succeeded', ready: false, deleting: false }, b), 'free');
  assert.is(evictionNeed({ phase: 'Running', ready: true, deleting: true }, b), 'free');
  // IfHealthyBudget (the default): an unready pod goes free while the budget has its desired healthy pods.
  assert.is(evictionNeed({ phase: 'Running', ready: false, deleting: false }, b), 'free');
  assert.is(evictionNeed({ phase: 'Running', ready: false, deleting: false }, { unhealthyPodEvictionPolicy: null, status: status(1, 2) }), 'budget');
  assert.is(evictionNeed({ phase: 'Running', ready: false, deleting: false }, { unhealthyPodEvictionPolicy: 'AlwaysAllow', status: status(1, 2) }), 'free');
  // desiredHealthy 0 (nothing is protected): the IfHealthyBudget rule needs desiredHealthy > 0.
  assert.is(evictionNeed({ phase: 'Running', ready: false, deleting: false }, { unhealthyPodEvictionPolicy: null, status: status(0, 0) }), 'budget');
});

s('budgets that never allow a disruption are named', () => {
  assert.is(neverAllows({ minAvailable: null, maxUnavailable: 0 }, { expectedPods: 3, desiredHealthy: 3 }), 'max-unavailable-zero');
  assert.is(neverAllows({ minAvailable: 3, maxUnavailable: null }, { expectedPods: 3, desiredHealthy: 3 }), 'min-available-all');
  assert.is(neverAllows({ minAvailable: '100%', maxUnavailable: null }, { expectedPods: 2, desiredHealthy: 2 }), 'min-available-all');
  assert.is(neverAllows({ minAvailable: 2, maxUnavailable: null }, { expectedPods: 3, desiredHealthy: 2 }), null);
  assert.is(neverAllows({ minAvailable: 1, maxUnavailable: null }, { expectedPods: 0, desiredHealthy: 1 }), null);
});

s.run();
