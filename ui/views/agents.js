// Agents: the sessions connected now — client, process, profile and how it was chosen, calls —
// with a profile menu per session. Changing it moves that session only, until it disconnects
// (its agent is told its tool list changed); a lasting rule per client is a profile's
// `clients` in the config file.
import { h, clear, errorText } from '../dom.js';
import * as api from '../api.js';

const SOURCE = { socket: 'its socket', client: 'clientInfo rule', person: 'set here', default: 'default' };

function processText(a) {
  if (!a.process) return '?';
  const exe = a.process.exe || '?';
  const via = a.bridge ? ` (via bridge ${a.bridge.pid})` : '';
  return `${a.process.pid}${via} ${exe}`;
}

function profileMenu(a, profiles, note) {
  const menu = h('select', { 'data-agent': String(a.id) },
    h('option', { value: '' }, 'everything'),
    profiles.map((p) => h('option', { value: p }, p)));
  menu.value = a.profile || '';
  menu.addEventListener('change', async () => {
    menu.disabled = true;
    try {
      await api.setAgentProfile(a.id, menu.value || null);
      note.textContent = 'changed; the agent was told to re-list';
    } catch (e) {
      note.textContent = errorText(e);
    } finally {
      menu.disabled = false;
    }
  });
  return menu;
}

function table(host, page) {
  if (!page.agents.length) {
    clear(host, h('p', { class: 'help' }, 'No agent is connected.'));
    return;
  }
  const rows = page.agents.map((a) => {
    const note = h('span', { class: 'help' });
    const client = a.client ? `${a.client} ${a.clientVersion || ''}` : '(not initialized)';
    return h('tr', { 'data-agent-row': String(a.id) },
      h('td', {}, String(a.id)),
      h('td', {}, client),
      h('td', {}, h('code', {}, processText(a))),
      h('td', {}, profileMenu(a, page.profiles, note), ' ', h('span', { class: 'help' }, SOURCE[a.profileSource] || ''), ' ', note),
      h('td', {}, String(a.calls)),
      h('td', {}, new Date(a.connectedMs).toLocaleString()));
  });
  clear(host, h('table', { class: 'agents' },
    h('tr', {}, h('th', {}, 'ID'), h('th', {}, 'Client'), h('th', {}, 'Process'), h('th', {}, 'Profile'), h('th', {}, 'Calls'), h('th', {}, 'Since')),
    rows));
}

export function render(root) {
  const host = h('div', { id: 'agents' });
  clear(root, h('header', {}, h('h1', {}, 'Agents')),
    h('p', {}, 'The agent sessions connected now. A profile chosen here lasts until the agent disconnects; for a lasting choice, add the client\'s name to a profile\'s "clients" in the config file.'),
    host);
  let busy = false;
  const refresh = () => {
    // A menu being used is not redrawn under the pointer.
    if (busy || host.contains(document.activeElement)) return;
    busy = true;
    api.listAgents().then((page) => table(host, page))
      .catch((e) => clear(host, h('div', { class: 'error' }, errorText(e))))
      .finally(() => { busy = false; });
  };
  refresh();
  const timer = setInterval(refresh, 2000);
  return () => clearInterval(timer);
}
