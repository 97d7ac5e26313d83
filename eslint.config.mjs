// typescript-eslint with type information (issue 13 §6), run by `npm test` (npm run lint). The promise
// rules catch a rejection nobody handles (one request must never end the process);
// switch-exhaustiveness-check a union member nobody handles. Tests and benchmarks read parsed JSON
// and fakes' request bodies, so the no-unsafe-* family is off there, and only there.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'reports/**', 'scratch/**', '.stryker-tmp/**', 'coverage/**', 'bin/**', '**/*.mjs', 'vitest.mutation.config.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // scripts/layering.ts is in the project already (test/layering.test.ts imports it): a file in both fails to parse.
      parserOptions: { projectService: { allowDefaultProject: ['scripts/!(layering).ts'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Control characters in patterns are the point: they strip terminal escapes from untrusted text.
      'no-control-regex': 'off',
    },
  },
  {
    files: ['test/**', 'bench/**', 'scripts/**'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/require-await': 'off',
      // Tests compare raw Discord/Slack JSON (numbers) with the libraries' enums on purpose.
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
    },
  },
);
