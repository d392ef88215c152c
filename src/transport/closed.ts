/**
 * Connections the service closed on its own, by why (the metrics read it): `send_timeout`, its client
 * took nothing of an answer for SEND_TIMEOUT_MS; `idle`, nothing was asked on it for that long or,
 * kept alive, for KEEPALIVE_TIMEOUT_MS; `evicted`, idle while another connection of its address needed
 * its place (idle.ts).
 */
export const closedConnections = { send_timeout: 0, idle: 0, evicted: 0 };
