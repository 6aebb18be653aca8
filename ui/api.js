// Every Tauri command the window uses, one function each (camelCase of the Rust `verb_noun`).
// Errors reject with {kind, message, field?} (src-tauri/src/error.rs).

const invoke = (cmd, args = {}) => window.__TAURI__.core.invoke(cmd, args);

export const listServers = () => invoke('list_servers');
export const listAgents = () => invoke('list_agents');
export const setAgentProfile = (id, profile) => invoke('set_agent_profile', { id, profile });
export const configWarnings = () => invoke('config_warnings');
export const startServer = (name) => invoke('start_server', { name });
export const stopServer = (name) => invoke('stop_server', { name });
export const restartServer = (name) => invoke('restart_server', { name });
export const signInServer = (name) => invoke('sign_in_server', { name });
export const startAll = () => invoke('start_all');
export const stopAll = () => invoke('stop_all');
export const removeServer = (name) => invoke('remove_server', { name });
export const getServer = (name) => invoke('get_server', { name });
export const readLog = (name, since) => invoke('read_log', { name, since });
export const callTool = (name, args) => invoke('call_tool', { name, arguments: args });
export const setToolPolicy = (name, tool, policy) => invoke('set_tool_policy', { name, tool, policy });
export const listElicitations = () => invoke('list_elicitations');
export const answerElicitation = (id, action, content) => invoke('answer_elicitation', { id, action, content });
export const listApprovals = () => invoke('list_approvals');
export const answerApproval = (id, answer) => invoke('answer_approval', { id, answer });

export const listPresets = () => invoke('list_presets');
export const instantiatePreset = (id, inputs) => invoke('instantiate_preset', { id, inputs });
export const testServer = (name, entry) => invoke('test_server', { name, entry });
export const saveServer = (name, entry, replace = false, secretFields = []) => invoke('save_server', { name, entry, replace, secretFields });

export const scanImports = () => invoke('scan_imports');
export const previewImport = (paths) => invoke('preview_import', { paths });
export const applyImport = (paths, moveSecrets = false) => invoke('apply_import', { paths, moveSecrets });
export const previewImportSecrets = (paths) => invoke('preview_import_secrets', { paths });

export const getConnectInfo = () => invoke('get_connect_info');
export const getSettings = () => invoke('get_settings');
export const saveWhitelist = (entries) => invoke('save_whitelist', { entries });
export const setLogLevel = (level) => invoke('set_log_level', { level });
export const setAutostart = (enabled) => invoke('set_autostart', { enabled });

export const listRegistries = () => invoke('list_registries');
export const searchRegistry = (registry, term, cursor) => invoke('search_registry', { registry, term, cursor });
export const registryDetails = (registry, name, version) => invoke('registry_details', { registry, name, version });
export const planInstall = (registry, name, version, choice, server, values) => invoke('plan_install', { registry, name, version, choice, server, values });
export const listClients = () => invoke('list_clients');
export const connectClient = (id, importServers) => invoke('connect_client', { id, import: importServers });
export const disconnectClient = (id) => invoke('disconnect_client', { id });
export const checkUpdates = () => invoke('check_updates');
export const updateServer = (name, acceptNewOrigin = false) => invoke('update_server', { name, acceptNewOrigin });

export const openBundle = (path) => invoke('open_bundle', { path });
export const receiveBundle = (name, bytes) => invoke('receive_bundle', { name, bytes });
export const installBundle = (path, server, values) => invoke('install_bundle', { path, server, values });
export const takeOpenedBundle = () => invoke('take_opened_bundle');

export const listChanges = (name) => invoke('list_changes', { name });
export const approveChanges = (name, fingerprints) => invoke('approve_changes', { name, fingerprints });
