// Servers: name, transport, state, tool count, last error; start/stop/restart/remove, and
// Sign in for a server that waits for it.
import { h, clear, errorText } from '../dom.js';
import { on, CHANNELS } from '../events.js';
import { badge, isActive } from '../states.js';
import * as api from '../api.js';

export function render(root) {
  const status = h('div', { class: 'status-line' });
  const warnings = h('div', { class: 'config-warnings' });
  const body = h('tbody');
  const confirming = new Set();
  let latest = [];

  const act = (promise) => promise.then(refresh).catch((e) => clear(status, h('span', { class: 'error' }, errorText(e))));

  // A server waiting for sign-in is signed in from its row; the address to open (when no
  // browser could be started) goes to the status line.
  function signIn(name) {
    clear(status, `Signing in ${name}…`);
    api.signInServer(name).then((started) => {
      clear(status, !started.browserOpened
        ? h('span', {}, `Open this address in a browser to sign in ${name}: `, h('code', {}, started.url))
        : `Finish the sign-in to ${name} in your browser.`);
    }).catch((e) => clear(status, h('span', { class: 'error' }, errorText(e))));
  }

  // The core's reason names the CLI command; the window has a button for it.
  const errorCell = (s) => s.state === 'needs sign-in' && s.lastError
    ? `${s.lastError.replace(/;? run `mcp-companion login [^`]*`\.?$/, '')}: press Sign in.`
    : (s.lastError || '');

  function row(s) {
    const toggle = s.state === 'needs sign-in'
      ? h('button', { class: 'primary', 'data-action': 'sign-in', onclick: () => signIn(s.name) }, 'Sign in')
      : isActive(s.state)
        ? h('button', { onclick: () => act(api.stopServer(s.name)) }, 'Stop')
        : h('button', { class: 'primary', onclick: () => act(api.startServer(s.name)) }, 'Start');
    const remove = confirming.has(s.name)
      ? h('span', { class: 'confirm' }, `Remove ${s.name}? `,
        h('button', { class: 'danger', 'data-action': 'confirm-remove', onclick: () => { confirming.delete(s.name); act(api.removeServer(s.name)); } }, 'Remove'),
        h('button', { onclick: () => { confirming.delete(s.name); draw(latest); } }, 'Cancel'))
      : h('button', { class: 'ghost', 'data-action': 'remove', onclick: () => { confirming.add(s.name); draw(latest); } }, 'Remove…');
    return h('tr', { 'data-server': s.name },
      h('td', {}, h('a', { href: `#/server/${encodeURIComponent(s.name)}`, class: 'name' }, s.name)),
      h('td', {}, s.transport),
      h('td', {}, badge(h, s.state), s.waitingApproval
        ? [' ', h('a', { class: 'badge warn', 'data-action': 'review-changes', href: `#/server/${encodeURIComponent(s.name)}`,
          title: 'Changed or new tools are withheld from agents until you approve them' },
        `${s.waitingApproval} change${s.waitingApproval === 1 ? '' : 's'} to approve`)]
        : null),
      h('td', { class: 'num' }, s.state === 'running' ? String(s.tools) : '–'),
      h('td', { class: 'error-cell' }, errorCell(s)),
      h('td', {}, h('div', { class: 'actions' }, toggle,
        h('button', { disabled: s.transport === 'unknown', onclick: () => act(api.restartServer(s.name)) }, 'Restart'),
        remove)));
  }

  function draw(statuses) {
    latest = statuses;
    clear(body, statuses.length ? statuses.map(row)
      : h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No servers yet. ', h('a', { href: '#/add' }, 'Add one'), ' or ', h('a', { href: '#/import' }, 'import'), '.')));
  }

  // The config's warnings (unknown keys…) change only on a reload, which changes the servers.
  function showWarnings() {
    return api.configWarnings().then((list) => clear(warnings, list.length
      ? h('div', { class: 'notice warn' }, h('strong', {}, 'The config file has problems: '),
        h('ul', {}, list.map((w) => h('li', {}, w))))
      : [])).catch(() => {});
  }

  function refresh() {
    showWarnings();
    return api.listServers().then(draw).catch((e) => clear(status, h('span', { class: 'error' }, errorText(e))));
  }

  clear(root,
    h('header', {}, h('h1', {}, 'Servers'),
      h('div', { class: 'toolbar' },
        h('button', { onclick: () => act(api.startAll()) }, 'Start all'),
        h('button', { onclick: () => act(api.stopAll()) }, 'Stop all'),
        h('a', { class: 'button primary', href: '#/add' }, 'Add server'))),
    status,
    warnings,
    h('table', { class: 'servers' },
      h('thead', {}, h('tr', {}, ['Name', 'Transport', 'State', 'Tools', 'Last error', ''].map((t) => h('th', {}, t)))),
      body));
  refresh();
  return on(CHANNELS.serversChanged, (statuses) => { showWarnings(); draw(statuses); });
}
