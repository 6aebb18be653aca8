// Add server: from a preset, a custom stdio command / URL, a registry, or a bundle (.mcpb). "Test" connects once and lists
// the tools; "Save" writes the entry and starts it. Validation errors show next to the field.
import { h, clear, errorText, showFieldErrors } from '../dom.js';
import * as api from '../api.js';
import { renderRegistry } from './registry.js';
import { renderBundle } from './bundle.js';

const lines = (text) => text.split('\n').map((l) => l.trim()).filter(Boolean);

function pairs(text, sep) {
  const out = {};
  for (const line of lines(text)) {
    const i = line.indexOf(sep);
    if (i <= 0) throw { field: sep === '=' ? 'env' : 'headers', message: `"${line}" is not KEY${sep}VALUE` };
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

// Keys whose values go to the OS keychain by default (mirrors src/manage/secrets.rs).
const looksSecret = (k) => /TOKEN|KEY|SECRET|PASSWORD|PASSWD/i.test(k) || /^(proxy-)?authorization$/i.test(k);

// A "keep in keychain" keys input that follows the secret-looking keys of `source` (a KEY=value
// textarea) until the user edits it by hand.
function secretKeys(source, sep) {
  const el = h('input', { type: 'text', 'data-field': 'secretKeys', placeholder: 'keys whose values go to the OS keychain' });
  let touched = false;
  el.addEventListener('input', () => { touched = true; });
  source.addEventListener('input', () => {
    if (touched) return;
    const keys = lines(source.value).map((l) => l.slice(0, Math.max(0, l.indexOf(sep))).trim()).filter(looksSecret);
    el.value = keys.join(', ');
  });
  return el;
}

const keyList = (text) => text.split(/[,\s]+/).map((k) => k.trim()).filter(Boolean);

function field(label, input, help) {
  return h('div', { class: 'field' }, h('label', {}, label), input, help ? h('div', { class: 'help' }, help) : null);
}

// The shared Test / Save block; `build` returns {name, entry} or throws a field error.
function actions(form, build) {
  const out = h('div', { class: 'test-output' });
  const note = h('div', { class: 'form-note' });
  const busy = (b, ...buttons) => buttons.forEach((x) => { x.disabled = b; });
  const test = h('button', { 'data-action': 'test' }, 'Test');
  const save = h('button', { class: 'primary', 'data-action': 'save' }, 'Save');
  const attempt = async (fn) => {
    showFieldErrors(form, null);
    clear(note);
    busy(true, test, save);
    try {
      const { name, entry, secretFields } = await build();
      await fn(name, entry, secretFields || []);
    } catch (e) {
      showFieldErrors(form, e, note);
    } finally {
      busy(false, test, save);
    }
  };
  test.addEventListener('click', () => attempt(async (name, entry) => {
    clear(out, h('div', { class: 'help' }, 'Connecting…'));
    try {
      const r = await api.testServer(name, entry);
      clear(out, h('div', { class: 'ok-note' }, `Connected: ${r.tools.length} tools`),
        h('ul', { class: 'probe-tools' }, r.tools.map((t) => h('li', {}, h('code', {}, t.name), ' ', h('span', { class: 'desc' }, t.description || '')))));
    } catch (e) {
      clear(out);
      throw e;
    }
  }));
  save.addEventListener('click', () => attempt(async (name, entry, secretFields) => {
    const report = await api.saveServer(name, entry, false, secretFields);
    location.hash = `#/server/${encodeURIComponent(name)}`;
    return report;
  }));
  return h('div', {}, h('div', { class: 'toolbar' }, test, save), note, out);
}

function presetForm(preset, host) {
  const form = h('div', { class: 'form', 'data-preset': preset.id });
  const name = h('input', { type: 'text', value: preset.id, 'data-field': 'name' });
  const inputs = preset.inputs.map((i) => ({
    spec: i,
    el: h('input', { type: i.secret ? 'password' : 'text', 'data-field': i.key, placeholder: i.required ? 'required' : 'optional', autocomplete: 'off' }),
  }));
  const build = async () => {
    const values = Object.fromEntries(inputs.map(({ spec, el }) => [spec.key, el.value]));
    const entry = await api.instantiatePreset(preset.id, values);
    // Secret inputs are kept in the OS keychain on Save; the config gets ${secret:…}.
    const secretFields = inputs.filter(({ spec, el }) => spec.secret && el.value.trim())
      .map(({ spec }) => (spec.target.kind === 'env' ? `env.${spec.target.name}` : spec.target.kind === 'header' ? `headers.${spec.target.name}` : null))
      .filter(Boolean);
    return { name: name.value, entry, secretFields };
  };
  clear(host, clear(form,
    h('h2', {}, preset.title),
    h('p', {}, preset.description, ' ', h('a', { href: preset.docsUrl, target: '_blank', rel: 'noreferrer' }, 'Docs')),
    h('p', { class: 'help' }, preset.launcher.type === 'stdio'
      ? h('code', {}, [preset.launcher.command, ...preset.launcher.args].join(' '))
      : h('code', {}, preset.launcher.url)),
    field('Name', name),
    inputs.map(({ spec, el }) => field(`${spec.label}${spec.secret ? ' (secret)' : ''}`, el,
      spec.secret && spec.target.kind !== 'arg' ? `${spec.help} Kept in the OS keychain, not in the config file.` : spec.help)),
    actions(form, build)));
  name.focus();
}

function stdioForm(host) {
  const form = h('div', { class: 'form' });
  const el = {
    name: h('input', { type: 'text', 'data-field': 'name', placeholder: 'my-server' }),
    command: h('input', { type: 'text', 'data-field': 'command', placeholder: 'npx' }),
    args: h('textarea', { rows: 3, 'data-field': 'args', placeholder: 'one argument per line' }),
    env: h('textarea', { rows: 3, 'data-field': 'env', placeholder: 'KEY=value (values may be ${VAR})' }),
    cwd: h('input', { type: 'text', 'data-field': 'cwd', placeholder: 'optional working directory' }),
  };
  el.secretKeys = secretKeys(el.env, '=');
  const build = async () => {
    const entry = { type: 'stdio', command: el.command.value.trim(), args: lines(el.args.value) };
    const env = pairs(el.env.value, '=');
    if (Object.keys(env).length) entry.env = env;
    if (el.cwd.value.trim()) entry.cwd = el.cwd.value.trim();
    return { name: el.name.value, entry, secretFields: keyList(el.secretKeys.value).map((k) => `env.${k}`) };
  };
  clear(host, clear(form, h('h2', {}, 'Custom command (stdio)'),
    field('Name', el.name), field('Command', el.command), field('Arguments', el.args),
    field('Environment', el.env),
    field('Keep in keychain', el.secretKeys, 'Values of these keys go to the OS keychain on Save; the config gets ${secret:NAME}.'),
    field('Working directory', el.cwd), actions(form, build)));
}

function urlForm(host) {
  const form = h('div', { class: 'form' });
  const el = {
    name: h('input', { type: 'text', 'data-field': 'name', placeholder: 'docs' }),
    type: h('select', { 'data-field': 'type' }, h('option', { value: 'streamableHttp' }, 'Streamable HTTP'), h('option', { value: 'sse' }, 'SSE (legacy)')),
    url: h('input', { type: 'url', 'data-field': 'url', placeholder: 'https://mcp.example.com/mcp' }),
    headers: h('textarea', { rows: 3, 'data-field': 'headers', placeholder: 'Authorization: Bearer ${TOKEN}' }),
  };
  el.secretKeys = secretKeys(el.headers, ':');
  const build = async () => {
    const entry = { type: el.type.value, url: el.url.value.trim() };
    const headers = pairs(el.headers.value, ':');
    if (Object.keys(headers).length) entry.headers = headers;
    return { name: el.name.value, entry, secretFields: keyList(el.secretKeys.value).map((k) => `headers.${k}`) };
  };
  clear(host, clear(form, h('h2', {}, 'Remote server (URL)'),
    field('Name', el.name), field('Transport', el.type), field('URL', el.url), field('Headers', el.headers),
    field('Keep in keychain', el.secretKeys, 'Values of these headers go to the OS keychain on Save; the config gets ${secret:NAME}.'),
    actions(form, build)));
}

export function render(root, [tab, bundlePath] = []) {
  const grid = h('div', { class: 'presets' });
  const detail = h('div', { class: 'add-detail' });
  const featuredTab = h('button', { class: 'tab active', 'data-tab': 'featured' }, 'Featured');
  const registryTab = h('button', { class: 'tab', 'data-tab': 'registry' }, 'Registry');
  const bundleTab = h('button', { class: 'tab', 'data-tab': 'bundle' }, 'Bundle (.mcpb)');
  const layout = h('div', { class: 'add-layout' }, grid, detail);
  const registryList = h('div', {});
  const registryDetail = h('div', { class: 'add-detail' });
  const registryLayout = h('div', { class: 'add-layout', hidden: true }, registryList, registryDetail);
  const bundleList = h('div', {});
  const bundleDetail = h('div', { class: 'add-detail' });
  const bundleLayout = h('div', { class: 'add-layout', hidden: true }, bundleList, bundleDetail);
  let registryShown = false;
  let openBundle = null;
  const showTab = (which) => {
    featuredTab.classList.toggle('active', which === 'featured');
    registryTab.classList.toggle('active', which === 'registry');
    bundleTab.classList.toggle('active', which === 'bundle');
    layout.hidden = which !== 'featured';
    registryLayout.hidden = which !== 'registry';
    bundleLayout.hidden = which !== 'bundle';
    if (which === 'registry' && !registryShown) {
      registryShown = true;
      renderRegistry(registryList, registryDetail, actions, field);
    }
    if (which === 'bundle' && !openBundle) openBundle = renderBundle(bundleList, bundleDetail, field);
  };
  featuredTab.addEventListener('click', () => showTab('featured'));
  registryTab.addEventListener('click', () => showTab('registry'));
  bundleTab.addEventListener('click', () => showTab('bundle'));
  const select = (card, show) => {
    for (const c of root.querySelectorAll('.preset.selected')) c.classList.remove('selected');
    card.classList.add('selected');
    show();
  };
  clear(root, h('header', {}, h('h1', {}, 'Add server')), h('div', { class: 'tabs' }, featuredTab, registryTab, bundleTab), layout, registryLayout, bundleLayout);
  if (tab === 'bundle') {
    showTab('bundle');
    if (bundlePath) openBundle(bundlePath);
  }
  api.listPresets().then((presets) => {
    const cards = presets.map((p) => {
      const card = h('button', { class: 'preset', 'data-preset': p.id },
        h('strong', {}, p.title), h('span', { class: 'desc' }, p.description),
        h('span', { class: 'tags' }, p.launcher.type === 'stdio' ? p.launcher.command : 'remote',
          p.inputs.some((i) => i.secret && i.required) ? ' · needs a key' : ''));
      card.addEventListener('click', () => select(card, () => presetForm(p, detail)));
      return card;
    });
    const stdio = h('button', { class: 'preset custom', 'data-preset': 'custom-stdio' }, h('strong', {}, 'Custom command'), h('span', { class: 'desc' }, 'Any stdio MCP server: command, args, env, cwd'));
    stdio.addEventListener('click', () => select(stdio, () => stdioForm(detail)));
    const url = h('button', { class: 'preset custom', 'data-preset': 'custom-url' }, h('strong', {}, 'Custom URL'), h('span', { class: 'desc' }, 'A remote server: streamable HTTP or SSE, with headers'));
    url.addEventListener('click', () => select(url, () => urlForm(detail)));
    clear(grid, cards, stdio, url);
    clear(detail, h('p', { class: 'help' }, 'Pick a preset or a custom server.'));
  }).catch((e) => clear(grid, h('div', { class: 'error' }, errorText(e))));
}
