#!/usr/bin/env node
// The registry mirror on our build machines serves only the Linux builds of platform packages
// (@swc/core's, unrs-resolver's, ...), so `npm install` here writes a lockfile without the others
// and `npm ci` then refuses it. This adds every missing optional dependency of a locked package,
// with the os/cpu the registry gives for it, or else the ones its name spells (`-darwin-arm64`,
// `-linux-x64-musl`, ...): platform-gated, so npm never fetches them here.
// Run it after any `npm install` that rewrites package-lock.json.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const file = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));

/** What the registry says of one version, or undefined when it cannot be asked. */
function registryEntry(name, version) {
  try {
    const out = execFileSync('npm', ['view', `${name}@${version}`, '--json', 'version', 'os', 'cpu', 'libc', 'license', 'engines', 'dist'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const info = JSON.parse(out);
    return Array.isArray(info) ? info[info.length - 1] : info;
  } catch {
    return undefined;
  }
}

const OS = ['aix', 'android', 'darwin', 'freebsd', 'linux', 'netbsd', 'openbsd', 'openharmony', 'sunos', 'win32'];
const CPU = ['arm', 'arm64', 'ia32', 'loong64', 'mips64el', 'ppc64', 'riscv64', 's390x', 'x64', 'wasm32'];

/** The platform a package's name spells, e.g. `@unrs/resolver-binding-linux-arm-musleabihf`. */
function platformFromName(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  if (!cpu || (!os && cpu !== 'wasm32')) return undefined;
  const libc = parts.some((p) => p.startsWith('musl')) ? ['musl'] : os === 'linux' && parts.some((p) => p.startsWith('gnu')) ? ['glibc'] : undefined;
  return { version: undefined, ...(os ? { os: [os] } : {}), cpu: [cpu], ...(libc ? { libc } : {}) };
}

let added = 0;
const missing = [];
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const target = `node_modules/${name}`;
    if (lock.packages[target] || !/^\d+\.\d+\.\d+/.test(range)) continue;
    const info = registryEntry(name, range) ?? platformFromName(name);
    // Without os or cpu an entry would be installed everywhere: leave those to npm.
    if (!info || (!info.os && !info.cpu)) {
      missing.push(`${name}@${range} (of ${key})`);
      continue;
    }
    lock.packages[target] = {
      version: info.version ?? range,
      ...(info.dist?.tarball ? { resolved: info.dist.tarball } : {}),
      ...(info.dist?.integrity ? { integrity: info.dist.integrity } : {}),
      ...(info.cpu ? { cpu: info.cpu } : {}),
      ...(info.license ? { license: info.license } : {}),
      ...(info.libc ? { libc: info.libc } : {}),
      optional: true,
      ...(info.os ? { os: info.os } : {}),
      ...(info.engines ? { engines: info.engines } : {}),
    };
    added++;
  }
}
const keys = Object.keys(lock.packages).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0));
lock.packages = Object.fromEntries(keys.map((k) => [k, lock.packages[k]]));
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} platform entr${added === 1 ? 'y' : 'ies'} added`);
if (missing.length) console.log(`not added (no os/cpu known): ${missing.join(', ')}`);
