// Elicitations put to the person (a server's elicitation/create that no calling agent could
// answer; src-tauri/src/elicit.rs): one card per open request (cards.js).
// Form mode renders `requestedSchema` (schema-form.js) and validates it before Accept; url mode
// shows the URL and its host, and the browser opens only when the person clicks Open.
// Accept / Decline / Cancel are the MCP actions; the server's message is shown as text.
import { h, clear, showFieldErrors } from './dom.js';
import { CHANNELS } from './events.js';
import { schemaForm } from './schema-form.js';
import { cardStack } from './cards.js';
import * as api from './api.js';

function card(req, answering) {
  const isUrl = req.mode === 'url';
  const form = isUrl ? null : schemaForm(req.requestedSchema, `elicit-${req.id}`);
  const errors = h('div', { class: 'elicit-errors' });
  const el = h('section', { class: 'elicitation', 'data-id': String(req.id), 'data-server': req.server, 'data-mode': req.mode });
  // An edit takes the previous Accept's complaints away; the next Accept checks again.
  el.addEventListener('input', () => showFieldErrors(el, null, errors));
  el.addEventListener('change', () => showFieldErrors(el, null, errors));
  const buttons = [];
  const answer = answering(buttons, errors, (action, content) => api.answerElicitation(req.id, action, content));
  const accept = h('button', { class: 'primary', 'data-action': 'accept', onclick: () => {
    if (isUrl) return answer('accept');
    let values;
    try {
      values = form.read();
    } catch (e) {
      showFieldErrors(el, e, errors);
      return undefined;
    }
    showFieldErrors(el, null, errors);
    return answer('accept', values);
  } }, isUrl ? 'Open in browser' : 'Accept');
  const decline = h('button', { 'data-action': 'decline', onclick: () => answer('decline') }, 'Decline');
  const cancel = h('button', { class: 'ghost', 'data-action': 'cancel', onclick: () => answer('cancel') }, 'Cancel');
  buttons.push(accept, decline, cancel);
  const body = isUrl
    ? h('div', { class: 'elicit-url' },
      h('p', {}, 'The server asks you to open this page:'),
      h('pre', { class: 'url' }, req.url),
      h('p', {}, 'Host: ', h('strong', { class: 'host' }, req.host)))
    : form.element;
  return clear(el,
    h('h2', {}, h('span', { class: 'server' }, req.server), ' asks'),
    h('p', { class: 'message' }, req.message),
    body,
    errors,
    h('div', { class: 'toolbar' }, accept, decline, cancel),
    h('div', { class: 'help' }, `Unanswered after ${req.timeoutS} s it is cancelled. Decline tells the server no; Cancel dismisses without answering.`));
}

const stack = cardStack(document.getElementById('elicitations'), {
  requested: CHANNELS.elicitationRequested,
  closed: CHANNELS.elicitationClosed,
  list: api.listElicitations,
  build: card,
});

export const start = stack.start;
