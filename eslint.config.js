// Lint rules. The override on workflows/ keeps Temporal's deterministic sandbox free of Node
// built-ins and of runtime imports from activities/ (type imports are fine). LAYERS keeps the
// folders' dependencies one way, and import-x/no-cycle forbids import cycles between modules.
const { builtinModules } = require('node:module');
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');
const globals = require('globals');
const importX = require('eslint-plugin-import-x');

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

// Our top-level source folders, and which of them each one may import (Node built-ins and packages
// are always allowed). The order below is the layering: a folder imports only folders listed above
// it, so folders never import each other in a circle. scripts/ and test/ may import anything, and no
// other folder may import them. workflows/ may import activities/ for types only (the rule on
// workflows/ further down checks that).
const FOLDERS = ['common', 'bundle', 'codec', 'fake-model', 'activities', 'workflows', 'worker', 'client', 'serve', 'cli', 'scripts', 'test'];
const LAYERS = {
  // Types, constants and pure helpers shared by every folder, the workflow sandbox included.
  common: { mayImport: [] },
  // The bundle runtime: a library of its own, used by the activities and the command line.
  bundle: { mayImport: ['common'] },
  // The payload codec and its server.
  codec: { mayImport: ['common'] },
  // The fake OpenAI-compatible server and the demo's scripted model (`loopwright demo`, tests).
  'fake-model': { mayImport: ['common'] },
  // The model call and the tools, run by the worker (the workflow's contract is in common/contract/).
  activities: { mayImport: ['common', 'bundle'] },
  // The deterministic session workflow; activities/ for types only.
  workflows: { mayImport: ['common', 'activities'] },
  // The worker factory.
  worker: { mayImport: ['common', 'codec', 'activities', 'workflows'] },
  // The typed client library and the embedded server.
  client: { mayImport: ['common', 'bundle', 'codec', 'fake-model', 'activities', 'workflows', 'worker'] },
  // The HTTP API and the chat app (`loopwright serve`), over the client library; only cli/ (and tests) import it.
  serve: { mayImport: ['common', 'bundle', 'codec', 'client'] },
  // The command line, on top of the client library.
  cli: { mayImport: ['common', 'bundle', 'codec', 'fake-model', 'activities', 'workflows', 'worker', 'client', 'serve'] },
};

const layerZones = Object.entries(LAYERS).flatMap(([folder, { mayImport, except = {} }]) =>
  FOLDERS.filter((other) => other !== folder && !mayImport.includes(other)).map((other) => ({
    target: `./${folder}`,
    from: `./${other}`,
    ...(except[other] ? { except: except[other] } : {}),
    message:
      mayImport.length === 0
        ? `${folder}/ may import none of our other folders (LAYERS in eslint.config.js).`
        : `${folder}/ may import only ${mayImport.map((f) => `${f}/`).join(', ')} of our folders (LAYERS in eslint.config.js).`,
  })),
);

module.exports = tseslint.config(
  // test/package/consumer is a consumer's program, compiled against the packed package by its test;
  // docs/.vitepress/dist and cache are what npm run docs:build writes.
  { ignores: ['node_modules/**', 'dist/**', '.tools/**', '.loopwright/**', 'tmp/**', 'coverage/**', 'bin/**', 'test/package/consumer/**', 'docs/.vitepress/dist/**', 'docs/.vitepress/cache/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: __dirname },
      globals: { ...globals.node },
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { basePath: __dirname, zones: layerZones }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code runs in a deterministic sandbox: no Node built-ins.' })),
          patterns: [
            {
              group: ['**/activities', '**/activities/**'],
              allowTypeImports: true,
              message: 'Workflows may import activity types only (import type).',
            },
            { group: ['@temporalio/worker', '@temporalio/client', '@temporalio/activity'], message: 'Not in workflow code.' },
          ],
        },
      ],
      // A workflow function a reader can hold in view: steps of a longer one become named functions.
      'max-lines-per-function': ['error', { max: 80, IIFEs: true }],
    },
  },
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { ...globals.node } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // examples/ are programs as the package's users write them: they import 'loopwright' and
  // 'loopwright/worker' (examples/tsconfig.json checks them against the built declarations), never
  // our folders, nor each other.
  {
    files: ['examples/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^\\.\\./', message: "An example imports the package as its users do ('loopwright', 'loopwright/worker') and files of its own folder." }] },
      ],
    },
  },
  // The chat app (serve/app/) and the web page example run in the browser as plain ES modules, without a build step.
  {
    files: ['serve/app/**/*.js', 'examples/web-page/public/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...globals.browser } },
    rules: { 'no-restricted-globals': ['error', { name: 'require', message: 'The app is ES modules in a browser: import, not require.' }] },
  },
);
