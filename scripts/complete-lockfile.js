#!/usr/bin/env node
// The registry mirror on our build machines serves only the Linux builds of @swc/core's platform
// packages, so `npm install` here writes a lockfile without the others and `npm ci` then refuses
// it. This adds the missing optional entries (platform-gated, so npm never fetches them on Linux).
// Run it after any `npm install` that rewrites package-lock.json.
const fs = require('node:fs');
const path = require('node:path');

const file = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const PLATFORMS = {
  'darwin-arm64': ['darwin', 'arm64'],
  'darwin-x64': ['darwin', 'x64'],
  'linux-arm-gnueabihf': ['linux', 'arm'],
  'linux-arm64-gnu': ['linux', 'arm64'],
  'linux-arm64-musl': ['linux', 'arm64'],
  'linux-ppc64-gnu': ['linux', 'ppc64'],
  'linux-s390x-gnu': ['linux', 's390x'],
  'linux-x64-gnu': ['linux', 'x64'],
  'linux-x64-musl': ['linux', 'x64'],
  'win32-arm64-msvc': ['win32', 'arm64'],
  'win32-ia32-msvc': ['win32', 'ia32'],
  'win32-x64-msvc': ['win32', 'x64'],
};
const core = lock.packages['node_modules/@swc/core'];
let added = 0;
for (const [name, version] of Object.entries(core?.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  const platform = PLATFORMS[name.replace('@swc/core-', '')];
  if (lock.packages[key] || !platform) continue;
  lock.packages[key] = { version, cpu: [platform[1]], license: 'Apache-2.0 AND MIT', optional: true, os: [platform[0]], engines: { node: '>=10' } };
  added++;
}
const keys = Object.keys(lock.packages).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0));
lock.packages = Object.fromEntries(keys.map((k) => [k, lock.packages[k]]));
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} platform entr${added === 1 ? 'y' : 'ies'} added`);
