// The Firefox Profiler (the built app in ../shared/viewers) in headless Chromium, with one file
// to open: what the browser checks of tests/browser share.
//
//   const {page, from, close} = await openProfiler(FILE, VIEWERS_DIR);
//   await page.goto(from('calltree/'));   // the app at /from-url/<the file>/calltree/
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {createRequire} from 'node:module';

export async function openProfiler(file, viewersArg, {width = 1400, height = 800} = {}) {
  const viewers = path.resolve(viewersArg || path.join(import.meta.dirname, '../../../shared/viewers'));
  const app = path.join(viewers, 'firefox-profiler');
  const {chromium} = createRequire(path.join(viewers, 'package.json'))('playwright-core');
  const served = path.resolve(file);
  const server = http.createServer((req, res) => {
    const p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let f = p === '/__profile.json' ? served : path.join(app, path.normalize('/' + p));
    if (f !== served && !(fs.existsSync(f) && fs.statSync(f).isFile())) f = path.join(app, 'index.html');
    const type = {'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
      '.wasm': 'application/wasm', '.svg': 'image/svg+xml'}[path.extname(f)] ?? 'application/octet-stream';
    res.writeHead(200, {'Content-Type': type});
    fs.createReadStream(f).pipe(res);
  });
  await new Promise(r => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking']});
  const page = await (await browser.newContext({viewport: {width, height}})).newPage();
  // Nothing but this server: what the app shows comes from the file.
  await page.route(u => !u.toString().startsWith(base), r => r.abort());
  return {
    page,
    from: rest => `${base}/from-url/${encodeURIComponent(base + '/__profile.json')}/${rest}`,
    close: async () => {
      await browser.close();
      server.close();
    },
  };
}
