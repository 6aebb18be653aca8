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

export function render(root) {
  clear(root, h('header', {}, h('h1', {}, 'Connect an agent')));
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
