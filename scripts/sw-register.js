// Registers the site's service worker (sw.js, scripts/site-sw.mjs), which
// keeps the page working offline after one visit. A file rather than an
// inline script: the <meta> CSP admits it by script-src 'self'. Only the
// static site loads it; `trunk serve` rebuilds all the time and has none.
if ('serviceWorker' in navigator) {
  // After load: precaching ~6 MB must not compete with the first visit's
  // own download of the same files.
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('./sw.js', { scope: './' }).catch((e) => {
      // Offline use is a bonus: a page that cannot register (a private
      // window, a file: URL) still works online.
      console.info(`service worker not registered: ${e}`);
    });
  });
}
