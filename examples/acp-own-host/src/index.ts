/**
 * `@planmode/acp` serving a host of one's own: `examples/own-host`, written
 * without `@planmode/host`, reached by ACP clients through two small ports.
 *
 * @packageDocumentation
 */
export { ownHostPorts } from './acp-ports.js'
