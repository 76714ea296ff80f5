// eslint.config.mjs with one rule left on (ESLINT_ONLY), for a fix of that rule alone:
//   ESLINT_ONLY=@typescript-eslint/consistent-type-imports npx eslint -c scripts/house/eslint-only.config.mjs --fix .
// Unused disable comments are not reported (with every other rule off they all look unused,
// and --fix would delete them).
import base from '../../eslint.config.mjs';

const only = process.env.ESLINT_ONLY;
if (!only) throw new Error('set ESLINT_ONLY to the rule to run, e.g. ESLINT_ONLY=@typescript-eslint/consistent-type-imports');

export default [
  ...base.map((c) => (c.rules ? { ...c, rules: Object.fromEntries(Object.entries(c.rules).map(([k, v]) => [k, k === only ? v : 'off'])) } : c)),
  { linterOptions: { reportUnusedDisableDirectives: 'off' } },
];
