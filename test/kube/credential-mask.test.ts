/**
 * The credential mask of the health sources (docs/safety.md "Credentials in answers"): a
 * credential, and every run of 8 or more characters of one, becomes `[masked]` wherever it
 * occurs, cut short or not; a credential under 8 characters is masked whole; masking twice
 * changes nothing; JSON keys and values are masked, unchanged subtrees kept as they are; a 4 MiB
 * answer is masked in well under 5 s (the figures printed).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { CredentialMask, MASKED } from '../../src/kube/credential-mask.ts';
import { seeded } from '../support/seeds.ts';
import { shownPiece } from '../support/credentials.ts';

const t = suite('kube: the credential mask');
const TOKEN = 'sha256~Zm9vYmFyLXNlY3JldC10b2tlbi12YWx1ZQ';
const maskOf = (...c: string[]) => {
  const m = new CredentialMask();
  for (const x of c) m.add(x);
  return m;
};

t('the credential whole, in any text, and every piece of 8 or more of it: cut at any position, no piece of 8 is left', () => {
  const m = maskOf(TOKEN);
  assert.is(m.text(`authorization="Bearer ${TOKEN}"`), `authorization="Bearer ${MASKED}"`);
  assert.is(m.text(`${TOKEN}${TOKEN} and ${TOKEN}`), `${MASKED} and ${MASKED}`);
  for (let from = 0; from < TOKEN.length; from++) {
    for (let to = from + 1; to <= TOKEN.length; to++) {
      const piece = TOKEN.slice(from, to);
      const got = m.text(`x="${piece}..."`);
      if (piece.length >= 8) assert.is(got, `x="${MASKED}..."`, piece);
      else assert.is(got, `x="${piece}..."`, `a piece of ${piece.length} is not evidence: ${piece}`);
    }
  }
  assert.is(m.text('no credential here'), 'no credential here');
});

t('a credential under 8 characters is masked where it occurs whole; nothing held masks nothing', () => {
  const m = maskOf('pw1234');
  assert.is(m.text('user:pw1234 and pw12345'), `user:${MASKED} and ${MASKED}5`);
  assert.is(m.text('pw123'), 'pw123');
  assert.ok(new CredentialMask().empty);
  assert.is(new CredentialMask().text(TOKEN), TOKEN);
  m.add(null);
  m.add(undefined);
  m.add('');
  assert.is(m.text('anything'), 'anything');
});

t('masking twice changes nothing: a marker in the text is left as it is, even where a short credential is part of it', () => {
  const m = maskOf('ask', TOKEN);
  const once = m.text(`Bearer ${TOKEN} [masked] task`);
  assert.is(once, `Bearer ${MASKED} ${MASKED} t${MASKED}`);
  assert.is(m.text(once), once);
});

t('JSON: keys and values masked at any depth; an answer without a credential is returned as it is', () => {
  const m = maskOf(TOKEN);
  const clean = { data: { alerts: [{ labels: { alertname: 'A', severity: 'critical' }, state: 'firing' }] }, n: 1, ok: true, nothing: null };
  assert.is(m.json(clean), clean);
  const dirty = {
    data: { alerts: [{ labels: { alertname: 'A', authorization: `Bearer ${TOKEN}`, [`k_${TOKEN}`]: 'v' }, state: 'firing' }, clean.data.alerts[0]] },
  };
  const out = m.json(dirty) as typeof dirty;
  assert.equal(out.data.alerts[0].labels, { alertname: 'A', authorization: `Bearer ${MASKED}`, [`k_${MASKED}`]: 'v' });
  assert.is(out.data.alerts[1], clean.data.alerts[0], 'an unchanged subtree is shared');
  assert.is(JSON.stringify(dirty).includes(TOKEN), true, 'the answer itself is not changed');
});

t('property: credentials of any visible ASCII, cut and quoted any way, leave no piece of 8 in the masked text', () => {
  const cred = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 120 });
  fc.assert(
    fc.property(
      fc.array(cred, { minLength: 1, maxLength: 4 }),
      fc.array(fc.tuple(fc.nat(), fc.nat(), fc.string({ maxLength: 12 })), { maxLength: 8 }),
      (creds, cuts) => {
        const m = maskOf(...creds);
        const text =
          cuts
            .map(([i, n, filler]) => {
              const c = creds[i % creds.length];
              const from = n % c.length;
              return `${filler}${c.slice(from, from + 8 + (n % 200))}`;
            })
            .join(' ') + creds.join('|');
        const got = m.text(text);
        assert.is(
          shownPiece(
            got,
            creds.filter((c) => c.length >= 8),
          ),
          null,
          got,
        );
        for (const c of creds) assert.not.ok(c.length < 8 && got.split(MASKED).some((part) => part.includes(c)), `${c} in ${got}`);
        assert.is(m.text(got), got, 'masking twice changes nothing');
      },
    ),
    seeded(310_701, 400),
  );
});

t('property: a text that shares no 8 characters with any credential comes back as it was', () => {
  fc.assert(
    fc.property(fc.array(fc.stringMatching(/^[a-m]{8,40}$/), { minLength: 1, maxLength: 3 }), fc.stringMatching(/^[n-z .=",{}]{0,300}$/), (creds, text) => {
      assert.is(maskOf(...creds).text(text), text);
    }),
    seeded(310_702, 300),
  );
});

t('credentials held are bounded: the least recently added go first; the newest and the one in use stay masked', () => {
  const m = new CredentialMask();
  const tokens = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(4, '0')}-${'x'.repeat(16 * 1024 - 8)}-${i}`);
  for (const x of tokens) {
    m.add(x);
    m.add(tokens[0]); // in use: added again at each measurement, never dropped
  }
  assert.is(m.text(tokens[0]), MASKED, 'the token in use is kept');
  assert.is(m.text(tokens[19]), MASKED);
  assert.is(m.text(`${tokens[19].slice(0, 4)}-`), `${tokens[19].slice(0, 4)}-`, 'a piece under 8 characters stays');
  assert.is(m.text('0001-xxx'), '0001-xxx', 'the oldest not in use was dropped');
  assert.is(m.text('0019-xxxx'), MASKED);
});

t('a 4 MiB answer of 10,000 series: masked as JSON and as one text within 5 s even on a loaded machine (figures printed)', () => {
  const m = maskOf(TOKEN, 'eyJhbGciOiJSUzI1NiJ9.c2EtdG9rZW4tN2M0ZTFiOWEyZg.k3XqP8wL', 'pw1234');
  const series = Array.from({ length: 10_000 }, (_, i) => ({
    metric: { __name__: 'node_cpu_seconds_total', instance: `worker-${i}.example.internal:9100`, job: 'node-exporter', pad: 'p'.repeat(300) },
    value: [1700000000, String(i / 7)],
  }));
  series[9_999].metric.pad = `Bearer ${TOKEN}`;
  const body = { status: 'success', data: { resultType: 'vector', result: series } };
  const text = JSON.stringify(body);
  assert.ok(text.length > 4 * 2 ** 20 * 0.95 && text.length < 4.5 * 2 ** 20, `${text.length} bytes`);
  let t0 = performance.now();
  const masked = m.json(JSON.parse(text)) as typeof body;
  const jsonMs = performance.now() - t0;
  t0 = performance.now();
  const maskedText = m.text(text);
  const textMs = performance.now() - t0;
  assert.is(masked.data.result[9_999].metric.pad, `Bearer ${MASKED}`);
  assert.is(maskedText.length, text.length - TOKEN.length + MASKED.length);
  console.log(`  ${(text.length / 2 ** 20).toFixed(1)} MiB, 10,000 series: json ${jsonMs.toFixed(0)} ms, text ${textMs.toFixed(0)} ms`);
  // 0.1 to 0.4 s on 2 shared cores; a per-position scan of the credential list would take minutes.
  assert.ok(jsonMs < 5000 && textMs < 5000, `${jsonMs} ms, ${textMs} ms`);
});

t.run();
