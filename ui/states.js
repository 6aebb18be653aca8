// Server states, defined once (mirrors ServerState in src/supervisor/mod.rs).
export const STATES = Object.freeze({
  running: { label: 'running', tone: 'ok' },
  starting: { label: 'starting', tone: 'busy' },
  backoff: { label: 'retrying', tone: 'warn' },
  failed: { label: 'failed', tone: 'bad' },
  'needs sign-in': { label: 'needs sign-in', tone: 'warn' },
  stopped: { label: 'stopped', tone: 'off' },
});

export const isActive = (state) => state === 'running' || state === 'starting' || state === 'backoff';

export function badge(h, state) {
  const s = STATES[state] || { label: state, tone: 'off' };
  return h('span', { class: `badge ${s.tone}`, 'data-state': state }, s.label);
}
