// Calls waiting for the person's approval (a tool whose policy is `ask`;
// src-tauri/src/approve.rs): one card per call (cards.js), with the tool, the agent, the server
// and the arguments (masked by the companion, shown as text): a preview of at most 1 KiB, and,
// when that was cut, the whole arguments in a section the person opens.
// Allow once runs this call; Always allow runs it and writes `allow` for the tool into the
// config; Deny gives the agent an error saying the person declined.
import { h, clear } from './dom.js';
import { CHANNELS } from './events.js';
import { cardStack } from './cards.js';
import * as api from './api.js';

function agentText(ask) {
  const name = ask.agent || 'An agent';
  return ask.agentPid ? `${name} (process ${ask.agentPid})` : name;
}

// The whole arguments, closed until opened; nothing when the preview is already whole.
function wholeArguments(ask) {
  if (!ask.argumentsFull) return null;
  return h('details', { class: 'arguments-full' },
    h('summary', {}, `Show all arguments (${ask.argumentsFull.length} characters)`),
    h('pre', { class: 'arguments message' }, ask.argumentsFull));
}

function card(ask, answering) {
  const errors = h('div', { class: 'elicit-errors' });
  const el = h('section', { class: 'elicitation approval', 'data-id': String(ask.id), 'data-server': ask.server, 'data-tool': ask.tool });
  const buttons = [];
  const answer = answering(buttons, errors, (choice) => api.answerApproval(ask.id, choice));
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
    wholeArguments(ask),
    errors,
    h('div', { class: 'toolbar' }, once, always, deny),
    h('div', { class: 'help' }, `Unanswered after ${ask.timeoutS} s it is denied. Always allow sets this tool to “allow” in the config.`));
}

const stack = cardStack(document.getElementById('approvals'), {
  requested: CHANNELS.approvalRequested,
  closed: CHANNELS.approvalClosed,
  list: api.listApprovals,
  build: card,
});

export const start = stack.start;
