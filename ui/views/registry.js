// Add server → Registry tab: search a registry, page through results, show one server's
// details, fill its inputs, then Test (probe) and Save like any other entry.
import { h, clear, errorText } from '../dom.js';
import * as api from '../api.js';

function transports(s) {
  return [...(s.packages || []).map((p) => p.registryType), ...(s.remotes || []).map((r) => r.type)].join(', ');
}

// One form input for an install field (registry inputs, bundle user_config).
export function inputFor(f) {
  const attrs = { 'data-field': f.key, autocomplete: 'off', placeholder: f.placeholder || (f.required ? 'required' : 'optional') };
  if (f.choices.length) {
    return h('select', attrs, f.required ? null : h('option', { value: '' }, '—'),
      f.choices.map((c) => h('option', { value: c, selected: c === f.default ? true : null }, c)));
  }
  if (f.format === 'boolean') {
    return h('select', attrs, h('option', { value: '' }, '—'), h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
  }
  return h('input', { ...attrs, type: f.secret ? 'password' : (f.format === 'number' ? 'number' : 'text'), value: f.default || '' });
}

function detailsPane(host, registry, name, version, actions, field) {
  clear(host, h('p', { class: 'help' }, 'Loading…'));
  api.registryDetails(registry, name, version).then((d) => {
    const s = d.found.server;
    const form = h('div', { class: 'form', 'data-registry-server': s.name });
    const serverName = h('input', { type: 'text', value: d.server, 'data-field': 'name' });
    const versionSel = h('select', { 'data-field': 'version' }, d.versions.map((v) => h('option', { value: v, selected: v === s.version ? true : null }, v)));
    versionSel.addEventListener('change', () => detailsPane(host, registry, name, versionSel.value, actions, field));
    const optionSel = h('select', { 'data-field': 'option' }, d.options.map((o, i) => h('option', {
      value: String(i), disabled: o.unsupported ? true : null,
      selected: d.choice && o.choice.kind === d.choice.kind && o.choice.index === d.choice.index ? true : null,
    }, o.label + (o.unsupported ? ` (unsupported: ${o.unsupported})` : ''))));
    const inputs = d.fields.map((f) => ({ f, el: inputFor(f) }));
    const notes = h('div', { class: 'install-notes' });
    const build = async () => {
      const values = Object.fromEntries(inputs.map(({ f, el }) => [f.key, el.value]));
      const option = d.options[Number(optionSel.value)];
      const planned = await api.planInstall(registry, s.name, versionSel.value, option ? option.choice : null, serverName.value, values);
      clear(notes, planned.warnings.map((w) => h('div', { class: 'help' }, `Note: ${w}`)),
        planned.built.exports.length ? h('div', { class: 'help', 'data-exports': '' },
          `No keychain: secrets are read from the environment at start. Set ${planned.built.exports.join(', ')} where the app starts.`) : null);
      return { name: planned.server, entry: planned.entry };
    };
    clear(host, clear(form,
      h('h2', {}, s.title || s.name),
      h('p', {}, s.description),
      h('p', { class: 'help' }, h('code', {}, s.name), s.websiteUrl ? [' · ', h('a', { href: s.websiteUrl, target: '_blank', rel: 'noreferrer' }, 'Website')] : null,
        s.repository && s.repository.url ? [' · ', h('a', { href: s.repository.url, target: '_blank', rel: 'noreferrer' }, 'Source')] : null),
      field('Name', serverName), field('Version', versionSel), field('Install as', optionSel),
      inputs.map(({ f, el }) => field(`${f.key}${f.required ? ' *' : ''}${f.secret ? ' (secret)' : ''}`, el,
        [f.description || '', ' → ', f.target, f.secret ? ' · kept out of the config file' : ''])),
      notes, actions(form, build)));
  }).catch((e) => clear(host, h('div', { class: 'error' }, errorText(e))));
}

// Servers installed from a registry, with "update available" and an Update button.
function updatesPanel(host) {
  api.checkUpdates().then((items) => {
    if (!items.length) return clear(host);
    const rows = items.map((o) => {
      const state = o.error ? h('span', { class: 'error' }, o.error)
        : o.updateAvailable ? h('span', { class: 'badge warn' }, `update available: ${o.latest}`)
          : h('span', { class: 'badge ok' }, 'up to date');
      const button = o.updateAvailable ? h('button', { 'data-update': o.server }, 'Update') : null;
      if (button) {
        button.addEventListener('click', async () => {
          button.disabled = true;
          try {
            try {
              await api.updateServer(o.server);
            } catch (e) {
              // A new origin: the person decides whether the inputs and secrets go there.
              if (!e || e.kind !== 'moved' || !window.confirm(`${e.message}. Update anyway?`)) throw e;
              await api.updateServer(o.server, true);
            }
            updatesPanel(host);
          } catch (e) {
            button.after(h('span', { class: 'error' }, ` ${errorText(e)}`));
          }
        });
      }
      const moves = (o.moves || []).map((m) => h('div', { class: m.what === 'origin' ? 'error' : 'help', 'data-moves': m.what }, `moves ${m.what}: ${m.from} → ${m.to}`));
      return h('tr', { 'data-installed': o.server }, h('td', {}, o.server), h('td', {}, h('code', {}, `${o.source.name}@${o.source.version}`)), h('td', {}, state, ' ', button, moves));
    });
    clear(host, h('h3', {}, 'Installed from registries'), h('table', { class: 'updates' }, rows));
  }).catch((e) => clear(host, h('div', { class: 'error' }, errorText(e))));
}

export function renderRegistry(list, detail, actions, field) {
  const term = h('input', { type: 'text', id: 'registry-search', placeholder: 'Search servers by name' });
  const go = h('button', { class: 'primary', id: 'registry-go' }, 'Search');
  const registrySel = h('select', { id: 'registry-pick' });
  const results = h('div', { class: 'registry-results' });
  const pager = h('div', { class: 'toolbar' });
  const cursors = [];
  // Only the newest search draws: the opening listing may answer after one the person typed.
  let latest = 0;
  const search = (cursor) => {
    const mine = ++latest;
    clear(results, h('p', { class: 'help' }, 'Searching…'));
    api.searchRegistry(registrySel.value || null, term.value.trim(), cursor).then((page) => {
      if (mine !== latest) return;
      const items = page.servers.map((r) => {
        const s = r.server;
        const card = h('div', { class: 'preset registry-result', role: 'button', tabindex: '0', 'data-registry-name': s.name },
          h('strong', {}, s.title || s.name), h('span', { class: 'desc' }, s.description),
          h('span', { class: 'tags' }, `${transports(s)} · ${s.version}`));
        card.addEventListener('keydown', (e) => { if (e.key === 'Enter') card.click(); });
        card.addEventListener('click', () => {
          for (const c of results.querySelectorAll('.preset.selected')) c.classList.remove('selected');
          card.classList.add('selected');
          detailsPane(detail, registrySel.value || null, s.name, null, actions, field);
        });
        return card;
      });
      clear(results, items.length ? items : h('p', { class: 'help' }, 'No servers match.'),
        page.skipped && page.skipped.length ? h('p', { class: 'help' }, `${page.skipped.length} malformed entries skipped`) : null);
      const prev = h('button', { disabled: cursors.length ? null : true }, 'Previous');
      prev.addEventListener('click', () => { cursors.pop(); search(cursors[cursors.length - 1]); });
      const nextCursor = page.metadata && page.metadata.nextCursor;
      const next = h('button', { id: 'registry-next', disabled: nextCursor ? null : true }, 'Next');
      next.addEventListener('click', () => { cursors.push(nextCursor); search(nextCursor); });
      clear(pager, prev, next);
    }).catch((e) => { if (mine === latest) clear(results, h('div', { class: 'error' }, errorText(e))); });
  };
  go.addEventListener('click', () => { cursors.length = 0; search(null); });
  term.addEventListener('keydown', (e) => { if (e.key === 'Enter') go.click(); });
  registrySel.addEventListener('change', () => { cursors.length = 0; search(null); });
  // The first page of the registry is shown before anything is typed.
  api.listRegistries().then((regs) => clear(registrySel, regs.map((r) => h('option', { value: r.name }, `${r.name} (${r.url})`))))
    .catch(() => {})
    .then(() => { if (latest === 0) search(null); });
  const updates = h('div', { class: 'registry-updates' });
  clear(list, h('div', { class: 'toolbar' }, term, go, registrySel), results, pager, updates);
  updatesPanel(updates);
  clear(detail, h('p', { class: 'help' }, 'Pick a server, or search the registry by name.'));
}
