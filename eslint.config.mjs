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
      // `typeof import('./x.ts')` stays allowed: it types a module loaded lazily (src/app/live.ts
      // loads the Kubernetes client only when a command needs it); test/repo/layers.test.ts counts it.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      '@typescript-eslint/no-floating-promises': 'error',
      // Outside src/, `any` stays allowed: tests craft hostile files and answers field by field,
      // scripts and benchmarks read JSON they wrote. src/ turns these on below.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
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
  {
    // src/ has no `any`: a raw answer (JSON.parse, an API body) enters as `unknown` and is narrowed
    // by checks; an assertion the checker does not need is removed (docs/architecture.md "Types";
    // test/repo/type-escapes.test.ts keeps the counts of `any`, `as` and `!` from growing).
    files: ['src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unsafe-argument': 'error',
      '@typescript-eslint/no-unsafe-assignment': 'error',
      '@typescript-eslint/no-unsafe-call': 'error',
      '@typescript-eslint/no-unsafe-member-access': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
    },
  },
  { files: ['**/*.mjs', '**/*.js'], ...tseslint.configs.disableTypeChecked },
);
