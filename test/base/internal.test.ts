/**
 * The checked lookups of src/base/internal.ts: what the caller's construction guarantees comes
 * back as it is (a falsy value included), and a miss is a named internal error naming what was
 * looked for, never `undefined` running on.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InternalError, mustFind, mustGet } from '../../src/base/internal.ts';
import { objectFieldOf, type ObjectSchema } from '../../src/base/schema.ts';

const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (err) {
    return err;
  }
  return null;
};

test('mustGet returns what is there, 0 and empty strings included', () => {
  const m = new Map<string, number | string>([
    ['a', 0],
    ['b', ''],
  ]);
  assert.is(mustGet(m, 'a', 'count of'), 0);
  assert.is(mustGet(m, 'b', 'name of'), '');
});

test('mustGet throws an InternalError naming the key when it is missing', () => {
  const err = thrown(() => mustGet(new Map<string, number>(), 'edge-3', 'result of cluster'));
  assert.instance(err, InternalError);
  assert.is((err as InternalError).name, 'InternalError');
  assert.is((err as InternalError).message, 'internal: result of cluster edge-3 is missing');
});

test('mustFind returns the first match and throws an InternalError on none', () => {
  const items = [{ i: 1 }, { i: 2 }, { i: 2, second: true }];
  assert.equal(
    mustFind(items, (x) => x.i === 2, 'item 2'),
    { i: 2 },
  );
  const err = thrown(() => mustFind(items, (x) => x.i === 9, 'result of batch 9'));
  assert.instance(err, InternalError);
  assert.is((err as Error).message, 'internal: result of batch 9 is missing');
});

test('objectFieldOf narrows a field to its object schema and refuses any other kind', () => {
  const inner: ObjectSchema = { type: 'object', fields: {} };
  const schema: ObjectSchema = { type: 'object', fields: { spec: inner, name: { type: 'string' } } };
  assert.is(objectFieldOf(schema, 'spec'), inner);
  assert.instance(
    thrown(() => objectFieldOf(schema, 'name')),
    InternalError,
  );
  assert.instance(
    thrown(() => objectFieldOf(schema, 'absent')),
    InternalError,
  );
});

test.run();
