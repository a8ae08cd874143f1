// The site's service worker (scripts/site-sw.mjs writes it into the built
// site as sw.js, with FILES and VERSION above this line): after one visit
// the page loads and runs with the network off. See docs/site.md.
//
// One cache per build, named by a hash of every file's content, so a new
// build precaches into a fresh cache and deletes the old one when it
// activates; a page never mixes two builds' files out of the cache.

// Scoped by the folder too: two copies of the site on one origin
// (/a/ and /b/) share CacheStorage, and neither may delete the other's.
const SCOPE = self.registration.scope;
const PREFIX = `ccl-playground ${SCOPE} `;
const CACHE = PREFIX + VERSION;
const INDEX = new URL('./', SCOPE).href;
const url = (f) => new URL(f, SCOPE).href;
const KIND = new Map(FILES.map((f) => [url(f.path), f.hashed ? 'hashed' : 'plain']));

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    // A hashed file may come from the HTTP cache (the visit that installs
    // this worker has just downloaded the 4 MB app; a bad connection should
    // not pay for it twice). The others are revalidated: the HTTP cache may
    // still hold the previous build's worker.js, whose name has no hash.
    await Promise.all(FILES.map(async (f) => {
      const res = await fetch(new Request(url(f.path), { cache: f.hashed ? 'default' : 'no-cache' }));
      if (!res.ok) throw new Error(`sw: ${f.path}: HTTP ${res.status}`);
      await cache.put(f.path === 'index.html' ? INDEX : url(f.path), res);
    }));
    // A new build takes over at once: the old one's cache is deleted on
    // activate, and the pages still open keep what they already loaded.
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith(PREFIX) && key !== CACHE) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

// The network's answer when there is one, else this build's copy.
async function networkFirst(request, key) {
  try {
    return await fetch(request);
  } catch (e) {
    const hit = await caches.match(key, { cacheName: CACHE, ignoreSearch: true });
    if (hit) return hit;
    throw e;
  }
}

// A hashed name's content never changes: the copy, without asking.
async function cacheFirst(request, key) {
  const hit = await caches.match(key, { cacheName: CACHE });
  return hit ?? fetch(request);
}

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const u = new URL(req.url);
  const bare = u.origin + u.pathname;
  // The page itself (a share link adds a query): network first, so a new
  // version is picked up when online. The fresh copy is not cached: the
  // cached index.html stays the one whose assets this cache holds.
  if (req.mode === 'navigate' && (bare === INDEX || bare === url('index.html'))) {
    event.respondWith(networkFirst(req, INDEX));
    return;
  }
  const kind = KIND.get(bare);
  if (kind === 'hashed') event.respondWith(cacheFirst(req, bare));
  // worker.js, planner.js and their wasm keep their names across builds:
  // from the network while online, so they match the index.html the
  // network just gave.
  else if (kind === 'plain') event.respondWith(networkFirst(req, bare));
});
