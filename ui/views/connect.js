// Connect an agent: the bridge command, the socket, copy-ready snippets per client.
import { h, clear, errorText } from '../dom.js';
import * as api from '../api.js';

function copyButton(text) {
  const b = h('button', { class: 'ghost' }, 'Copy');
  b.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      b.textContent = 'Copied';
    } catch (_) {
      b.textContent = 'Select and copy';
    }
    setTimeout(() => { b.textContent = 'Copy'; }, 1500);
  });
  return b;
}

// Clients whose server lists the Import page can read.
const IMPORTABLE = new Set(['claude-desktop', 'claude-code', 'cursor', 'vscode', 'windsurf', 'nanobot']);

function clientsTable(host) {
  api.listClients().then((clients) => {
    const rows = clients.map((c) => {
      const toggle = h('input', { type: 'checkbox', class: 'toggle', 'data-client': c.id, checked: c.connected });
      const alsoImport = h('input', { type: 'checkbox', 'data-import': c.id });
      const note = h('span', { class: 'help' });
      toggle.addEventListener('change', async () => {
        toggle.disabled = true;
        try {
          if (toggle.checked) {
            const added = await api.connectClient(c.id, alsoImport.checked);
            const done = added ? `connected; imported ${added} server(s)` : 'connected; restart the client';
            note.textContent = c.note ? `${done}. Note: ${c.note}` : done;
          } else {
            await api.disconnectClient(c.id);
            note.textContent = 'disconnected';
          }
        } catch (e) {
          toggle.checked = !toggle.checked;
          note.textContent = errorText(e);
        } finally {
          toggle.disabled = false;
        }
      });
      return h('tr', { 'data-client-row': c.id },
        h('td', {}, h('label', {}, toggle, c.label)),
        h('td', {}, c.installed ? h('span', { class: 'badge ok' }, 'installed') : h('span', { class: 'badge off' }, 'not found')),
        h('td', {}, c.error ? h('span', { class: 'error' }, c.error) : h('code', {}, c.path)),
        h('td', {}, IMPORTABLE.has(c.id) ? h('label', { class: 'help' }, alsoImport, ' also import its servers') : null, ' ', note));
    });
    clear(host, h('table', { class: 'clients' },
      h('tr', {}, h('th', {}, 'Connect'), h('th', {}, 'Client'), h('th', {}, 'Config file'), h('th', {}, '')), rows));
  }).catch((e) => clear(host, h('div', { class: 'error' }, errorText(e))));
}

export function render(root) {
  const clients = h('div', { id: 'clients' });
  clear(root, h('header', {}, h('h1', {}, 'Connect an agent')),
    h('p', {}, 'One click writes the bridge command into the client\'s own config (a .bak is kept; comments and other keys are untouched).'),
    clients);
  clientsTable(clients);
  api.getConnectInfo().then((info) => {
    const command = [info.command, ...info.args].join(' ');
    root.append(
      h('p', {}, 'Every agent spawns the same command; it bridges stdio to this app\'s socket.'),
      h('dl', { class: 'facts' },
        h('dt', {}, 'Command'), h('dd', {}, h('code', { id: 'bridge-command' }, command), copyButton(command)),
        h('dt', {}, 'Socket'), h('dd', {}, h('code', { id: 'socket-path' }, info.socket), copyButton(info.socket)),
        h('dt', {}, 'Control socket'), h('dd', {}, h('code', {}, info.controlSocket)),
        h('dt', {}, 'Config file'), h('dd', {}, h('code', {}, info.configPath))),
      h('div', { class: 'snippets' }, info.snippets.map((s) => h('section', { class: 'snippet' },
        h('h3', {}, s.client, ' ', h('span', { class: 'help' }, s.file)),
        h('pre', {}, s.text), copyButton(s.text)))));
  }).catch((e) => root.append(h('div', { class: 'error' }, errorText(e))));
}
