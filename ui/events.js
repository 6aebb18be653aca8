// The one owner of event listeners. Channels (emitted by src-tauri/src/events.rs):
//   servers-changed  payload: every server's status
//   tools-changed    no payload
//   elicitation-requested  payload: an open elicitation {id, server, message, mode, requestedSchema?, url?, host?, timeoutS}
//   elicitation-closed     payload: its id (answered, timed out, or withdrawn by the server)
//   approval-requested     payload: a call waiting for the person {id, server, tool, wrapped, agent?, agentVersion?, agentPid?, arguments, reason, timeoutS}
//   approval-closed        payload: its id (answered, timed out, or withdrawn by the agent)
//   bundle-opened    payload: a .mcpb path the app was opened with (src-tauri/src/open_file.rs)
//   tauri://drag-drop      payload: {paths, position} of files dropped on the window (Tauri's own)
// `on` returns an unsubscribe function; views call it when they go away.

export const CHANNELS = Object.freeze({
  serversChanged: 'servers-changed',
  toolsChanged: 'tools-changed',
  elicitationRequested: 'elicitation-requested',
  elicitationClosed: 'elicitation-closed',
  approvalRequested: 'approval-requested',
  approvalClosed: 'approval-closed',
  bundleOpened: 'bundle-opened',
  fileDropped: 'tauri://drag-drop',
});

const handlers = new Map(Object.values(CHANNELS).map((c) => [c, new Set()]));
let started = false;

function start() {
  if (started) return;
  started = true;
  for (const channel of handlers.keys()) {
    window.__TAURI__.event.listen(channel, (event) => {
      for (const handler of handlers.get(channel)) handler(event.payload);
    });
  }
}

export function on(channel, handler) {
  if (!handlers.has(channel)) throw new Error(`unknown channel ${channel}`);
  start();
  handlers.get(channel).add(handler);
  return () => handlers.get(channel).delete(handler);
}
