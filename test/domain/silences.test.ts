/**
 * Silence templates (docs/spec.md "Silences"): the closed set of placeholders, the rules that keep
 * a silence scoped to its node and acceptable to Alertmanager, names quoted inside a regex, and
 * which alerts a node's silences cover.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { parseSilenceTemplate, nodeSilenceMatchers, alertmanagerMatcher, coveredBy, quoteRegex, silenceComment } from '../../src/domain/silences.ts';
import { MatcherSet } from '../../src/domain/alert-matchers.ts';
import { seeded } from '../support/seeds.ts';

const s = suite('silence templates');

s('templates with {node} and {pool} parse; the errors say where and why', () => {
  for (const t of ['node="{node}"', 'instance=~"{node}(:.*)?"', 'pool="{pool}-{node}"', 'instance=~"{node}:9[0-9]{3}"'])
    assert.ok(parseSilenceTemplate(t).ok, t);
  const bad: [string, number, RegExp][] = [
    ['node="{nodes}"', 6, /unknown placeholder \{nodes\}/],
    ['node!="{node}"', 4, /matches the empty string/],
    ['instance!~"{node}.*"', 8, /matches the empty string/],
    ['severity="critical"', 9, /does not name \{node\}/],
    ['node=~"({node}"', 7, /not an RE2/],
    ['node="{node}', 5, /not closed/],
  ];
  for (const [t, offset, msg] of bad) {
    const r = parseSilenceTemplate(t);
    assert.not.ok(r.ok, t);
    if (!r.ok) {
      assert.is(r.offset, offset, t);
      assert.match(r.message, msg, t);
      assert.ok(r.hint.length > 0, t);
    }
  }
});

s('a node name is put in literally, and quoted inside a regex', () => {
  const vars = { node: 'w-1.lab', pool: 'worker' };
  const [eq, re] = nodeSilenceMatchers(['node="{node}"', 'instance=~"{node}(:.*)?"'], vars);
  assert.equal(eq, { label: 'node', op: '=', value: 'w-1.lab' });
  assert.equal(re, { label: 'instance', op: '=~', value: 'w-1\\.lab(:.*)?' });
  assert.equal(alertmanagerMatcher(re), { name: 'instance', value: 'w-1\\.lab(:.*)?', isRegex: true, isEqual: true });
  assert.equal(alertmanagerMatcher(eq), { name: 'node', value: 'w-1.lab', isRegex: false, isEqual: true });
  const set = new MatcherSet([re]);
  assert.ok(set.test({ instance: 'w-1.lab:9100' }));
  assert.ok(set.test({ instance: 'w-1.lab' }));
  // The dot is a dot: another node whose name differs there is not covered.
  assert.not.ok(set.test({ instance: 'w-1xlab:9100' }));
  assert.not.ok(set.test({ instance: 'w-1.lab2' }));
});

s('a node silence covers that node only (property over node names)', () => {
  const name = fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,20}[a-z0-9])?$/);
  fc.assert(
    fc.property(name, name, (a, b) => {
      fc.pre(a !== b);
      const covers = coveredBy([
        nodeSilenceMatchers(['node="{node}"'], { node: a, pool: 'p' }),
        nodeSilenceMatchers(['instance=~"{node}(:.*)?"'], { node: a, pool: 'p' }),
      ]);
      assert.ok(covers({ node: a, alertname: 'KubeNodeNotReady' }));
      assert.ok(covers({ instance: `${a}:9100` }));
      assert.not.ok(covers({ node: b }));
      assert.not.ok(covers({ instance: `${b}:9100` }));
      assert.not.ok(covers({ alertname: 'TargetDown' }));
    }),
    seeded(310_101, 300),
  );
});

s('quoteRegex escapes every RE2 metacharacter', () => {
  assert.is(quoteRegex('a.b*c+d?(e)|[f]{g}^$\\'), 'a\\.b\\*c\\+d\\?\\(e\\)\\|\\[f\\]\\{g\\}\\^\\$\\\\');
});

s('the comment names the Rollout, the plan and the node', () => {
  const c = silenceComment('demo', 'p-1234', 'worker', 'w-1');
  for (const part of ['Rollout demo', 'plan p-1234', 'node w-1', 'pool worker']) assert.ok(c.includes(part), part);
});

s.run();
