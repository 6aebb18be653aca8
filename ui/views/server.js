// Server detail: status, tool changes waiting for approval (the diff `mcp-companion trust`
// prints, one Approve button), tools with descriptions and schema, a "try it" form, live
// stderr tail.
import { h, clear, errorText } from '../dom.js';
import { on, CHANNELS } from '../events.js';
import { badge, isActive } from '../states.js';
import { schemaForm, renderResult } from '../schema-form.js';
import * as api from '../api.js';

const LOG_POLL_MS = 1000;

// A tool's call policy (toolPolicy in the config; docs/src/trust.md, "Approval of calls"):
// "default" removes the tool's key, so it takes the default from its annotations.
function policyControl(server, tool) {
  if (!tool.upstream) return null;
  const note = h('span', { class: 'help' });
  const select = h('select', { 'data-field': 'policy', 'aria-label': `Calls of ${tool.upstream}` },
    ...['allow', 'ask', 'deny'].map((p) => h('option', { value: p }, p)),
    h('option', { value: 'default' }, 'default (from annotations)'));
  select.value = tool.policySource === 'config' ? tool.policy : 'default';
  const said = () => (tool.policySource === 'config' ? '' : `now ${tool.policy}, from the tool's annotations`);
  note.textContent = said();
  select.addEventListener('change', async () => {
    select.disabled = true;
    try {
      await api.setToolPolicy(server, tool.upstream, select.value);
      note.textContent = 'saved';
    } catch (e) {
      note.textContent = errorText(e);
    } finally {
      select.disabled = false;
    }
  });
  return h('div', { class: 'policy' }, h('h4', {}, 'Calls'), select, ' ', note);
}

function toolCard(tool, server) {
  const form = schemaForm(tool.inputSchema);
  const out = h('div', { class: 'tool-output' });
  const run = h('button', { class: 'primary', 'data-action': 'run' }, 'Run');
  run.addEventListener('click', async () => {
    run.disabled = true;
    clear(out, h('div', { class: 'help' }, 'Calling…'));
    try {
      clear(out, renderResult(await api.callTool(tool.name, form.read())));
    } catch (e) {
      clear(out, h('div', { class: 'error' }, errorText(e)));
    } finally {
      run.disabled = false;
    }
  });
  return h('details', { class: 'tool', 'data-tool': tool.name },
    h('summary', {}, h('code', {}, tool.name), h('span', { class: 'desc' }, tool.description || '')),
    h('div', { class: 'tool-body' },
      h('div', { class: 'cols' },
        h('div', {}, policyControl(server, tool), h('h4', {}, 'Try it'), form.element, run, out),
        h('div', {}, h('h4', {}, 'Input schema'), h('pre', { class: 'schema' }, JSON.stringify(tool.inputSchema, null, 2))))));
}

// The changes of `name` that wait for approval: the core's diff lines as text, and one button
// that approves them all (as `mcp-companion trust NAME`).
async function showChanges(section, name, reload) {
  let pending;
  try {
    pending = (await api.listChanges(name))[0];
  } catch (e) {
    clear(section, h('div', { class: 'error' }, errorText(e)));
    return;
  }
  if (!pending || !pending.changes.length) {
    clear(section);
    return;
  }
  const note = h('p', { class: 'help' });
  const approve = h('button', { class: 'primary', 'data-action': 'approve-changes' }, 'Approve');
  approve.addEventListener('click', async () => {
    approve.disabled = true;
    try {
      // Only what is on screen: a change that changed again since stays waiting.
      const done = await api.approveChanges(name, pending.changes.map((c) => c.fingerprint));
      const n = done.reduce((sum, s) => sum + s.changes.length, 0);
      clear(section, h('p', { class: 'help', id: 'changes-approved' },
        `Approved ${n} change${n === 1 ? '' : 's'}; agents were told the tool list changed.`));
      reload();
    } catch (e) {
      clear(note, h('span', { class: 'error' }, errorText(e)));
      approve.disabled = false;
    }
  });
  clear(section,
    h('div', { class: 'notice warn', id: 'pending-changes' },
      h('h2', {}, 'Changes waiting for your approval'),
      h('p', {}, 'This server changed or added these since you approved its tools. Agents do not see them until you approve.'),
      h('pre', { class: 'diff' }, pending.changes.flatMap((c) => c.lines).join('\n')),
      approve, note));
}

/** Prefix of the line the core writes into a server's stderr log when a new process starts. */
const PROCESS_MARKER = '── process ';

