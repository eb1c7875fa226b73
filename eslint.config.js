// Lint with type information: the rules that catch floating promises and unsafe `any` matter most here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules', '.nomos', 'bin', 'coverage', 'scratch', '.dependency-cruiser.cjs', 'web/dist', 'dist'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
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
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  {
    // Tests read untyped JSON off the wire; asserting on it is the point, so the unsafe-any rules stay off there.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
