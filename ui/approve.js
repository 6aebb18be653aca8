// Calls waiting for the person's approval (a tool whose policy is `ask`;
// src-tauri/src/approve.rs): one card per call, over whatever page is shown, with the tool,
// the agent, the server and the arguments (masked by the companion, shown as text).
// Allow once runs this call; Always allow runs it and writes `allow` for the tool into the
// config; Deny gives the agent an error saying the person declined.
import { h, clear, errorText } from './dom.js';
import { on, CHANNELS } from './events.js';
import * as api from './api.js';

const root = document.getElementById('approvals');
const cards = new Map();

function remove(id) {
  const card = cards.get(id);
  if (card) card.remove();
  cards.delete(id);
  root.hidden = cards.size === 0;
}

function agentText(ask) {
  const name = ask.agent || 'An agent';
  return ask.agentPid ? `${name} (process ${ask.agentPid})` : name;
}

function card(ask) {
  const errors = h('div', { class: 'elicit-errors' });
  const el = h('section', { class: 'elicitation approval', 'data-id': String(ask.id), 'data-server': ask.server, 'data-tool': ask.tool });
  const buttons = [];
  const answer = async (choice) => {
    for (const b of buttons) b.disabled = true;
    try {
      await api.answerApproval(ask.id, choice);
      remove(ask.id);
    } catch (e) {
      clear(errors, h('div', { class: 'field-error' }, errorText(e)));
      for (const b of buttons) b.disabled = false;
    }
  };
  const once = h('button', { class: 'primary', 'data-action': 'once', onclick: () => answer('once') }, 'Allow once');
  const always = h('button', { 'data-action': 'always', onclick: () => answer('always') }, 'Always allow');
  const deny = h('button', { 'data-action': 'deny', onclick: () => answer('deny') }, 'Deny');
  buttons.push(once, always, deny);
  const why = ask.reason === 'policy'
    ? 'Its policy is “ask”.'
    : 'The server marks it destructive.';
  return clear(el,
    h('h2', {}, h('span', { class: 'agent' }, agentText(ask)), ' wants to run ', h('span', { class: 'tool' }, ask.tool)),
    h('p', {}, 'Server ', h('strong', { class: 'server' }, ask.server), `. ${why}`),
    h('pre', { class: 'arguments message' }, ask.arguments),
    errors,
    h('div', { class: 'toolbar' }, once, always, deny),
    h('div', { class: 'help' }, `Unanswered after ${ask.timeoutS} s it is denied. Always allow sets this tool to “allow” in the config.`));
}

function show(ask) {
  if (cards.has(ask.id)) return;
  const el = card(ask);
  cards.set(ask.id, el);
  root.append(el);
  root.hidden = false;
}

export function start() {
  on(CHANNELS.approvalRequested, show);
  on(CHANNELS.approvalClosed, remove);
  api.listApprovals().then((open) => open.forEach(show)).catch(() => {});
}
