/**
 * The request counts the e2e suites assert on (at most 112 requests for the 8-node apply, no
 * request reaching a cluster a halted fleet never started) are made by the shipped bundle and
 * read through the sources: both copies of src/kube/request-stats.ts must count into one store,
 * or every such bound holds with a count of zero.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pathToFileURL } from 'node:url';
import { bundledModule } from '../support/built.ts';
import { countRequest, requestStats, resetRequestStats } from '../../src/kube/request-stats.ts';

const t = suite('kube: request stats');

type Stats = typeof import('../../src/kube/request-stats.ts');

t('a request counted by the bundled copy is read by the sources, and a reset clears both', async () => {
  const shipped = (await import(pathToFileURL(await bundledModule('src/kube/request-stats.ts')).href)) as Stats;
  resetRequestStats();
  shipped.countRequest('ctx-a', 'PATCH', '/api/v1/nodes/w-1', 120);
  shipped.countRequest('ctx-a', 'GET', '/apis/coordination.k8s.io/v1/namespaces/ns/leases/lock');
  const seen = requestStats('ctx-a');
  assert.is(seen.total, 2, 'the sources see both requests of the bundle');
  assert.equal(seen.byVerbResource, { 'PATCH nodes': 1, 'GET leases': 1 });
  assert.is(seen.bytesSent, 120);
  countRequest('ctx-b', 'POST', '/api/v1/namespaces/default/pods/p/eviction');
  assert.is(shipped.requestStats().total, 3, 'the bundle sees the sources’ request too');
  shipped.resetRequestStats();
  assert.is(requestStats().total, 0, 'one reset clears the one store');
});

t.run();
