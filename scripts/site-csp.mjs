// Turns trunk's release index.html (built with `--public-url ./`) into a
// page that needs no server headers: the Content-Security-Policy of
// Trunk.toml goes into a <meta http-equiv> element, with a hash of each
// inline script and style in place of trunk's per-response nonce. Run by
// scripts/site.sh: node scripts/site-csp.mjs DIR/index.html Trunk.toml
//
// Fails (exit 1, a sentence on stderr) rather than write a page that would
// break on a static host: an asset still at a root-absolute URL, an inline
// script other than trunk's one loader, or a CSP directive it does not know.
import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';

const [htmlPath, trunkToml] = process.argv.slice(2);
if (!htmlPath || !trunkToml) {
  console.error('usage: node scripts/site-csp.mjs DIR/index.html Trunk.toml');
  process.exit(2);
}
const fail = (msg) => { console.error(`site-csp: ${msg}`); process.exit(1); };

// Trunk.toml's `csp = [ "…", … ]`, one quoted directive per entry (the
// file's own layout; a TOML parser would be one more dependency for this).
const toml = readFileSync(trunkToml, 'utf8');
const block = toml.match(/^csp\s*=\s*\[([\s\S]*?)\]/m);
if (!block) fail(`no csp = [...] in ${trunkToml}`);
const directives = [...block[1].matchAll(/"([^"]*)"/g)].map((m) => m[1].trim());
if (directives.length === 0) fail(`the csp list in ${trunkToml} is empty`);

let html = readFileSync(htmlPath, 'utf8');

// A static file cannot carry a fresh nonce per response; the placeholder
// trunk leaves in a build would only be a guessable constant.
html = html.replace(/\s+nonce="\{\{__TRUNK NONCE__\}\}"/g, '');
if (/\bnonce=/.test(html)) fail('a nonce attribute is left that is not trunk\'s placeholder');

// Inline <script> / <style> bodies, exactly as the browser hashes them.
const sha256 = (s) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;
const inline = (tag) => [...html.matchAll(new RegExp(`<${tag}\\b([^>]*)>([\\s\\S]*?)</${tag}>`, 'gi'))]
  .filter((m) => !/\bsrc\s*=/.test(m[1]))
  .map((m) => m[2]);
const scripts = inline('script');
const styles = inline('style');
// trunk's loader is the page's one inline script; anything else inline
// would be allowed by its hash without anyone having looked at it.
if (scripts.length !== 1 || !/wasm/.test(scripts[0])) {
  fail(`expected exactly one inline script (trunk's wasm loader), found ${scripts.length}`);
}

// Whatever the page's own HTML loads must resolve against the page's URL:
// under https://user.example.io/ccl-playground/ a "/x.js" would be fetched
// from the host's root.
const rootAbsolute = [
  ...html.matchAll(/\b(?:src|href)\s*=\s*["']\/(?!\/)[^"']*["']/gi),
  ...scripts[0].matchAll(/(?:from\s*|import\s*\(\s*|module_or_path\s*:\s*)["']\/(?!\/)[^"']*["']/g),
].map((m) => m[0]);
if (rootAbsolute.length) fail(`root-absolute URLs left (build with --public-url ./): ${rootAbsolute.join(', ')}`);

// What a <meta> policy cannot carry (the CSP spec ignores these there, and
// Chromium logs a console error for each): framing rules, reporting, sandbox.
const META_IGNORED = new Set(['frame-ancestors', 'report-uri', 'report-to', 'sandbox']);
const policy = [];
for (const d of directives) {
  const [name, ...sources] = d.split(/\s+/);
  if (META_IGNORED.has(name)) continue;
  const out = [];
  for (const s of sources) {
    if (s !== "'nonce-{{NONCE}}'") { out.push(s); continue; }
    if (name === 'script-src' || name === 'script-src-elem') out.push(...scripts.map(sha256));
    else if (name === 'style-src' || name === 'style-src-elem') out.push(...styles.map(sha256));
    else fail(`a nonce in ${name}: no hash to put in its place`);
  }
  if (/\{\{/.test(out.join(' '))) fail(`a placeholder left in ${d}`);
  policy.push([name, ...out].join(' '));
}
const content = policy.join('; ');
if (/"/.test(content)) fail('a double quote in the policy');

// First in <head> after the charset: a <meta> policy governs only what the
// parser meets after it.
const meta = `<meta http-equiv="Content-Security-Policy" content="${content}" />`;
const charset = html.match(/<meta\s+charset=[^>]*>/i);
if (!charset) fail('no <meta charset> to put the policy after');
html = html.replace(charset[0], `${charset[0]}\n    ${meta}`);

writeFileSync(htmlPath, html);
console.log(`site-csp: ${htmlPath}: ${content}`);
