// Settings: SSRF whitelist (validated CIDRs), start at login, log level.
import { h, clear, errorText, showFieldErrors } from '../dom.js';
import * as api from '../api.js';

export function render(root) {
  clear(root, h('header', {}, h('h1', {}, 'Settings')));
  api.getSettings().then((s) => {
    const form = h('div', { class: 'form' });
    const whitelist = h('textarea', { rows: 5, id: 'whitelist', 'data-field': 'ssrfWhitelist', placeholder: '10.0.0.0/8\n127.0.0.1' }, s.ssrfWhitelist.join('\n'));
    const note = h('div', { class: 'form-note' });
    const save = h('button', { class: 'primary', 'data-action': 'save-whitelist' }, 'Save whitelist');
    save.addEventListener('click', async () => {
      showFieldErrors(form, null);
      clear(note);
      try {
        const saved = await api.saveWhitelist(whitelist.value.split('\n'));
        whitelist.value = saved.join('\n');
        clear(note, h('span', { class: 'ok-note' }, `Saved ${saved.length} entr${saved.length === 1 ? 'y' : 'ies'}`));
      } catch (e) {
        showFieldErrors(form, e, note);
      }
    });
    const autostart = h('input', { type: 'checkbox', id: 'autostart', checked: s.autostart === true, disabled: s.autostart === null });
    const autoNote = h('span', { class: 'help' }, s.autostart === null ? ' not available on this system' : '');
    autostart.addEventListener('change', async () => {
      try {
        autostart.checked = await api.setAutostart(autostart.checked);
        clear(autoNote);
      } catch (e) {
        autostart.checked = !autostart.checked;
        clear(autoNote, h('span', { class: 'error' }, ` ${errorText(e)}`));
      }
    });
    const level = h('select', { id: 'log-level' }, s.logLevels.map((l) => h('option', { value: l, selected: l === s.logLevel }, l)));
    const levelNote = h('span', { class: 'help' });
    level.addEventListener('change', () => api.setLogLevel(level.value)
      .then(() => clear(levelNote, ' applied'))
      .catch((e) => clear(levelNote, h('span', { class: 'error' }, ` ${errorText(e)}`))));
    clear(form,
      h('h2', {}, 'SSRF whitelist'),
      h('p', { class: 'help' }, 'Networks remote servers may reach even though they are private or loopback. One CIDR or address per line.'),
      whitelist, save, note,
      h('h2', {}, 'Start at login'),
      h('label', {}, autostart, ' Start MCP Companion when I log in'), autoNote,
      h('h2', {}, 'Log level'),
      h('div', {}, level, levelNote),
      h('h2', {}, 'Config file'),
      h('p', {}, h('code', {}, s.configPath), h('span', { class: 'help' }, ' — shared with the mcp-companion CLI; saved atomically with a .bak copy')));
    root.append(form);
  }).catch((e) => root.append(h('div', { class: 'error' }, errorText(e))));
}
