// A stack of request cards over whatever page is shown (elicitations, call approvals): one card
// per open request, keyed by its id, shown once, and removed when answered here or closed by the
// companion (answered elsewhere, timed out, withdrawn). The open requests are listed once at
// start, so a card raised before the window opened is shown too.
import { h, clear, errorText } from './dom.js';
import { on } from './events.js';

// `build(request, answering)` returns the card's element; `answering(buttons, errors, send)`
// gives the click handler that sends one answer (see below) and removes the card when it lands.
export function cardStack(root, { requested, closed, list, build }) {
  const cards = new Map();
  const remove = (id) => {
    const card = cards.get(id);
    if (card) card.remove();
    cards.delete(id);
    root.hidden = cards.size === 0;
  };
  const show = (request) => {
    if (cards.has(request.id)) return;
    const answering = (buttons, errors, send) => async (...answer) => {
      for (const b of buttons) b.disabled = true;
      try {
        await send(...answer);
        remove(request.id);
      } catch (e) {
        clear(errors, h('div', { class: 'field-error' }, errorText(e)));
        for (const b of buttons) b.disabled = false;
      }
    };
    const el = build(request, answering);
    cards.set(request.id, el);
    root.append(el);
    root.hidden = false;
  };
  return {
    start() {
      on(requested, show);
      on(closed, remove);
      list().then((open) => open.forEach(show)).catch(() => {});
    },
  };
}
