// Makes the built site work offline after one visit: writes DIR/sw.js (the
// service worker of scripts/sw-template.js, with the list of the site's
// files and a version hashed from their content), copies
// scripts/sw-register.js into DIR and loads it from index.html. Run by
// scripts/site.sh after scripts/site-csp.mjs: node scripts/site-sw.mjs DIR
//
// The version is a hash of every file's name and bytes and of the worker's
// code, so any change to the build (a new index.html, a new worker.js)
// gives the service worker a new cache name, and the old cache is deleted when the new one activates.
// Running it again on the same folder changes nothing (the tag is added once).
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';

const [dir] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node scripts/site-sw.mjs DIR');
  process.exit(2);
}
const fail = (msg) => { console.error(`site-sw: ${msg}`); process.exit(1); };
const here = new URL('.', import.meta.url).pathname;

const indexPath = join(dir, 'index.html');
let html;
try { html = readFileSync(indexPath, 'utf8'); } catch { fail(`no ${indexPath}`); }
const TAG = '<script src="./sw-register.js" defer></script>';
if (!html.includes(TAG)) {
  if (!/<\/head>/i.test(html)) fail(`no </head> in ${indexPath}`);
  html = html.replace(/<\/head>/i, `  ${TAG}\n  </head>`);
  writeFileSync(indexPath, html);
}
writeFileSync(join(dir, 'sw-register.js'), readFileSync(join(here, 'sw-register.js')));

// Every file of the site (the folder is flat, trunk writes no sub-folders;
// one would be skipped with a warning rather than half-cached) but sw.js,
// which the browser fetches and compares by itself.
const files = [];
for (const name of readdirSync(dir).sort()) {
  if (name === 'sw.js') continue;
  if (!statSync(join(dir, name)).isFile()) { console.warn(`site-sw: ${name}/ is not precached`); continue; }
  const sha = createHash('sha256').update(readFileSync(join(dir, name))).digest('hex');
  // trunk's content hash in the name (app-3a957ac2ecfec12b_bg.wasm,
  // style-c36e4bf2403e6719.css; a 64-bit hash in hex without leading zeros,
  // so up to 16 digits): such a file never changes, cache-first.
  files.push({ path: name, sha256: sha, hashed: /-[0-9a-f]{1,16}(_bg)?\.(js|wasm|css)$/.test(name) });
}
for (const want of ['index.html', 'sw-register.js']) {
  if (!files.some((f) => f.path === want)) fail(`${want} is missing from ${dir}`);
}
// The worker's own code counts too: a change to how it caches is a new
// version, precached afresh.
const template = readFileSync(join(here, 'sw-template.js'), 'utf8');
const version = createHash('sha256')
  .update(files.map((f) => `${f.path} ${f.sha256}\n`).join(''))
  .update(template)
  .digest('hex').slice(0, 16);

const sw = `const VERSION = ${JSON.stringify(version)};\n`
  + `const FILES = ${JSON.stringify(files.map(({ path, hashed }) => ({ path, hashed })), null, 1)};\n`
  + template;
writeFileSync(join(dir, 'sw.js'), sw);
console.log(`site-sw: ${dir}/sw.js: version ${version}, ${files.length} files precached`);
