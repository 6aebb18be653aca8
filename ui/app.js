// The router: `#/page/arg` → one view module; each view's render returns a cleanup function.
import { h, clear } from './dom.js';
import { on, CHANNELS } from './events.js';
import * as api from './api.js';
import * as approve from './approve.js';
import * as elicit from './elicit.js';
import * as servers from './views/servers.js';
import * as server from './views/server.js';
import * as add from './views/add.js';
import * as importView from './views/import.js';
import * as connect from './views/connect.js';
import * as agents from './views/agents.js';
import * as settings from './views/settings.js';

const VIEWS = { servers, server, add, import: importView, connect, agents, settings };
const page = document.getElementById('page');
let cleanup = () => {};

function route() {
  const [name = 'servers', ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  const view = VIEWS[name] || servers;
  cleanup();
  clear(page);
  for (const link of document.querySelectorAll('#nav a')) {
    link.classList.toggle('active', link.dataset.page === name || (name === 'server' && link.dataset.page === 'servers'));
  }
  page.dataset.page = name;
  cleanup = view.render(page, rest.map(decodeURIComponent)) || (() => {});
}

function summary(statuses) {
  const running = statuses.filter((s) => s.state === 'running').length;
  clear(document.getElementById('summary'), h('span', {}, `${running} of ${statuses.length} servers running`));
}

// A bundle to open (the app started on a .mcpb, or a file dropped on the window): its form.
function openBundle(path) {
  const hash = `#/add/bundle/${encodeURIComponent(path)}`;
  if (location.hash === hash) route();
  else location.hash = hash;
}
const openPendingBundle = () => api.takeOpenedBundle().then((p) => { if (p) openBundle(p); }).catch(() => {});

window.addEventListener('hashchange', route);
on(CHANNELS.bundleOpened, openPendingBundle);
on(CHANNELS.fileDropped, (drop) => {
  const file = ((drop && drop.paths) || []).find((p) => /\.mcpb$/i.test(p));
  if (file) openBundle(file);
});
on(CHANNELS.serversChanged, summary);
api.listServers().then(summary).catch(() => {});
route();
elicit.start();
approve.start();
openPendingBundle();
