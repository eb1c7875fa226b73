// Lint with type information: the rules that catch floating promises and unsafe `any` matter most here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules', '.nomos', 'bin', 'coverage'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      'no-restricted-imports': ['error', { patterns: [] }],
    },
  },
  {
    // The domain is pure: it never reaches an adapter, the API or the database.
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/adapters/**', '**/api/**', '**/commands/**', '**/projections/**'], message: 'The domain is pure: no adapters, API, commands or projections.' },
          { group: ['pg', '@electric-sql/*', '@eventstore/*', 'fastify*', 'ssh2', 'openai', 'node:*'], message: 'The domain does no I/O.' },
        ],
      }],
    },
  },
  { files: ['test/**/*.ts', 'bench/**/*.ts'], rules: { '@typescript-eslint/no-non-null-assertion': 'off' } },
);
