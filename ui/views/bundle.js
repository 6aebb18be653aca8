// Add server → Bundle tab: an MCP bundle (.mcpb) typed as a path, chosen with the file picker,
// dropped on the window or opened with the app (app.js routes those to #/add/bundle/<path>);
// its user_config as the registry install form; "Install" unpacks and saves it through the
// core's bundle install, as `mcp-companion install FILE.mcpb` does.
import { h, clear, errorText, showFieldErrors } from '../dom.js';
import * as api from '../api.js';
import { inputFor } from './registry.js';

function signatureNote(b) {
  const state = b.signature ? (b.signature.selfSigned ? 'self-signed' : 'signed') : 'unsigned';
  // Neutral, not green: a valid signature proves integrity, not who signed.
  return h('p', { class: 'help signature-note', 'data-signature': state }, `Signature: ${b.signatureText}.`);
}

function bundleForm(host, path, field) {
  clear(host, h('p', { class: 'help' }, 'Reading the bundle…'));
  api.openBundle(path).then((b) => {
    const form = h('div', { class: 'form', 'data-bundle': b.name });
    const serverName = h('input', { type: 'text', value: b.server, 'data-field': 'name' });
    const inputs = b.fields.map((f) => ({ f, el: inputFor(f) }));
    const note = h('div', { class: 'form-note' });
    const install = h('button', { class: 'primary', 'data-action': 'install' }, 'Install');
    install.addEventListener('click', async () => {
      showFieldErrors(form, null);
      clear(note);
      install.disabled = true;
      try {
        const values = Object.fromEntries(inputs.map(({ f, el }) => [f.key, el.value]));
        const done = await api.installBundle(b.file, serverName.value, values);
        location.hash = `#/server/${encodeURIComponent(done.server)}`;
      } catch (e) {
        showFieldErrors(form, e, note);
      } finally {
        install.disabled = false;
      }
    });
    clear(host, clear(form,
      h('h2', {}, b.title),
      h('p', {}, b.description),
      h('p', { class: 'help' }, h('code', {}, `${b.name}@${b.version}`), b.author ? ` · ${b.author}` : '',
        ` · ${b.files} files, ${b.totalBytes} bytes · `, h('code', {}, b.file)),
      signatureNote(b),
      field('Name', serverName),
      inputs.map(({ f, el }) => field(`${f.key}${f.required ? ' *' : ''}${f.secret ? ' (secret)' : ''}`, el,
        [f.description || '', f.secret ? ' · kept in the OS keychain, out of the config file' : ''])),
      h('div', { class: 'toolbar' }, install), note));
  }).catch((e) => clear(host, h('div', { class: 'error', 'data-bundle-error': '' }, errorText(e))));
}

// Renders the tab into `list` and `detail`; returns `open(path)` to show a bundle's form.
export function renderBundle(list, detail, field) {
  const path = h('input', { type: 'text', id: 'bundle-path', placeholder: '/path/to/server.mcpb' });
  const go = h('button', { class: 'primary', id: 'bundle-open' }, 'Open');
  const picker = h('input', { type: 'file', accept: '.mcpb', id: 'bundle-file' });
  const open = (p) => {
    path.value = p;
    bundleForm(detail, p, field);
  };
  go.addEventListener('click', () => { if (path.value.trim()) open(path.value.trim()); });
  path.addEventListener('keydown', (e) => { if (e.key === 'Enter') go.click(); });
  picker.addEventListener('change', async () => {
    const file = picker.files[0];
    if (!file) return;
    try {
      // The picker gives bytes, not a path: the app keeps a copy in its data directory.
      const bytes = Array.from(new Uint8Array(await file.arrayBuffer()));
      open(await api.receiveBundle(file.name, bytes));
    } catch (e) {
      clear(detail, h('div', { class: 'error' }, errorText(e)));
    }
  });
  clear(list,
    h('div', { class: 'drop-zone', id: 'bundle-drop' }, 'Drop a .mcpb file anywhere on this window.'),
    h('div', { class: 'toolbar' }, path, go),
    field('Or choose a file', picker, 'A chosen file is copied into the app\'s data directory; a dropped or typed path is installed from where it is.'));
  clear(detail, h('p', { class: 'help' }, 'Open an MCP bundle (.mcpb) to see what it asks for.'));
  return open;
}
