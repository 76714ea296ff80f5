/**
 * A plan with hostile text in every field, its report opened in headless Chromium
 * (test/support/browser.ts): the browser builds only the report's own elements, keeps its base
 * URL and fetches nothing, whatever the data says.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { renderHtml } from '../../src/render/html/report.ts';
import { hostilePlan } from '../support/hostile.ts';
import { cleanUp, haveChromium, probe } from '../support/browser.ts';

const s = suite('browser: hostile text');

/** The elements the report itself is made of (and the probe's script and pre). */
const OWN = [
  'a',
  'b',
  'body',
  'details',
  'div',
  'footer',
  'g',
  'h1',
  'h2',
  'h3',
  'head',
  'header',
  'html',
  'li',
  'line',
  'main',
  'meta',
  'p',
  'pre',
  'rect',
  'script',
  'section',
  'small',
  'span',
  'style',
  'summary',
  'svg',
  'table',
  'tbody',
  'td',
  'text',
  'th',
  'thead',
  'title',
  'tr',
  'ul',
];

s("a plan with hostile text in every field: Chromium builds only the report's own elements, keeps its base URL, fetches nothing", async () => {
  if (!haveChromium()) return;
  const { probe: p, dir } = await probe(renderHtml(hostilePlan('keep-enums')), 'hostile', 1280, false);
  try {
    assert.equal(
      p.tags.filter((t) => !OWN.includes(t)),
      [],
      'no element from data (base, form, img, svg onload, ...)',
    );
    assert.ok(p.location.endsWith('/probe.html') && p.baseURI === p.location, `no navigation, no base URL: ${p.location} ${p.baseURI}`);
    assert.is(p.resources, 0, 'nothing is fetched');
  } finally {
    cleanUp(dir);
  }
});

s.run();
