// ESLint with type information (docs/development.md "Lint and format"): typescript-eslint's
// recommended-type-checked rules over src/, test/, scripts/, bench/ and bin/, and the two rules
// the project leans on: type-only imports written as such, and no promise left floating (a
// rejection nobody awaits is lost, or ends the process). Rules turned off say why.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'test/fixtures/', 'bench/out/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // `typeof import('./x.ts')` stays allowed: it types a module loaded lazily (src/cli/live.ts
      // loads the Kubernetes client only when a command needs it); test/repo/layers.test.ts counts it.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      '@typescript-eslint/no-floating-promises': 'error',
      // `any` enters where a raw API answer does (KObject's spec and status, crafted files in
      // tests); these rules would flag every read of it. Turned on once `any` is confined to
      // those entry points (docs/architecture.md "Types").
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // 98 casts, most of them of `any`: they go with the retyping above (eslint --fix removes them).
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // A function that implements a promise-returning port (a driver, a clock, a fake) is async
      // without awaiting anything; the rule would ask for `Promise.resolve` wrappers instead.
      '@typescript-eslint/require-await': 'off',
      // The terminal sanitiser (src/render/format.ts) and its tests match control characters on purpose.
      'no-control-regex': 'off',
      // A leading _ names what is there for its position only (an argument, a field left out of a rest).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true, caughtErrors: 'none' }],
    },
  },
  { files: ['**/*.mjs', '**/*.js'], ...tseslint.configs.disableTypeChecked },
);
