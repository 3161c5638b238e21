import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import { layersPlugin } from './tools/eslint/layers.js'

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', '.tmp/', 'packages/*/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
    rules: {
      // Rows from dynamic collections enter as `any` in the db layer; elsewhere prefer unknown.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    plugins: { layers: layersPlugin },
    rules: {
      'layers/one-way-imports': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read settings through config.ts only',
        },
      ],
    },
  },
  {
    files: ['src/config.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
)