export function render(root, [name]) {
  const head = h('header');
  const changes = h('section', { class: 'changes' });
  const tools = h('section', { class: 'tools' });
  const log = h('pre', { class: 'log', id: 'log' });
  const signInNote = h('p', { class: 'note', id: 'sign-in-note' });
  let since = 0;
  let shownTools = '';
  let timer = null;

  // OAuth: the browser opens; the server restarts by itself once signed in. Without a browser
  // the URL is shown to open by hand.
  async function signIn() {
    try {
      const started = await api.signInServer(name);
      if (!started.browserOpened) {
        clear(signInNote, 'Open this address in a browser to sign in: ', h('code', {}, started.url));
      } else {
        clear(signInNote, 'Finish the sign-in in your browser.');
      }
    } catch (e) {
      clear(signInNote, h('span', { class: 'error' }, errorText(e)));
    }
  }

  async function load() {
    try {
      const d = await api.getServer(name);
      const s = d.status;
      const toggle = s.state === 'needs sign-in'
        ? h('button', { class: 'primary', id: 'sign-in', onclick: () => signIn() }, 'Sign in')
        : isActive(s.state)
          ? h('button', { onclick: () => api.stopServer(name).then(load) }, 'Stop')
          : h('button', { class: 'primary', onclick: () => api.startServer(name).then(load) }, 'Start');
      clear(head,
        h('h1', {}, h('a', { href: '#/servers', class: 'crumb' }, 'Servers'), ' / ', name, ' ', badge(h, s.state)),
        h('div', { class: 'toolbar' }, toggle, h('button', { onclick: () => api.restartServer(name).then(load) }, 'Restart')),
        s.state === 'needs sign-in' ? signInNote : null,
        h('dl', { class: 'facts' },
          h('dt', {}, 'Transport'), h('dd', {}, s.transport),
          h('dt', {}, 'Tools'), h('dd', {}, String(d.tools.length)),
          s.pid ? [h('dt', {}, 'PID'), h('dd', {}, String(s.pid))] : null,
          h('dt', {}, 'Restarts'), h('dd', {}, String(s.restarts)),
          s.lastError ? lastError(s) : null,
          h('dt', {}, 'Entry'), h('dd', {}, h('code', { class: 'entry' }, JSON.stringify(d.entry)))));
      if (s.waitingApproval) showChanges(changes, name, load);
      else if (changes.querySelector('#pending-changes')) clear(changes);
      const key = JSON.stringify(d.tools.map((t) => t.name));
      if (key !== shownTools) {
        shownTools = key;
        clear(tools, h('h2', {}, `Tools (${d.tools.length})`),
          d.tools.length ? d.tools.map((t) => toolCard(t, name)) : h('p', { class: 'help' }, s.state === 'running' ? 'This server offers no tools.' : 'Start the server to see its tools.'));
      }
    } catch (e) {
      clear(head, h('h1', {}, name), h('div', { class: 'error' }, errorText(e)));
    }
  }

  async function tail() {
    try {
      const chunk = await api.readLog(name, since);
      since = chunk.next;
      if (chunk.lines.length) {
        appendLog(log, chunk.lines);
        log.scrollTop = log.scrollHeight;
      }
    } catch (_) { /* the server was removed: the next load shows why */ }
    timer = setTimeout(tail, LOG_POLL_MS);
  }

  clear(root, head, changes, tools, h('section', {}, h('h2', {}, 'stderr (live)'), log));
  load();
  tail();
  const offServers = on(CHANNELS.serversChanged, load);
  const offTools = on(CHANNELS.toolsChanged, load);
  return () => { offServers(); offTools(); clearTimeout(timer); };
}

// The last error, marked as older when the server runs again since (a new process started
// after it failed), so a running server never shows an old error as if it were current.
function lastError(s) {
  const current = !['running', 'starting'].includes(s.state);
  return current
    ? [h('dt', {}, 'Last error'), h('dd', { class: 'error' }, s.lastError)]
    : [h('dt', {}, 'Earlier error'), h('dd', { class: 'older', title: 'from an earlier process' }, s.lastError)];
}

// Appends stderr lines; at each "── process N started ──" marker everything shown so far is
// dimmed as the output of an earlier process.
function appendLog(log, lines) {
  for (const line of lines) {
    if (line.startsWith(PROCESS_MARKER)) {
      for (const old of log.children) old.classList.add('older');
    }
    log.append(h('span', {}, line + '\n'));
  }
}

