// Lint config: typescript-eslint's recommended rules over src/, test/ and bench/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'dist-test/', 'node_modules/', 'chatload-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // What keeps the bundle small (issue 17): zod as a namespace, so esbuild drops what is unused, and undici's
    // Agent and request through util/undici.ts, so the rest of undici stays unloaded.
    files: ['src/**/*.ts'],
    ignores: ['src/util/undici.ts', 'src/types/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "ImportDeclaration[source.value='zod'] > ImportSpecifier", message: "use `import * as z from 'zod'` (the bundle drops what is unused)." },
        { selector: "ImportDeclaration[source.value='undici'][importKind!='type']", message: 'import from util/undici.ts (it loads only the Agent and request).' },
      ],
    },
  },
);
