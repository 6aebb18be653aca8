// Import: the standard config files of other clients (and any path typed in), a preview of
// what will be added / renamed / skipped, then the import and its report.
import { h, clear, errorText } from '../dom.js';
import * as api from '../api.js';

const CLIENTS = { claudeDesktop: 'Claude Desktop', cursor: 'Cursor', vsCode: 'VS Code', nanobot: 'nanobot' };

function planTable(items) {
  return h('table', { class: 'plan' },
    h('thead', {}, h('tr', {}, ['Server', 'From', 'What happens'].map((t) => h('th', {}, t)))),
    h('tbody', {}, items.map((i) => h('tr', { 'data-action': i.action },
      h('td', {}, h('code', {}, i.name)),
      h('td', {}, CLIENTS[i.client] || i.client, h('div', { class: 'help' }, i.path)),
      h('td', {}, i.action === 'added' ? h('span', { class: 'badge ok' }, 'add')
        : i.action === 'renamed' ? [h('span', { class: 'badge warn' }, 'rename'), ` as ${i.to}`]
          : [h('span', { class: 'badge off' }, 'skip'), ` ${i.reason}`],
        (i.notes || []).map((n) => h('div', { class: 'help', 'data-import-note': '' }, n)))))));
}

// The plain-text secrets the import would bring in, with a "move to keychain" box (checked).
function secretsBlock(preview) {
  if (preview.error) {
    return { el: h('div', { class: 'help', id: 'import-secrets' }, `Secret values stay as they are in the config: ${preview.error}`), move: () => false };
  }
  if (!preview.moves.length) return { el: null, move: () => false };
  const box = h('input', { type: 'checkbox', id: 'move-secrets', checked: true });
  const el = h('div', { class: 'import-secrets', id: 'import-secrets' },
    h('label', {}, box, ` Move ${preview.moves.length} plain-text secret value${preview.moves.length === 1 ? '' : 's'} into the OS keychain (the config keeps only a reference)`),
    h('table', { class: 'plan' },
      h('thead', {}, h('tr', {}, ['Server', 'Field', 'Config gets'].map((t) => h('th', {}, t)))),
      h('tbody', {}, preview.moves.map((m) => h('tr', {},
        h('td', {}, h('code', {}, m.server)), h('td', {}, h('code', {}, m.field)), h('td', {}, h('code', {}, m.reference)))))));
  return { el, move: () => box.checked };
}

function counts(items) {
  const n = (a) => items.filter((i) => i.action === a).length;
  return `${n('added') + n('renamed')} to add (${n('renamed')} renamed), ${n('skipped')} skipped`;
}

export function render(root) {
  const list = h('div', { class: 'sources' });
  const extra = h('input', { type: 'text', id: 'import-path', placeholder: '/path/to/another/config.json' });
  const preview = h('div', { class: 'preview' });
  const chosen = () => [...root.querySelectorAll('.sources input:checked')].map((c) => c.value);

  function addSource(path, label, exists) {
    const box = h('input', { type: 'checkbox', value: path, checked: exists, disabled: !exists });
    list.append(h('label', { class: `source ${exists ? '' : 'missing'}` }, box, ' ', h('strong', {}, label), ' ', h('code', {}, path), exists ? '' : ' (not found)'));
  }

  async function doPreview() {
    const paths = chosen();
    if (!paths.length) return clear(preview, h('p', { class: 'help' }, 'Choose at least one file.'));
    try {
      const plan = await api.previewImport(paths);
      const secrets = secretsBlock(await api.previewImportSecrets(paths));
      const go = h('button', { class: 'primary', 'data-action': 'import' }, 'Import');
      go.addEventListener('click', async () => {
        go.disabled = true;
        try {
          const outcome = await api.applyImport(paths, secrets.move());
          const added = outcome.reload.added;
          const moved = outcome.secrets.length ? ` ${outcome.secrets.length} secret value${outcome.secrets.length === 1 ? '' : 's'} moved to the keychain.` : '';
          clear(preview, h('div', { class: 'ok-note', id: 'import-report' }, `Imported ${added.length} server${added.length === 1 ? '' : 's'}: ${added.join(', ') || 'none'}. ${counts(outcome.plan.items)}.${moved}`),
            planTable(outcome.plan.items), h('a', { class: 'button', href: '#/servers' }, 'See servers'));
        } catch (e) {
          go.disabled = false;
          preview.append(h('div', { class: 'error' }, errorText(e)));
        }
      });
      clear(preview, h('h2', {}, 'Preview'), h('p', {}, counts(plan.items),
        plan.whitelist.length ? `; not copied (add to the SSRF whitelist yourself only if you trust them): ${plan.whitelist.join(', ')}` : ''), planTable(plan.items), secrets.el, go);
    } catch (e) {
      clear(preview, h('div', { class: 'error' }, errorText(e)));
    }
  }

  const addPath = h('button', {}, 'Add file');
  addPath.addEventListener('click', () => { if (extra.value.trim()) { addSource(extra.value.trim(), 'File', true); extra.value = ''; } });
  clear(root, h('header', {}, h('h1', {}, 'Import from other clients')),
    h('p', { class: 'help' }, 'Servers already configured in Claude Desktop, Cursor, VS Code or nanobot. Nothing is written until you press Import.'),
    list, h('div', { class: 'toolbar' }, extra, addPath, h('button', { class: 'primary', 'data-action': 'preview', onclick: doPreview }, 'Preview')), preview);
  api.scanImports().then((sources) => {
    for (const s of sources) addSource(s.path, CLIENTS[s.client] || s.client, s.exists);
  }).catch((e) => list.append(h('div', { class: 'error' }, errorText(e))));
}
